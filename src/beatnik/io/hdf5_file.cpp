#include "beatnik/io/hdf5_file.hpp"

#include <cstdlib>
#include <cstring>

namespace beatnik::io {

bool parallel_hdf5_built() {
#ifdef H5_HAVE_PARALLEL
  return true;
#else
  return false;
#endif
}

const char* to_string(Hdf5Mode m) { return m == Hdf5Mode::Collective ? "collective" : "blocks"; }

bool parse_hdf5_mode(const std::string& name, Hdf5Mode& mode, std::string& why) {
  why.clear();
  if (name == "auto") {
    mode = parallel_hdf5_built() ? Hdf5Mode::Collective : Hdf5Mode::Blocks;
    return true;
  }
  if (name == "blocks") {
    mode = Hdf5Mode::Blocks;
    return true;
  }
  if (name == "collective") {
    mode = Hdf5Mode::Collective;
    if (!parallel_hdf5_built())
      why = "--hdf5-mode collective: this beatnik was built against a serial HDF5 (no MPI-IO); use "
            "--hdf5-mode blocks (or auto), or rebuild with a parallel HDF5 (libhdf5-openmpi-dev)";
    return true;
  }
  return false;
}

void prefer_safe_mpi_io() {
#ifdef OPEN_MPI
  if (!std::getenv("OMPI_MCA_fcoll") && !std::getenv("OMPI_MCA_io")) setenv("OMPI_MCA_fcoll", "dynamic_gen2", 0);
#endif
}

void quiet_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

namespace {

H5Handle access_list(MPI_Comm comm) {
  H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
#ifdef H5_HAVE_PARALLEL
  if (comm != MPI_COMM_NULL && fapl) H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL);
#else
  (void)comm;
#endif
  return fapl;
}

}  // namespace

H5Handle create_file(const std::string& path, MPI_Comm comm) {
  quiet_hdf5();
  H5Handle fapl = access_list(comm);
  // The 1.8 file format: its metadata carry checksums, so HDF5 itself notices most damage.
  if (fapl) H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18);
  return H5Handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
}

H5Handle open_file(const std::string& path, bool write, MPI_Comm comm) {
  quiet_hdf5();
  H5Handle fapl = access_list(comm);
  return H5Handle(H5Fopen(path.c_str(), write ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl.get()), H5Fclose);
}

H5Handle transfer_list(bool collective) {
  H5Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
#ifdef H5_HAVE_PARALLEL
  if (collective && dxpl) H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE);
#else
  (void)collective;
#endif
  return dxpl;
}

H5Handle create_dataset(hid_t file, const char* name, hsize_t d0, hsize_t d1, hsize_t k, bool int32) {
  const hsize_t dims[3] = {d0, d1, k};
  H5Handle space(H5Screate_simple(k > 0 ? 3 : 2, dims, nullptr), H5Sclose);
  if (!space) return {};
  return H5Handle(H5Dcreate2(file, name, int32 ? H5T_STD_I32LE : H5T_IEEE_F64LE, space.get(), H5P_DEFAULT,
                             H5P_DEFAULT, H5P_DEFAULT),
                  H5Dclose);
}

namespace {
// File-space selection of the block (or everything when the dataset is the block alone).
bool select(hid_t fspace, const BlockBox& b, int k, bool whole) {
  if (whole) return H5Sselect_all(fspace) >= 0;
  // k = 0: a 2-D dataset (one value per node).
  const hsize_t start[3] = {hsize_t(b.i0), hsize_t(b.j0), 0};
  const hsize_t count[3] = {hsize_t(b.ni), hsize_t(b.nj), hsize_t(k)};
  return H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, count, nullptr) >= 0;
}
}  // namespace

bool write_block(hid_t dset, const BlockBox& b, int k, const void* data, hid_t dxpl, bool whole, bool int32) {
  const hsize_t mdims[3] = {hsize_t(b.ni), hsize_t(b.nj), hsize_t(k)};
  H5Handle mspace(H5Screate_simple(k > 0 ? 3 : 2, mdims, nullptr), H5Sclose);
  H5Handle fspace(H5Dget_space(dset), H5Sclose);
  if (!mspace || !fspace || !select(fspace.get(), b, k, whole)) return false;
  return H5Dwrite(dset, int32 ? H5T_NATIVE_INT32 : H5T_NATIVE_DOUBLE, mspace.get(), fspace.get(), dxpl, data) >= 0;
}

bool read_block(hid_t dset, const BlockBox& b, int k, double* data) {
  const hsize_t mdims[3] = {hsize_t(b.ni), hsize_t(b.nj), hsize_t(k)};
  H5Handle mspace(H5Screate_simple(3, mdims, nullptr), H5Sclose);
  H5Handle fspace(H5Dget_space(dset), H5Sclose);
  if (!mspace || !fspace || !select(fspace.get(), b, k, false)) return false;
  return H5Dread(dset, H5T_NATIVE_DOUBLE, mspace.get(), fspace.get(), H5P_DEFAULT, data) >= 0;
}

std::vector<hsize_t> dataset_shape(hid_t file, const char* name) {
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return {};
  H5Handle d(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
  if (!d) return {};
  H5Handle s(H5Dget_space(d.get()), H5Sclose);
  const int rank = s ? H5Sget_simple_extent_ndims(s.get()) : -1;
  if (rank <= 0 || rank > 8) return {};
  std::vector<hsize_t> dims(rank);
  H5Sget_simple_extent_dims(s.get(), dims.data(), nullptr);
  return dims;
}

namespace {
bool write_scalar_attr(hid_t obj, const char* name, hid_t file_type, hid_t mem_type, const void* v) {
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Handle a(H5Acreate2(obj, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  return a && H5Awrite(a.get(), mem_type, v) >= 0;
}
template <class T>
std::optional<T> read_scalar_attr(hid_t obj, const char* name, hid_t mem_type) {
  if (H5Aexists(obj, name) <= 0) return std::nullopt;
  H5Handle a(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  T v{};
  if (!a || H5Aread(a.get(), mem_type, &v) < 0) return std::nullopt;
  return v;
}
}  // namespace

bool write_attr(hid_t obj, const char* name, const std::string& value) {
  H5Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  if (!type || H5Tset_size(type.get(), value.empty() ? 1 : value.size()) < 0) return false;
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  const std::string v = value.empty() ? std::string(1, '\0') : value;
  return write_scalar_attr(obj, name, type.get(), type.get(), v.data());
}
bool write_attr(hid_t obj, const char* name, double value) {
  return write_scalar_attr(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}
bool write_attr(hid_t obj, const char* name, long value) {
  const long long v = value;
  return write_scalar_attr(obj, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, &v);
}
bool write_attr(hid_t obj, const char* name, std::uint64_t value) {
  return write_scalar_attr(obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &value);
}

std::optional<std::string> read_attr_string(hid_t obj, const char* name) {
  if (H5Aexists(obj, name) <= 0) return std::nullopt;
  H5Handle a(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  if (!a) return std::nullopt;
  H5Handle ftype(H5Aget_type(a.get()), H5Tclose);
  if (!ftype || H5Tget_class(ftype.get()) != H5T_STRING || H5Tis_variable_str(ftype.get()) > 0) return std::nullopt;
  const size_t n = H5Tget_size(ftype.get());
  if (n == 0 || n > (64u << 20)) return std::nullopt;
  H5Handle mtype(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(mtype.get(), n);
  H5Tset_strpad(mtype.get(), H5T_STR_NULLPAD);
  std::string s(n, '\0');
  if (H5Aread(a.get(), mtype.get(), s.data()) < 0) return std::nullopt;
  s.resize(std::strlen(s.c_str()));
  return s;
}
std::optional<double> read_attr_double(hid_t obj, const char* name) {
  return read_scalar_attr<double>(obj, name, H5T_NATIVE_DOUBLE);
}
std::optional<long> read_attr_long(hid_t obj, const char* name) {
  auto v = read_scalar_attr<long long>(obj, name, H5T_NATIVE_LLONG);
  if (!v) return std::nullopt;
  return static_cast<long>(*v);
}
std::optional<std::uint64_t> read_attr_u64(hid_t obj, const char* name) {
  return read_scalar_attr<std::uint64_t>(obj, name, H5T_NATIVE_UINT64);
}

namespace {
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

std::uint64_t checksum_part(const BlockBox& b, int k, const double* data) {
  std::uint64_t sum = 0;
  for (int i = 0; i < b.ni; ++i)
    for (int j = 0; j < b.nj; ++j)
      for (int c = 0; c < k; ++c) {
        const double v = data[(size_t(i) * b.nj + j) * k + c];
        std::uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        const std::uint64_t g = (std::uint64_t(b.i0 + i) * std::uint64_t(b.ny) + std::uint64_t(b.j0 + j)) * k + c;
        sum += mix(bits ^ mix(g));
      }
  return sum;
}

std::uint64_t checksum(const BlockBox& b, int k, const double* data, MPI_Comm comm) {
  std::uint64_t s = checksum_part(b, k, data);
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_UINT64_T, MPI_SUM, comm);
  return s;
}

bool agree(bool ok, std::string& why, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int first_bad = ok ? size : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first_bad, 1, MPI_INT, MPI_MIN, comm);
  if (first_bad == size) return true;
  int len = rank == first_bad ? static_cast<int>(why.size()) : 0;
  MPI_Bcast(&len, 1, MPI_INT, first_bad, comm);
  std::string msg(len, '\0');
  if (rank == first_bad) msg = why;
  MPI_Bcast(msg.data(), len, MPI_CHAR, first_bad, comm);
  why = msg;
  return false;
}

}  // namespace beatnik::io
