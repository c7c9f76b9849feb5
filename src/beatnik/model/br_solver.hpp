#pragma once
// What the Z-model asks of a Birkhoff–Rott solver (exact ring pass or cutoff pipeline): the
// velocity of every owned surface node from the positions and the vorticity vector ω.
#include <cstddef>

#include "beatnik/mesh/field.hpp"

namespace beatnik::model {

class BRSolver {
 public:
  virtual ~BRSolver() = default;
  // out(c, i, j), c = 0..2: BR velocity at owned node (i, j), from positions z = components
  // kZ1..kZ3 of `state` and ω = `omega` (3 components), owned nodes only. Collective.
  virtual void velocity(const mesh::Field& state, const mesh::Field& omega, const mesh::Field& out) = 0;
  // Bytes this rank holds in the solver's own buffers.
  virtual size_t buffer_bytes() const = 0;
};

}  // namespace beatnik::model
