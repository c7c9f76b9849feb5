#pragma once
// Checkpoints (DIR/checkpoint_stepNNNNNN.h5) and plain surface files, the two kinds of file
// -i accepts. Both hold the surface on the global n_i x n_j node grid:
//   /positions  float64 (n_i, n_j, 3)   z1, z2, z3 of node (i, j)
//   /vorticity  float64 (n_i, n_j, 2)   w1, w2
// A checkpoint adds, as attributes of the root group: beatnik_kind = "checkpoint",
// format_version, step, time, dt, config (JSON: the options that must match on restart, and
// the rest for the record), provenance (JSON), and on each dataset a "checksum" (uint64, see
// hdf5_file.hpp), and meta_checksum (uint64, FNV-1a of step, time, dt, config, provenance).
// Files use the HDF5 1.8 format, whose metadata carry checksums. Written to a temporary name,
// then renamed.
#include <mpi.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "beatnik/io/hdf5_file.hpp"

namespace beatnik::io {

inline constexpr long kCheckpointFormatVersion = 1;

struct CheckpointMeta {
  long step = 0;
  double time = 0, dt = 0;
  nlohmann::json config;      // {"must_match": {...}, ...}
  nlohmann::json provenance;
};

std::string checkpoint_file_name(long step, bool failed = false);  // checkpoint_stepNNNNNN[_failed].h5

// Collective. Writes `path` (via a temporary name) from every rank's block (node-major host
// data). Returns the bytes of data this rank wrote. Throws Error on every rank if it failed; an
// existing file at `path` is then untouched.
long write_checkpoint(const std::string& path, Hdf5Mode mode, MPI_Comm comm, const BlockBox& box,
                      const std::vector<double>& positions, const std::vector<double>& vorticity,
                      const CheckpointMeta& meta);

// What -i FILE holds.
struct InputFile {
  bool checkpoint = false;  // else a plain surface file
  long nodes_i = 0, nodes_j = 0;
  CheckpointMeta meta;      // checkpoint only
  std::uint64_t checksum_positions = 0, checksum_vorticity = 0;
};

// Collective: every rank opens the file; a missing, unreadable, truncated or foreign file is an
// InputError raised on every rank with one message.
InputFile inspect_input(const std::string& path, MPI_Comm comm);

// Collective: this rank's block of positions and vorticity; checkpoints' checksums are
// verified. InputError on every rank if anything is wrong.
void read_input_block(const std::string& path, const InputFile& in, const BlockBox& box, MPI_Comm comm,
                      std::vector<double>& positions, std::vector<double>& vorticity);

}  // namespace beatnik::io
