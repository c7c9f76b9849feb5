#pragma once
// 2D block decomposition of an Nx x Ny node mesh over a Px x Py process grid. Uneven splits:
// the first (N mod P) ranks of a dimension own one node more.
#include <array>
#include <vector>

#include "beatnik/base/box.hpp"

namespace beatnik::mesh {

// Start offsets of the P parts of n items (size P + 1; part r is [off[r], off[r+1])).
std::vector<int> split_offsets(int n, int parts);

class Decomposition {
 public:
  Decomposition(std::array<int, 2> global, std::array<int, 2> procs);

  std::array<int, 2> global() const { return global_; }
  std::array<int, 2> procs() const { return procs_; }
  int size() const { return procs_[0] * procs_[1]; }
  // Rank r sits at grid coordinates (r / Py, r % Py), as MPI_Cart_create orders them.
  std::array<int, 2> coords_of(int rank) const { return {rank / procs_[1], rank % procs_[1]}; }
  Box2 owned(int rank) const;
  std::vector<Box2> all_owned() const;

 private:
  std::array<int, 2> global_;
  std::array<int, 2> procs_;
  std::array<std::vector<int>, 2> offsets_;
};

}  // namespace beatnik::mesh
