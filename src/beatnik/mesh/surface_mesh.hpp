#pragma once
// This rank's view of the 2D surface mesh: geometry, decomposition, process grid, and the
// owned box with its ghosted memory layout.
#include <memory>

#include "beatnik/base/ghosted_layout.hpp"
#include "beatnik/comm/cart_grid.hpp"
#include "beatnik/comm/context.hpp"
#include "beatnik/comm/placement/placement.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/mesh/decomposition.hpp"
#include "beatnik/mesh/geometry.hpp"

namespace beatnik::mesh {

inline constexpr int kGhosts = 2;  // halo depth the 4th-order stencils need

class SurfaceMesh {
 public:
  // `transport` moves the bytes of every pattern on this mesh (null: host or staged by space).
  // `placement`: which rank takes which cell of the process grid (over ctx's nodes).
  SurfaceMesh(const comm::Context& ctx, const Geometry& geom, std::array<int, 2> procs,
              comm::Transport* transport = nullptr, const comm::placement::Options& placement = {});

  const comm::Context& context() const { return ctx_; }
  const Geometry& geometry() const { return geom_; }
  const Decomposition& decomposition() const { return decomp_; }
  const comm::CartGrid& grid() const { return *grid_; }
  const comm::placement::Options& placement() const { return placement_; }
  comm::Transport* transport() const { return transport_; }
  const Box2& owned() const { return owned_; }
  GhostedLayout layout() const { return GhostedLayout{owned_.extent(0), owned_.extent(1), kGhosts}; }
  // Locality (self / on-node / off-node) of every rank of the grid communicator.
  const std::vector<int>& locality() const { return locality_; }
  // Does this rank touch the global low / high edge of dimension d?
  bool at_low(int d) const { return owned_.lo[d] == 0; }
  bool at_high(int d) const { return owned_.hi[d] == geom_.nodes[d]; }
  long global_nodes() const { return long(geom_.nodes[0]) * geom_.nodes[1]; }

 private:
  const comm::Context& ctx_;
  Geometry geom_;
  Decomposition decomp_;
  comm::placement::Options placement_;
  std::unique_ptr<comm::CartGrid> grid_;
  Box2 owned_;
  std::vector<int> locality_;
  comm::Transport* transport_;
};

}  // namespace beatnik::mesh
