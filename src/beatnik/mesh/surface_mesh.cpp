#include "beatnik/mesh/surface_mesh.hpp"

#include <string>

#include "beatnik/base/error.hpp"

namespace beatnik::mesh {

SurfaceMesh::SurfaceMesh(const comm::Context& ctx, const Geometry& geom, std::array<int, 2> procs,
                         comm::Transport* transport, const comm::placement::Options& placement)
    : ctx_(ctx), geom_(geom), decomp_(geom.nodes, procs), placement_(placement), transport_(transport) {
  if (procs[0] * procs[1] != ctx.size())
    throw InputError("process grid " + std::to_string(procs[0]) + "x" + std::to_string(procs[1]) +
                     " does not match " + std::to_string(ctx.size()) + " ranks");
  for (int d = 0; d < 2; ++d)
    if (geom.nodes[d] < kGhosts * procs[d])
      throw InputError("mesh too small for the process grid: each rank needs at least " +
                       std::to_string(kGhosts) + " nodes per dimension");
  comm::GridOrder order;
  if (placement.policy == comm::placement::Policy::Cart) {
    order.mpi_reorder = true;
  } else if (placement.policy != comm::placement::Policy::Linear) {
    // Square node blocks in mesh nodes, not in ranks: the halo crossing a block's edge grows
    // with the edge's length in nodes.
    const std::array<double, 2> extent{double(geom.nodes[0]) / procs[0], double(geom.nodes[1]) / procs[1]};
    order.cell_of_rank = comm::placement::cells(placement, procs, ctx.node_of_rank(), extent);
  }
  grid_ = std::make_unique<comm::CartGrid>(ctx.comm(), procs, geom.periodic, order);
  owned_ = decomp_.owned(grid_->rank());
  locality_ = ctx.locality(grid_->comm());
}

}  // namespace beatnik::mesh
