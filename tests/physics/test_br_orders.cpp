// Medium- and high-order Z-model: steady states (VALIDATION O3), order discrimination by the
// linear growth rate c_H = exp(−√ε|k|) (O8), decomposition invariance of full runs, and the
// README example 2 (sech² roll-up, free boundaries) at a CI-sized mesh.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "beatnik/model/state.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {

// Sets the state with f(c, x, y) at every owned node (x, y the initial node positions),
// evaluates the right-hand side once, and returns max |rate| per component over all ranks.
template <class F>
std::array<double, 5> max_rate(const app::Options& o, F f, double* wdot_scale = nullptr) {
  app::Simulation sim(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
  const auto& g = sim.config().geometry;
  const auto s = sim.state().view();
  const GhostedLayout L = sim.state().layout();
  for (int i = 0; i < L.ni; ++i)
    for (int j = 0; j < L.nj; ++j)
      for (int c = 0; c < 5; ++c)
        s(c, i, j) = f(c, g.position(0, sim.mesh().owned().lo[0] + i), g.position(1, sim.mesh().owned().lo[1] + j));
  mesh::Field rate(exec::Space::Host, GhostedLayout{L.ni, L.nj, 0}, 5);
  sim.model().derivatives(sim.state(), rate);
  std::array<double, 5> m{};
  const auto r = rate.view();
  for (int i = 0; i < L.ni; ++i)
    for (int j = 0; j < L.nj; ++j)
      for (int c = 0; c < 5; ++c) m[c] = std::max(m[c], std::fabs(r(c, i, j)));
  MPI_Allreduce(MPI_IN_PLACE, m.data(), 5, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (wdot_scale) *wdot_scale = 2.0 * sim.config().model.gravity / g.spacing[0];
  return m;
}

std::vector<app::Options> br_setups(int n) {
  std::vector<app::Options> v;
  for (const char* order : {"medium", "high"}) {
    app::Options o = test::small_options(n);
    o.order = order;
    v.push_back(o);
  }
  app::Options f = test::small_options(n);
  f.order = "high";
  f.boundary = "free";
  v.push_back(f);
  f.profile = "beatnik";
  v.push_back(f);
  return v;
}

std::string name(const app::Options& o) { return o.order + "/" + o.boundary + "/" + o.profile; }

}  // namespace

// O3: a flat interface at any height with ϖ = 0 does not move; nothing moves with A = 0 or
// g = 0 and ϖ = 0, whatever the shape.
TEST(BROrders, SteadyStatesStayExactly) {
  for (app::Options o : br_setups(12)) {
    double scale = 0;
    const auto flat = max_rate(o, [](int c, double x, double y) { return c == 0 ? x : c == 1 ? y : c == 2 ? 0.3 : 0.0; }, &scale);
    EXPECT_EQ(flat[0] + flat[1] + flat[2], 0.0) << name(o);
    EXPECT_LE(std::max(flat[3], flat[4]), 1e-12 * scale * 0.3) << name(o);
    auto wavy = [](int c, double x, double y) {
      return c == 0 ? x : c == 1 ? y : c == 2 ? 0.05 * std::cos(M_PI * x) * std::sin(M_PI * y + 0.2) : 0.0;
    };
    o.dt = 1e-3;
    app::Options a0 = o;
    a0.atwood = 0.0;
    const auto ra = max_rate(a0, wavy);
    for (int c = 0; c < 5; ++c) EXPECT_EQ(ra[c], 0.0) << name(o) << " A = 0, component " << c;
    app::Options g0 = o;
    g0.gravity = 0.0;
    const auto rg = max_rate(g0, wavy);
    for (int c = 0; c < 5; ++c) EXPECT_EQ(rg[c], 0.0) << name(o) << " g = 0, component " << c;
  }
}

// O8 at the operator level: on a flat sheet with ϖ = ∇ψ, the high- and medium-order
// interface velocity is the low-order one times c_H = exp(−√ε|k|) (1e-4, uniform weights,
// δ = 2Δ, N = 32), with zero in-plane velocity.
TEST(BROrders, FlatSheetVelocityIsLowOrderTimesCH) {
  const double a = 2.0 * M_PI;
  auto mode = [a](int c, double x, double y) {
    return c == 0 ? x : c == 1 ? y : c == 2 ? 0.0
         : c == 3 ? -a * std::sin(a * x) * std::cos(a * y) : -a * std::cos(a * x) * std::sin(a * y);
  };
  app::Options o = test::small_options(32);
  const double low = max_rate(o, mode)[2];
  const double cH = std::exp(-std::sqrt(0.25 * 2.0 / 32) * a * std::sqrt(2.0));
  for (const char* order : {"medium", "high"}) {
    o.order = order;
    const auto r = max_rate(o, mode);
    EXPECT_EQ(r[0] + r[1], 0.0) << order;
    EXPECT_NEAR(r[2] / low, cH, 1e-4) << order;
  }
}

// O8 in time: a small cos mode grows as h'' + μλh' − c·√2·A·g·d1·h = 0 with the discrete
// symbols of the 4th-order difference (d1) and the 9-point Laplacian (λ), and c = 1 at low
// order, c = c_H at high order. 25 steps of high order against that recursion.
TEST(BROrders, HighOrderLinearGrowthFollowsCH) {
  const int n = 32;
  const long steps = 24;
  app::Options o = test::small_options(n);
  o.magnitude = 1e-5;
  o.order = "high";
  const app::RunConfig c = test::config_for(o, MPI_COMM_WORLD);
  const auto high = test::run_and_gather(o, steps);
  o.order = "low";
  o.dt = c.dt;  // same step as the high-order run
  const auto low = test::run_and_gather(o, steps);
  if (test::world_rank() == 0) {
    const double D = c.geometry.spacing[0], a = 2.0 * M_PI, t = steps * c.dt;
    const double d1 = (8.0 * std::sin(a * D) - std::sin(2.0 * a * D)) / (6.0 * D);
    const double lam = (3.0 - 2.0 * std::cos(a * D) - std::cos(a * D) * std::cos(a * D)) / (D * D);
    const double cH = std::exp(-std::sqrt(c.model.epsilon) * a * std::sqrt(2.0));
    auto theory = [&](double cc) {
      const double b = c.model.mu * lam, k = cc * std::sqrt(2.0) * c.model.atwood * c.model.gravity * d1;
      const double rp = 0.5 * (-b + std::sqrt(b * b + 4 * k)), rm = 0.5 * (-b - std::sqrt(b * b + 4 * k));
      return (rp * std::exp(rm * t) - rm * std::exp(rp * t)) / (rp - rm);
    };
    const long centre = 5 * (long(n / 2) * n + n / 2) + model::kZ3;
    const double gh = high[centre] / 1e-5, gl = low[centre] / 1e-5;
    EXPECT_NEAR(gl, theory(1.0), 2e-4 * theory(1.0)) << "low-order growth";
    EXPECT_NEAR(gh, theory(cH), 2e-4 * theory(cH)) << "high-order growth";
    EXPECT_GT(gl - gh, 0.1 * (gl - 1.0)) << "high order must grow visibly slower";
  }
}

// Full runs on 1..P ranks equal the 1-rank run to 1e-12 (relative, per component) after each
// of the first steps; every ring strategy.
TEST(BROrders, RunsAreDecompositionInvariant) {
  for (app::Options o : br_setups(16)) {
    for (const std::string& strategy : test::ring_strategies()) {
      o.br_strategy = strategy;
      for (long s = 1; s <= 3; ++s) {
        const auto dist = test::run_and_gather(o, s);
        const auto ref = test::serial_reference(o, s);
        const double d = test::world_rank() == 0 ? test::max_rel_diff(dist, ref, 5) : 0.0;
        EXPECT_TRUE(test::all_ranks(d <= 1e-12)) << name(o) << " " << strategy << " step " << s << ": " << d;
      }
    }
  }
}

// README example 2 (-O high -I sech2 -m 0.1 -p 9 -b free -a 0.15 -M 2 -e 2) at n = 16 in the
// beatnik profile: the bump rises, stays finite and keeps the symmetries of the start
// (x ↔ y and x → −x), and the first step matches the ż = BR velocity of a bump (upwards).
TEST(BROrders, ReadmeExample2SmallRollUpRisesSymmetrically) {
  app::Options o = test::readme_example2_options(16);
  const int n = 16;
  const auto s0 = test::run_and_gather(o, 0);
  const auto s = test::run_and_gather(o, 30);
  if (test::world_rank() == 0) {
    auto z3 = [&](const std::vector<double>& v, int i, int j) { return v[5 * (long(i) * n + j) + model::kZ3]; };
    EXPECT_GT(z3(s, n / 2, n / 2), z3(s0, n / 2, n / 2) * 1.05);
    double asym = 0, scale = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        ASSERT_TRUE(std::isfinite(z3(s, i, j)));
        asym = std::max({asym, std::fabs(z3(s, i, j) - z3(s, j, i)), std::fabs(z3(s, i, j) - z3(s, n - 1 - i, j))});
        scale = std::max(scale, std::fabs(z3(s, i, j)));
      }
    EXPECT_LE(asym, 1e-12 * scale);
  }
}
