// VALIDATION O3: steady states of the right-hand side (ZModel::derivatives), both profiles.
#include <gtest/gtest.h>

#include <cmath>

#include "beatnik/model/state.hpp"
#include "physics/physics_support.hpp"

using namespace beatnik;

namespace {

struct RateMax {
  double z = 0, w = 0;  // max |ż| and max |ẇ| over all nodes and ranks
};

// One evaluation of d(state)/dt for the state f on a fresh simulation of `o`.
RateMax rate_of(const app::Options& o, const test::StateFunction& f) {
  app::Simulation sim(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
  test::set_state(sim, f);
  const GhostedLayout L = sim.state().layout();
  mesh::Field rate(exec::Space::Host, GhostedLayout{L.ni, L.nj, 0}, model::kStateComps);
  sim.model().derivatives(sim.state(), rate);
  RateMax m;
  for (int c = 0; c < model::kStateComps; ++c)
    for (int i = 0; i < L.ni; ++i)
      for (int j = 0; j < L.nj; ++j) {
        const double v = std::fabs(rate.view()(c, i, j));
        double& slot = c <= model::kZ3 ? m.z : m.w;
        slot = std::isnan(v) ? HUGE_VAL : std::max(slot, v);
      }
  double both[2] = {m.z, m.w};
  MPI_Allreduce(MPI_IN_PLACE, both, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return RateMax{both[0], both[1]};
}

// A wavy surface with zero vorticity (positions displaced sideways too, so the metric is
// not the identity).
std::array<double, 5> wavy(int, int, double x, double y) {
  return {x + 0.02 * std::sin(M_PI * y), y + 0.01 * std::cos(M_PI * x),
          0.07 * std::cos(2 * M_PI * x) * std::cos(2 * M_PI * y) + 0.03 * std::sin(M_PI * (x + 2 * y)), 0, 0};
}

}  // namespace

TEST(SteadyStates, FlatInterfaceAtAnyHeightDoesNotMove) {
  for (const std::string profile : {"consistent", "beatnik"})
    for (double height : {0.0, 0.37, -1.25}) {
      app::Options o = test::small_options(20);
      o.profile = profile;
      const auto c = test::config_for(o, MPI_COMM_WORLD);
      const RateMax m = rate_of(o, [=](int, int, double x, double y) { return std::array<double, 5>{x, y, height, 0, 0}; });
      EXPECT_EQ(m.z, 0.0) << profile << " height " << height;
      // V = −2 g z3 is constant; its differences vanish up to the round-off of 2g|z3|/Δ.
      EXPECT_LE(m.w, 1e-12 * 2 * c.model.gravity * std::fabs(height) / c.geometry.spacing[0])
          << profile << " height " << height;
    }
}

TEST(SteadyStates, NoDensityContrastMeansNothingMoves) {
  for (const std::string profile : {"consistent", "beatnik"}) {
    app::Options o = test::small_options(20);
    o.profile = profile;
    o.atwood = 0.0;
    o.dt = 1e-3;  // tau is undefined without A g
    const RateMax m = rate_of(o, wavy);
    EXPECT_EQ(m.z, 0.0) << profile;
    EXPECT_EQ(m.w, 0.0) << profile;
  }
}

TEST(SteadyStates, NoGravityMeansNothingMoves) {
  for (const std::string profile : {"consistent", "beatnik"}) {
    app::Options o = test::small_options(20);
    o.profile = profile;
    o.gravity = 0.0;
    o.dt = 1e-3;
    const RateMax m = rate_of(o, wavy);
    EXPECT_EQ(m.z, 0.0) << profile;
    EXPECT_EQ(m.w, 0.0) << profile;
  }
}

// The control: the same wavy surface with A g ≠ 0 does move (else the tests above prove nothing).
TEST(SteadyStates, WavySurfaceUnderGravityAccelerates) {
  app::Options o = test::small_options(20);
  const RateMax m = rate_of(o, wavy);
  EXPECT_EQ(m.z, 0.0);  // zero vorticity: no velocity yet
  EXPECT_GT(m.w, 1.0);
}
