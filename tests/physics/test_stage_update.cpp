// The Runge–Kutta stage update fused into the right-hand side's kernels (ZModel::StageUpdate,
// docs/performance.md): out = a·x + b·y + c·L(s) and the kept ż must equal, bitwise, the same
// expression formed from a plain rate evaluation of the same state (what the separate update
// pass computed before), at low and medium order, with and without --halo-overlap.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "beatnik/model/state.hpp"
#include "physics/physics_support.hpp"

using namespace beatnik;

namespace {

std::array<double, 5> wavy(int, int, double x, double y) {
  return {x + 0.02 * std::sin(M_PI * y), y + 0.01 * std::cos(M_PI * x),
          0.07 * std::cos(2 * M_PI * x) * std::cos(2 * M_PI * y), 0.3 * std::sin(M_PI * (x + y)),
          -0.2 * std::cos(M_PI * (2 * x - y))};
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST(StageUpdate, FusedUpdateEqualsUpdateOfThePlainRate) {
  for (const std::string order : {"low", "medium"})
    for (bool overlap : {false, true}) {
      app::Options o = test::small_options(20);
      o.order = order;
      o.halo_overlap = overlap;
      app::Simulation sim(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
      test::set_state(sim, wavy);
      const mesh::Field& s = sim.state();
      const GhostedLayout L = s.layout();
      mesh::Field rate(exec::Space::Host, GhostedLayout{L.ni, L.nj, 0}, model::kStateComps);
      sim.model().derivatives(s, rate);
      // x: arbitrary values (never the state: the kernels read the state's neighbours).
      mesh::Field x(exec::Space::Host, L, model::kStateComps), out(exec::Space::Host, L, model::kStateComps);
      mesh::Field vel(exec::Space::Host, L, model::kStateComps);
      for (int c = 0; c < model::kStateComps; ++c)
        for (int i = 0; i < L.ni; ++i)
          for (int j = 0; j < L.nj; ++j) x.view()(c, i, j) = std::sin(1.0 + c + 0.37 * i - 0.11 * j);
      const double a = 0.75, b = 0.25, dt = 0.013;
      sim.model().derivatives(s, model::StageUpdate{&out, a, b, 0.25 * dt, &x, &s, &vel});
      long bad = 0, bad_vel = 0;
      for (int c = 0; c < model::kStateComps; ++c)
        for (int i = 0; i < L.ni; ++i)
          for (int j = 0; j < L.nj; ++j) {
            const double want = a * x.view()(c, i, j) + b * s.view()(c, i, j) + 0.25 * dt * rate.view()(c, i, j);
            bad += !same_bits(out.view()(c, i, j), want);
            if (c <= model::kZ3) bad_vel += !same_bits(vel.view()(c, i, j), rate.view()(c, i, j));
          }
      EXPECT_EQ(bad, 0) << order << (overlap ? " overlap" : "");
      EXPECT_EQ(bad_vel, 0) << order << (overlap ? " overlap" : "");
      // The plain rate is not trivially zero (the check would pass vacuously).
      double m = 0;
      for (int i = 0; i < L.ni; ++i)
        for (int j = 0; j < L.nj; ++j) m = std::max(m, std::fabs(rate.view()(model::kW1, i, j)));
      EXPECT_GT(m, 0.0);
    }
}
