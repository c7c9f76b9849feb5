#pragma once
// Mesh output for ParaView and VisIt (-F K): one HDF5 file per output step (collective mode) or
// one per step and rank (blocks mode), plus one XDMF index, DIR/beatnik.xdmf, that lists every
// step as a time series of a structured 2-D mesh (2DSMesh) with 3-D point coordinates and the
// node fields vorticity (2 components), velocity (3) and rank. docs/io.md has the layout.
// Every file is written under a temporary name and renamed when complete.
#include <mpi.h>

#include <string>
#include <vector>

#include "beatnik/io/hdf5_file.hpp"

namespace beatnik::io {

// One output step: this rank's owned nodes on the host, node-major (j fastest).
struct MeshFrame {
  long step = 0;
  double time = 0, dt = 0;
  std::vector<double> positions;  // 3 per node
  std::vector<double> vorticity;  // 2 per node
  std::vector<double> velocity;   // 3 per node (of the last derivative evaluation)
};

// File names (relative to the output directory).
std::string mesh_file_name(long step);            // beatnik_stepNNNNNN.h5
std::string mesh_block_file_name(long step, int rank);  // beatnik_stepNNNNNN_rankRRRRR.h5
inline constexpr const char* kXdmfIndexName = "beatnik.xdmf";

class MeshOutput {
 public:
  // `boxes`: every rank's owned box (identical on all ranks).
  MeshOutput(std::string dir, Hdf5Mode mode, MPI_Comm comm, std::vector<BlockBox> boxes);

  // Collective. Writes the step's file(s), then rank 0 rewrites the index. Returns the bytes of
  // data this rank wrote. Throws Error on every rank (same message) if anything failed; the
  // last complete files and index are left as they were.
  long write(const MeshFrame& frame);

  // The two halves of a blocks-mode write, for writing from a background thread: this rank's
  // file alone (no MPI; false and `why` on failure), then, on the main thread, the collective
  // verdict and the index (throws Error on every rank if any rank failed).
  bool write_own_block(const MeshFrame& frame, std::string& why) const;
  void commit(long step, double time, bool ok, std::string why);
  long bytes_per_rank() const { return boxes_[rank_].count() * long(8 * 8 + 4); }

  // A restarted run: steps written earlier (files found in the directory, step <= `upto`) stay
  // in the index when they were written the same way (mode; for blocks, the same blocks), since
  // readers take the structure of all time steps from the first. Collective.
  void adopt_existing(long upto);

  Hdf5Mode mode() const { return mode_; }

 private:
  void write_index();  // rank 0
  std::string dir_;
  Hdf5Mode mode_;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::vector<BlockBox> boxes_;
  struct Entry {
    long step;
    double time;
    std::vector<BlockBox> blocks;  // blocks mode: every rank's block; empty: one shared file
  };
  std::vector<Entry> index_;
};

}  // namespace beatnik::io
