#pragma once
// Gathering the distributed state to rank 0 and writing it as CSV (i,j,x,y,z,w1,w2), one row
// per node in global (i, j) order, 17 significant digits. Written to FILE.tmp, then renamed,
// so a reader never sees a half-written file.
#include <string>
#include <vector>

#include "beatnik/mesh/field.hpp"
#include "beatnik/mesh/surface_mesh.hpp"

namespace beatnik::io {

// The 5 state components of every node, in global order (node (i, j) at 5·(i·Ny + j)), on
// rank 0; empty elsewhere. Collective over the mesh's communicator.
std::vector<double> gather_state(const mesh::SurfaceMesh& mesh, const mesh::Field& state);

// Collective. Only rank 0 touches the file system.
void write_state_csv(const std::string& path, const mesh::SurfaceMesh& mesh, const mesh::Field& state);

}  // namespace beatnik::io
