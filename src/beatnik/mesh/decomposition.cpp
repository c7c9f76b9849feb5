#include "beatnik/mesh/decomposition.hpp"

namespace beatnik::mesh {

std::vector<int> split_offsets(int n, int parts) {
  std::vector<int> off(parts + 1, 0);
  const int base = n / parts, extra = n % parts;
  for (int r = 0; r < parts; ++r) off[r + 1] = off[r] + base + (r < extra ? 1 : 0);
  return off;
}

Decomposition::Decomposition(std::array<int, 2> global, std::array<int, 2> procs)
    : global_(global), procs_(procs) {
  for (int d = 0; d < 2; ++d) offsets_[d] = split_offsets(global[d], procs[d]);
}

Box2 Decomposition::owned(int rank) const {
  const auto c = coords_of(rank);
  Box2 b;
  for (int d = 0; d < 2; ++d) {
    b.lo[d] = offsets_[d][c[d]];
    b.hi[d] = offsets_[d][c[d] + 1];
  }
  return b;
}

std::vector<Box2> Decomposition::all_owned() const {
  std::vector<Box2> v;
  for (int r = 0; r < size(); ++r) v.push_back(owned(r));
  return v;
}

}  // namespace beatnik::mesh
