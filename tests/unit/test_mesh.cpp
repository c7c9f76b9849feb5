// Decomposition, halo exchange and boundary conditions against closed-form fields, on every
// process grid the rank count allows (uneven splits included).
#include <gtest/gtest.h>

#include <cmath>

#include "beatnik/comm/context.hpp"
#include "beatnik/comm/halo_exchange.hpp"
#include "beatnik/mesh/boundary.hpp"
#include "beatnik/mesh/decomposition.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {


mesh::Geometry geometry(int nx, int ny, bool periodic) {
  mesh::Geometry g;
  g.nodes = {nx, ny};
  g.periodic = {periodic, periodic};
  g.node_spacing = g.spacing = {0.1, 0.2};
  g.origin = {-0.3, 0.5};
  g.period = {nx * 0.1, ny * 0.2};
  return g;
}

double smooth(int c, int gi, int gj) { return std::sin(0.3 * gi + c) + std::cos(0.7 * gj - c) + 0.01 * gi * gj; }
double linear(int c, int gi, int gj) { return -2.0 + 0.3 * gi + 0.4 * gj + c; }

}  // namespace

TEST(Decomposition, SplitsCoverEveryNodeOnceWithUnevenParts) {
  const auto off = mesh::split_offsets(13, 4);
  EXPECT_EQ(off, (std::vector<int>{0, 4, 7, 10, 13}));
  mesh::Decomposition d({13, 11}, {3, 2});
  std::vector<int> owner(13 * 11, -1);
  for (int r = 0; r < d.size(); ++r) {
    const Box2 b = d.owned(r);
    for (int i = b.lo[0]; i < b.hi[0]; ++i)
      for (int j = b.lo[1]; j < b.hi[1]; ++j) {
        EXPECT_EQ(owner[i * 11 + j], -1);
        owner[i * 11 + j] = r;
      }
  }
  for (int o : owner) EXPECT_GE(o, 0);
  EXPECT_EQ(d.owned(0).extent(0), 5);  // 13 = 5 + 4 + 4
  EXPECT_EQ(d.owned(5).extent(1), 5);  // 11 = 6 + 5
}

TEST(HaloExchange, PeriodicGhostsHoldTheWrappedNeighbourValues) {
  comm::Context ctx(MPI_COMM_WORLD);
  for (auto procs : test::process_grids()) {
    for (bool corners : {true, false}) {
      mesh::SurfaceMesh m(ctx, geometry(13, 11, true), procs);
      const auto L = m.layout();
      mesh::Field f(exec::Space::Host, L, 3);
      const Box2 own = m.owned();
      for (int c = 0; c < 3; ++c)
        for (int i = 0; i < L.ni; ++i)
          for (int j = 0; j < L.nj; ++j) f.view()(c, i, j) = smooth(c, own.lo[0] + i, own.lo[1] + j);
      comm::CommStats stats;
      comm::HaloExchange h(m.grid(), L, comm::HaloPattern{2, corners}, 3, exec::Space::Host, m.locality(), &stats, "halo");
      h.exchange(f.components());
      double err = 0;
      for (int c = 0; c < 3; ++c)
        for (int i = -2; i < L.ni + 2; ++i)
          for (int j = -2; j < L.nj + 2; ++j) {
            const bool gi = i < 0 || i >= L.ni, gj = j < 0 || j >= L.nj;
            if (gi && gj && !corners) continue;
            const int wi = ((own.lo[0] + i) % 13 + 13) % 13, wj = ((own.lo[1] + j) % 11 + 11) % 11;
            err = std::max(err, std::fabs(f.view()(c, i, j) - smooth(c, wi, wj)));
          }
      EXPECT_EQ(err, 0.0) << "grid " << procs[0] << "x" << procs[1] << " corners " << corners;
      EXPECT_EQ(stats.stats().at("halo").calls, 1);
    }
  }
}

TEST(Boundary, PeriodicPositionShiftMakesPositionsLinearAcrossTheWrap) {
  comm::Context ctx(MPI_COMM_WORLD);
  for (auto procs : test::process_grids()) {
    const auto geo = geometry(12, 9, true);
    mesh::SurfaceMesh m(ctx, geo, procs);
    const auto L = m.layout();
    mesh::Field z(exec::Space::Host, L, 3);
    const Box2 own = m.owned();
    for (int i = 0; i < L.ni; ++i)
      for (int j = 0; j < L.nj; ++j) {
        z.view()(0, i, j) = geo.position(0, own.lo[0] + i);
        z.view()(1, i, j) = geo.position(1, own.lo[1] + j);
        z.view()(2, i, j) = 7.0;
      }
    comm::HaloExchange h(m.grid(), L, comm::HaloPattern{2, true}, 3, exec::Space::Host, m.locality(), nullptr, "halo");
    h.exchange(z.components());
    mesh::Boundary(m, exec::Space::Host).shift_periodic_positions(z);
    double err = 0;
    for (int i = -2; i < L.ni + 2; ++i)
      for (int j = -2; j < L.nj + 2; ++j) {
        err = std::max(err, std::fabs(z.view()(0, i, j) - geo.position(0, own.lo[0] + i)));
        err = std::max(err, std::fabs(z.view()(1, i, j) - geo.position(1, own.lo[1] + j)));
        err = std::max(err, std::fabs(z.view()(2, i, j) - 7.0));
      }
    EXPECT_LT(err, 1e-13) << "grid " << procs[0] << "x" << procs[1];
  }
}

// MODEL.md §12 / §16 item 5: a field linear in (i, j) is reproduced exactly in every ghost,
// edges and corners, on any decomposition.
TEST(Boundary, FreeExtrapolationIsExactForLinearFieldsOnAnyDecomposition) {
  comm::Context ctx(MPI_COMM_WORLD);
  for (auto procs : test::process_grids()) {
    for (bool corners : {true, false}) {
      mesh::SurfaceMesh m(ctx, geometry(10, 13, false), procs);
      const auto L = m.layout();
      mesh::Field f(exec::Space::Host, L, 2);
      const Box2 own = m.owned();
      for (int c = 0; c < 2; ++c)
        for (int i = 0; i < L.ni; ++i)
          for (int j = 0; j < L.nj; ++j) f.view()(c, i, j) = linear(c, own.lo[0] + i, own.lo[1] + j);
      comm::HaloExchange h(m.grid(), L, comm::HaloPattern{2, corners}, 2, exec::Space::Host, m.locality(), nullptr, "halo");
      h.exchange(f.components());
      mesh::Boundary(m, exec::Space::Host).extrapolate_free(f);
      double err = 0;
      for (int c = 0; c < 2; ++c)
        for (int i = -2; i < L.ni + 2; ++i)
          for (int j = -2; j < L.nj + 2; ++j) {
            const bool gi = i < 0 || i >= L.ni, gj = j < 0 || j >= L.nj;
            const bool outside_i = (i < 0 && m.at_low(0)) || (i >= L.ni && m.at_high(0));
            const bool outside_j = (j < 0 && m.at_low(1)) || (j >= L.nj && m.at_high(1));
            // Interior corner ghosts travel only with corner exchange.
            if (gi && gj && !corners && !outside_i && !outside_j) continue;
            err = std::max(err, std::fabs(f.view()(c, i, j) - linear(c, own.lo[0] + i, own.lo[1] + j)));
          }
      EXPECT_LT(err, 1e-12) << "grid " << procs[0] << "x" << procs[1] << " corners " << corners;
    }
  }
}

TEST(Boundary, FreeGhostsEqualTheSingleRankResultForAnyField) {
  // Decomposition independence (MODEL.md §5.4): ghosts of a non-linear field after halo +
  // extrapolation equal what one rank computes for the same global nodes.
  comm::Context ctx(MPI_COMM_WORLD);
  const auto geo = geometry(9, 10, false);
  // Serial answer for every ghosted global node, computed on each rank with MPI_COMM_SELF.
  comm::Context self(MPI_COMM_SELF);
  mesh::SurfaceMesh ms(self, geo, {1, 1});
  const auto Ls = ms.layout();
  mesh::Field fs(exec::Space::Host, Ls, 1);
  for (int i = 0; i < Ls.ni; ++i)
    for (int j = 0; j < Ls.nj; ++j) fs.view()(0, i, j) = smooth(0, i, j);
  comm::HaloExchange hs(ms.grid(), Ls, comm::HaloPattern{2, true}, 1, exec::Space::Host, ms.locality(), nullptr, "h");
  hs.exchange(fs.components());
  mesh::Boundary(ms, exec::Space::Host).extrapolate_free(fs);
  for (auto procs : test::process_grids()) {
    mesh::SurfaceMesh m(ctx, geo, procs);
    const auto L = m.layout();
    mesh::Field f(exec::Space::Host, L, 1);
    const Box2 own = m.owned();
    for (int i = 0; i < L.ni; ++i)
      for (int j = 0; j < L.nj; ++j) f.view()(0, i, j) = smooth(0, own.lo[0] + i, own.lo[1] + j);
    comm::HaloExchange h(m.grid(), L, comm::HaloPattern{2, true}, 1, exec::Space::Host, m.locality(), nullptr, "h");
    h.exchange(f.components());
    mesh::Boundary(m, exec::Space::Host).extrapolate_free(f);
    double err = 0;
    for (int i = -2; i < L.ni + 2; ++i)
      for (int j = -2; j < L.nj + 2; ++j) {
        const int gi = own.lo[0] + i, gj = own.lo[1] + j;
        if (gi < -2 || gi >= 11 || gj < -2 || gj >= 12) continue;
        err = std::max(err, std::fabs(f.view()(0, i, j) - fs.view()(0, gi, gj)));
      }
    EXPECT_LT(err, 1e-13) << "grid " << procs[0] << "x" << procs[1];
  }
}
