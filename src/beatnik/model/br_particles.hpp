#pragma once
// The owned surface nodes as Birkhoff–Rott source particles, shared by the exact and cutoff
// solvers.
#include "beatnik/exec/space.hpp"
#include "beatnik/mesh/field.hpp"
#include "beatnik/mesh/surface_mesh.hpp"
#include "beatnik/model/parameters.hpp"

namespace beatnik::model {

// Positions and source strengths q = −(ΔxΔy/4π)·W·ω of the owned nodes into `out` (in `space`),
// a structure of arrays [x|y|z|qx|qy|qz] of owned_count entries each, row-major over the owned
// block; W are the settings' quadrature weights.
void pack_br_particles(const mesh::SurfaceMesh& mesh, const BRSettings& settings, exec::Space space,
                       const mesh::Field& state, const mesh::Field& omega, double* out);

}  // namespace beatnik::model
