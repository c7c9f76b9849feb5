// Nonlinear low-order runs on the consistent mesh: VALIDATION O13 (regression values of the
// serial model) and O12 (volume under the interface).
#include <gtest/gtest.h>

#include <cmath>

#include "beatnik/model/state.hpp"
#include "physics/physics_support.hpp"

using namespace beatnik;

namespace {

// V = Σ z3 (Dx z1 Dy z2 − Dy z1 Dx z2) Δ² with periodic 4th-order differences; positions are
// unwrapped by the period across the seam.
double volume(const test::Snapshot& s, double dx, double L) {
  auto pos = [&](int c, int i, int j) {
    const int wrap = c == model::kZ1 ? (i < 0 ? -1 : i >= s.nx ? 1 : 0) : (j < 0 ? -1 : j >= s.ny ? 1 : 0);
    return s(c, i, j) + wrap * L;
  };
  auto d1 = [&](int c, int i, int j) {
    return (pos(c, i - 2, j) - 8 * pos(c, i - 1, j) + 8 * pos(c, i + 1, j) - pos(c, i + 2, j)) / (12 * dx);
  };
  auto d2 = [&](int c, int i, int j) {
    return (pos(c, i, j - 2) - 8 * pos(c, i, j - 1) + 8 * pos(c, i, j + 1) - pos(c, i, j + 2)) / (12 * dx);
  };
  double v = 0;
  for (int i = 0; i < s.nx; ++i)
    for (int j = 0; j < s.ny; ++j) {
      const double jac = d1(model::kZ1, i, j) * d2(model::kZ2, i, j) - d2(model::kZ1, i, j) * d1(model::kZ2, i, j);
      v += s(model::kZ3, i, j) * jac;
    }
  return v * dx * dx;
}

struct Extremes {
  double max = 0, min = 0;
};
Extremes extremes(const app::Simulation& sim) {
  const auto d = sim.diagnostics();
  return Extremes{d.max_z3, d.min_z3};
}

// Table values have 5 significant digits: a faithful result lies within half a unit of the
// last digit (5e-6 absolute); 1e-7 more covers our own round-off. (The 1e-6 relative of O13
// needs more digits than the table gives.)
constexpr double kTableTol = 5e-6 + 1e-7;

}  // namespace

// O13: rocket rig, m = 0.05, M = 1, dt = τ/25, consistent mesh, p = 1, N = 64.
TEST(NonlinearRegression, ConsistentMeshP1N64) {
  app::Options o = test::small_options(64);
  o.metric_power = 1.0;
  app::Simulation sim(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
  for (int s = 1; s <= 25; ++s) {
    sim.step();
    const Extremes e = extremes(sim);
    if (s == 15) {  // 0.6τ
      EXPECT_NEAR(e.max, 0.11383, kTableTol);
      EXPECT_NEAR(e.min, -0.11996, kTableTol);
      if (test::world_rank() == 0) std::printf("O13 p=1 N=64 0.6tau: %.8f / %.8f\n", e.max, e.min);
    }
    if (s == 25) {  // 1τ
      EXPECT_NEAR(e.max, 0.18220, kTableTol);
      EXPECT_NEAR(e.min, -0.19745, kTableTol);
      EXPECT_GT(-e.min, e.max);  // the spike is deeper than the bubble is high (A > 0)
      if (test::world_rank() == 0) std::printf("O13 p=1 N=64 1.0tau: %.8f / %.8f\n", e.max, e.min);
    }
  }
}

// O13, p = ½ (our consistent default) at N = 128.
TEST(NonlinearRegression, ConsistentMeshHalfPowerN128) {
  app::Options o = test::small_options(128);
  o.metric_power = 0.5;
  app::Simulation sim(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
  for (int s = 1; s <= 25; ++s) {
    sim.step();
    if (s != 15 && s != 25) continue;
    const Extremes e = extremes(sim);
    if (test::world_rank() == 0) std::printf("O13 p=1/2 N=128 %.1ftau: %.8f / %.8f\n", s / 25.0, e.max, e.min);
    EXPECT_NEAR(e.max, s == 15 ? 0.12507 : 0.22883, kTableTol) << "step " << s;
    EXPECT_NEAR(e.min, s == 15 ? -0.13624 : -0.26597, kTableTol) << "step " << s;
  }
}

// O12: with p = ½ the volume under the interface is conserved up to truncation: |ΔV| ≤ 1e-5
// up to 0.6τ at N = 64 (serial model: −8e-7 at 0.6τ). With p = 1 (the reference's choice) it
// drifts by +8.7e-4 at 0.6τ (a model property), which this test also checks, so that the
// volume measure is known to see a drift.
TEST(Volume, ConservedWithHalfPowerAndDriftsWithPowerOne) {
  for (double p : {0.5, 1.0}) {
    app::Options o = test::small_options(64);
    o.metric_power = p;
    app::Simulation sim(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
    const double dx = sim.mesh().geometry().spacing[0], L = sim.mesh().geometry().period[0];
    const test::Snapshot s0 = test::snapshot(sim);
    const double v0 = s0.empty() ? 0 : volume(s0, dx, L);
    double worst = 0, last = 0;
    for (int s = 1; s <= 15; ++s) {
      sim.step();
      const test::Snapshot snap = test::snapshot(sim);
      if (snap.empty()) continue;
      last = volume(snap, dx, L) - v0;
      worst = std::max(worst, std::fabs(last));
    }
    if (test::world_rank() != 0) continue;
    std::printf("O12 p=%g N=64: V0 = %.3e, max |dV| up to 0.6tau = %.3e, dV(0.6tau) = %.3e\n", p, v0, worst, last);
    if (p == 0.5) {
      EXPECT_LE(worst, 1e-5);
    } else {
      EXPECT_NEAR(last, 8.7e-4, 0.05e-4);  // table value to 2 digits
    }
  }
}
