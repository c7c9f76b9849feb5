// VALIDATION O2: the finite-difference operators of the model on a halo-exchanged, boundary-
// fixed state, on every process grid of the rank count (the wrap crosses rank boundaries).
#include <gtest/gtest.h>

#include <cmath>

#include "beatnik/model/operators.hpp"
#include "beatnik/model/state.hpp"
#include "physics/physics_support.hpp"

using namespace beatnik;

namespace {

std::vector<std::string> grids() {
  std::vector<std::string> g;
  const int p = test::world_size();
  for (int a = 1; a <= p; ++a)
    if (p % a == 0) g.push_back(std::to_string(a) + "x" + std::to_string(p / a));
  return g;
}

model::Spacing spacing_of(const mesh::Geometry& g) {
  return model::Spacing{1.0 / (12.0 * g.spacing[0]), 1.0 / (12.0 * g.spacing[1]),
                        1.0 / (g.spacing[0] * g.spacing[1])};
}

// Max over this rank's owned nodes of |op(component c) - exact(x, y)|, reduced over ranks.
template <class Op, class Exact>
double max_error(const app::Simulation& sim, int c, Op op, Exact exact) {
  const mesh::FieldView v = sim.state().view();
  const GhostedLayout L = sim.state().layout();
  const auto& geo = sim.mesh().geometry();
  const Box2& own = sim.mesh().owned();
  double err = 0;
  for (int i = 0; i < L.ni; ++i)
    for (int j = 0; j < L.nj; ++j) {
      const double x = geo.position(0, own.lo[0] + i), y = geo.position(1, own.lo[1] + j);
      err = std::max(err, std::fabs(op(v.comp(c) + L.index(i, j), L.si()) - exact(x, y)));
    }
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return err;
}

}  // namespace

// O2(a): z1 = x, z2 = y across the periodic wrap (the ghosts carry ±L). The 4th-order stencil
// is exact on linear data, so Dx z1 = h/Δ = r: 1 in the consistent profile, n/(n−1) in the
// beatnik profile (MODEL §2.4, §16 item 1). A missing ±L shift gives O(L/Δ) errors at the wrap.
TEST(FiniteDifferences, DerivativeOfPositionIsTheSpacingRatioAcrossTheWrap) {
  for (const std::string profile : {"consistent", "beatnik"}) {
    for (const auto& grid : grids()) {
      app::Options o = test::small_options(24);
      o.profile = profile;
      o.ranks_grid = grid;
      app::Simulation sim(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
      test::set_state(sim, [](int, int, double x, double y) { return std::array<double, 5>{x, y, 0.3, 0, 0}; });
      const auto& geo = sim.mesh().geometry();
      const double r = geo.node_spacing[0] / geo.spacing[0];
      const double expected_r = profile == "consistent" ? 1.0 : 24.0 / 23.0;
      EXPECT_NEAR(r, expected_r, 1e-15);
      const model::Spacing sp = spacing_of(geo);
      auto dx = [&](const double* f, long si) { return model::d_x(f, si, sp); };
      auto dy = [&](const double* f, long si) { return model::d_y(f, si, sp); };
      auto value = [](double v) { return [v](double, double) { return v; }; };
      const std::string where = profile + " " + grid;
      EXPECT_LE(max_error(sim, model::kZ1, dx, value(expected_r)), 1e-13) << where;
      EXPECT_LE(max_error(sim, model::kZ2, dy, value(expected_r)), 1e-13) << where;
      EXPECT_LE(max_error(sim, model::kZ1, dy, value(0.0)), 1e-13) << where;
      EXPECT_LE(max_error(sim, model::kZ2, dx, value(0.0)), 1e-13) << where;
    }
  }
}

// O2(b): convergence orders on smooth periodic data (consistent mesh, Δ = h): going from
// N = 64 to 128 the Dx error drops by 16 (4th order) and the 9-point Laplacian's by 4.
TEST(FiniteDifferences, ConvergenceOrdersOfDerivativeAndLaplacian) {
  const double kx = 2.0 * M_PI, ky = M_PI;  // at least 21 points per wavelength at N = 64
  auto f = [=](double x, double y) { return std::sin(kx * x + 0.3) * std::cos(ky * y); };
  auto fx = [=](double x, double y) { return kx * std::cos(kx * x + 0.3) * std::cos(ky * y); };
  auto lap = [=](double x, double y) { return -(kx * kx + ky * ky) * f(x, y); };
  double err_dx[2], err_lap[2];
  for (int level = 0; level < 2; ++level) {
    app::Options o = test::small_options(level == 0 ? 64 : 128);
    app::Simulation sim(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
    test::set_state(sim, [&](int, int, double x, double y) { return std::array<double, 5>{x, y, f(x, y), 0, 0}; });
    const model::Spacing sp = spacing_of(sim.mesh().geometry());
    err_dx[level] = max_error(sim, model::kZ3, [&](const double* p, long si) { return model::d_x(p, si, sp); }, fx);
    err_lap[level] =
        max_error(sim, model::kZ3, [&](const double* p, long si) { return model::laplacian(p, si, sp); }, lap);
  }
  const double ratio_dx = err_dx[0] / err_dx[1], ratio_lap = err_lap[0] / err_lap[1];
  if (test::world_rank() == 0)
    std::printf("O2(b): Dx errors %.3e -> %.3e (ratio %.3f), Laplacian %.3e -> %.3e (ratio %.3f)\n", err_dx[0],
                err_dx[1], ratio_dx, err_lap[0], err_lap[1], ratio_lap);
  EXPECT_GE(ratio_dx, 15.0);
  EXPECT_LE(ratio_dx, 17.0);
  EXPECT_GE(ratio_lap, 3.8);
  EXPECT_LE(ratio_lap, 4.2);
}
