#pragma once
// Boundary fix-ups applied after a halo exchange:
//  * periodic: ghost positions that came across a wrap are shifted by the period, one component
//    per wrapped dimension (so corner ghosts are right on any rank count);
//  * free: ghosts beyond a free global edge are extrapolated linearly from the two nearest nodes
//    on the same line, and true global corners along the inward diagonal. Edge ghosts use halo
//    data of the neighbours, so the result does not depend on the decomposition.
#include "beatnik/mesh/field.hpp"
#include "beatnik/mesh/surface_mesh.hpp"

namespace beatnik::mesh {

class Boundary {
 public:
  Boundary(const SurfaceMesh& mesh, exec::Space space) : mesh_(mesh), space_(space) {}

  // Components 0 and 1 of `z` are positions along the two mesh dimensions.
  void shift_periodic_positions(const Field& z) const;
  // Every component of f.
  void extrapolate_free(const Field& f) const;

 private:
  const SurfaceMesh& mesh_;
  exec::Space space_;
};

}  // namespace beatnik::mesh
