#pragma once
// The Birkhoff–Rott solver tests' input on this rank's owned nodes: the shared test surface and
// ω (br_test_surface.hpp) in the fields a solver takes, and the velocity one solver gives there.
#include <mpi.h>

#include <memory>
#include <vector>

#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/context.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/mesh/surface_mesh.hpp"
#include "beatnik/model/parameters.hpp"
#include "beatnik/model/state.hpp"
#include "physics/br_test_surface.hpp"
#include "support/test_support.hpp"

namespace beatnik::test {

// High-order options on an n×n surface of the given profile and boundary (ε = 0.5): the tree
// solver tests' common start.
inline app::Options br_options(const char* profile, const char* boundary, int n) {
  app::Options o = small_options(n);
  o.profile = profile;
  o.boundary = boundary;
  o.order = "high";
  o.epsilon = 0.5;
  return o;
}

struct BRSurfaceCase {
  app::RunConfig c;
  comm::Context ctx;
  std::unique_ptr<comm::Transport> transport;  // with `nccl`: an NCCL transport over comm's ranks
  std::unique_ptr<mesh::SurfaceMesh> mesh;
  mesh::Field state, omega, out;

  explicit BRSurfaceCase(const app::Options& o, MPI_Comm comm = MPI_COMM_WORLD, bool nccl = false)
      : c(config_for(o, comm)), ctx(comm) {
    if (nccl) transport = std::make_unique<comm::Transport>(ctx, exec::Space::Device, comm::TransportKind::Nccl);
    mesh = std::make_unique<mesh::SurfaceMesh>(ctx, c.geometry, c.procs, transport.get());
    const GhostedLayout L = mesh->layout(), owned{L.ni, L.nj, 0};
    state = mesh::Field(exec::Space::Host, L, model::kStateComps);
    omega = mesh::Field(exec::Space::Host, owned, 3);
    out = mesh::Field(exec::Space::Host, owned, 3);
    for (int i = 0; i < L.ni; ++i)
      for (int j = 0; j < L.nj; ++j)
        for (int k = 0; k < 3; ++k) {
          state.view()(k, i, j) = br_test_position(c.geometry, k, gi(i), gj(j));
          omega.view()(k, i, j) = br_test_omega(k, gi(i), gj(j));
        }
  }
  int gi(int i) const { return mesh->owned().lo[0] + i; }
  int gj(int j) const { return mesh->owned().lo[1] + j; }

  // This rank's owned velocities from `Solver` with settings `b` (or the run's), 3 per node in
  // (i, j) order.
  template <class Solver>
  std::vector<double> velocity(const model::BRSettings& b, comm::CommStats* stats = nullptr) {
    Solver s(*mesh, exec::Space::Host, b, c.model.epsilon, stats, nullptr);
    s.velocity(state, omega, out);
    return owned_out();
  }
  template <class Solver>
  std::vector<double> velocity(comm::CommStats* stats = nullptr) {
    return velocity<Solver>(c.model.br, stats);
  }
  std::vector<double> owned_out() const {
    std::vector<double> u;
    for (int i = 0; i < mesh->layout().ni; ++i)
      for (int j = 0; j < mesh->layout().nj; ++j)
        for (int k = 0; k < 3; ++k) u.push_back(out.view()(k, i, j));
    return u;
  }
};

}  // namespace beatnik::test
