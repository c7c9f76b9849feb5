#pragma once
// Small helpers over the HDF5 C API shared by mesh output and checkpoints: owning handles,
// attributes, and writing/reading one rank's block of an (nx, ny, k) dataset. No function here
// prints or throws on an HDF5 failure: they return false (or an empty value) and the caller
// agrees on the verdict with the other ranks before anyone raises an error.
#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace beatnik::io {

// How the ranks write HDF5: one shared file through MPI-IO (parallel HDF5 only), or every rank
// its own block (mesh output: one file per rank; checkpoints: ranks take turns on one file).
enum class Hdf5Mode { Collective, Blocks };

// Was beatnik built against a parallel (MPI-IO) HDF5?
bool parallel_hdf5_built();
const char* to_string(Hdf5Mode m);
// "auto" -> Collective where parallel HDF5 is built, else Blocks; "collective" | "blocks".
// Returns false for an unknown name; sets `why` when the name is valid but not in this build.
bool parse_hdf5_mode(const std::string& name, Hdf5Mode& mode, std::string& why);

// Call before MPI_Init. Open MPI 4.1's default MPI-IO collective-write selection (OMPIO) was
// seen to corrupt HDF5 collective writes here (Debian 12, Open MPI 4.1.4; tests/io catches it):
// unless the user chose an fcoll/io component, pin OMPIO's collective algorithm to dynamic_gen2.
void prefer_safe_mpi_io();

// Silences HDF5's own error printing (errors are reported by beatnik, once, on rank 0).
void quiet_hdf5();

// An hid_t closed with its own close function.
class H5Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  H5Handle() = default;
  H5Handle(hid_t id, Closer c) : id_(id), close_(c) {}
  H5Handle(H5Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  H5Handle& operator=(H5Handle&& o) noexcept {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = -1;
    return *this;
  }
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  ~H5Handle() { reset(); }
  // Closes now; false if closing failed (for files: data not flushed).
  bool reset() {
    bool ok = true;
    if (id_ >= 0 && close_) ok = close_(id_) >= 0;
    id_ = -1;
    return ok;
  }
  hid_t get() const { return id_; }
  explicit operator bool() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

// One rank's owned box of the global nx x ny node grid.
struct BlockBox {
  int nx = 0, ny = 0;        // global nodes
  int i0 = 0, j0 = 0;        // first owned node
  int ni = 0, nj = 0;        // owned extent
  long count() const { return long(ni) * nj; }
};

// File creation/opening. `comm` non-null (and parallel HDF5 built): MPI-IO, collective.
H5Handle create_file(const std::string& path, MPI_Comm comm = MPI_COMM_NULL);
H5Handle open_file(const std::string& path, bool write, MPI_Comm comm = MPI_COMM_NULL);
// A transfer property list: collective MPI-IO when `collective`, else default.
H5Handle transfer_list(bool collective);

// Dataset of doubles (or int32 when `int32`) shaped (d0, d1[, k]) (k = 0: 2-D).
H5Handle create_dataset(hid_t file, const char* name, hsize_t d0, hsize_t d1, hsize_t k, bool int32 = false);
// Writes / reads the (box.ni, box.nj, k) block at (box.i0, box.j0) of the dataset, from / to
// node-major host data (k values per node). `whole_block`: the dataset is the block alone.
bool write_block(hid_t dset, const BlockBox& box, int k, const void* data, hid_t dxpl, bool whole_block,
                 bool int32 = false);
bool read_block(hid_t dset, const BlockBox& box, int k, double* data);
// Shape of a dataset (empty if it does not exist or cannot be read).
std::vector<hsize_t> dataset_shape(hid_t file, const char* name);

bool write_attr(hid_t obj, const char* name, const std::string& value);
bool write_attr(hid_t obj, const char* name, double value);
bool write_attr(hid_t obj, const char* name, long value);
bool write_attr(hid_t obj, const char* name, std::uint64_t value);
std::optional<std::string> read_attr_string(hid_t obj, const char* name);
std::optional<double> read_attr_double(hid_t obj, const char* name);
std::optional<long> read_attr_long(hid_t obj, const char* name);
std::optional<std::uint64_t> read_attr_u64(hid_t obj, const char* name);

// Order-independent checksum of a field: the wrapping sum over nodes and components of a
// 64-bit mix of (value bits, global index). Ranks add their parts (MPI_UINT64_T sum), so the
// same global field gives the same checksum on any decomposition.
std::uint64_t checksum_part(const BlockBox& box, int k, const double* data);
std::uint64_t checksum(const BlockBox& box, int k, const double* data, MPI_Comm comm);

// Every rank's verdict: true on all ranks if `ok` on all; otherwise `why` becomes the message
// of the lowest failing rank on every rank. Collective.
bool agree(bool ok, std::string& why, MPI_Comm comm);

}  // namespace beatnik::io
