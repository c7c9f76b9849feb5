// Exact Birkhoff–Rott solver: the distributed ring-pass sum against a serial all-pairs triple
// loop written here from MODEL.md §7 and DECISIONS.md (weights and images per profile), every
// ring strategy of comm/ring/registry, periodic and free, on every rank count the test runs
// with; the strategies against each other, bitwise (one call and full high-order runs); the
// two-point formula (VALIDATION O9c); a flat sheet with one mode (O9a: u_tan = 0,
// u3 = −½ c_H |k| ψ).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "beatnik/comm/context.hpp"
#include "beatnik/mesh/surface_mesh.hpp"
#include "beatnik/model/br_block.hpp"
#include "beatnik/model/exact_br_solver.hpp"
#include "beatnik/model/state.hpp"
#include "physics/br_test_surface.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {

struct Case {
  std::string profile, boundary, strategy;
  int nodes;
  int images = 1;
};

double pos(const mesh::Geometry& g, int c, int gi, int gj) { return test::br_test_position(g, c, gi, gj); }
double omega(int c, int gi, int gj) { return test::br_test_omega(c, gi, gj); }

// a₀ = ⌊r/L + ½ + ζ⌋ (ζ = 2⁻²⁰, br_kernel.hpp) evaluated exactly: the rounded floor can land
// on the wrong side of a tie, and the tests use L = 2 so (a ± ½)·L is exact.
int nearest_image(double r, double L) {
  r += 0x1p-20 * L;
  int a = static_cast<int>(std::floor(r / L + 0.5));
  while ((a + 0.5) * L <= r) ++a;
  while ((a - 0.5) * L > r) --a;
  return a;
}

// Serial all-pairs velocity at target (ti, tj), straight from the formulas.
std::array<double, 3> serial_br(const app::RunConfig& c, int ti, int tj) {
  const auto& g = c.geometry;
  const int N0 = g.nodes[0], N1 = g.nodes[1];
  const bool beatnik = c.profile == app::Profile::Beatnik;
  const int K = beatnik ? 1 : c.model.br.images;
  const double dA = g.spacing[0] * g.spacing[1], eps = c.model.epsilon;
  const double t[3] = {pos(g, 0, ti, tj), pos(g, 1, ti, tj), pos(g, 2, ti, tj)};
  std::array<double, 3> u{0, 0, 0};
  for (int si = 0; si < N0; ++si)
    for (int sj = 0; sj < N1; ++sj) {
      const double W = test::br_test_weight(g, c.nodes, si, sj, beatnik);
      const double s[3] = {pos(g, 0, si, sj), pos(g, 1, si, sj), pos(g, 2, si, sj)};
      const double w[3] = {omega(0, si, sj), omega(1, si, sj), omega(2, si, sj)};
      int a0 = 0, b0 = 0, ka = 0, kb = 0;
      if (g.periodic[0]) {
        ka = K;
        if (!beatnik) a0 = nearest_image(t[0] - s[0], g.period[0]);
      }
      if (g.periodic[1]) {
        kb = K;
        if (!beatnik) b0 = nearest_image(t[1] - s[1], g.period[1]);
      }
      for (int a = a0 - ka; a <= a0 + ka; ++a)
        for (int b = b0 - kb; b <= b0 + kb; ++b) {
          const double img[3] = {s[0] + a * g.period[0], s[1] + b * g.period[1], s[2]};
          test::br_test_add_pair(u, t, img, w, -dA * W / (4.0 * M_PI), eps);
        }
    }
  return u;
}

struct Result {
  double err = 0, scale = 0;  // max |u − u_serial|, max |u_serial| over all ranks
  std::vector<double> u;      // this rank's owned velocities
  comm::PatternStats ring;    // this rank's "ring" bytes and messages
};

Result run_case(const Case& k) {
  app::Options o = test::small_options(k.nodes);
  o.profile = k.profile;
  o.boundary = k.boundary;
  o.order = "high";
  o.br_strategy = k.strategy;
  o.br_images = k.images;
  o.epsilon = 0.5;
  const app::RunConfig c = test::config_for(o, MPI_COMM_WORLD);
  comm::Context ctx(MPI_COMM_WORLD);
  mesh::SurfaceMesh mesh(ctx, c.geometry, c.procs);
  const GhostedLayout L = mesh.layout(), owned{L.ni, L.nj, 0};
  mesh::Field state(exec::Space::Host, L, model::kStateComps), om(exec::Space::Host, owned, 3),
      out(exec::Space::Host, owned, 3);
  const auto s = state.view(), w = om.view();
  const int gi0 = mesh.owned().lo[0], gj0 = mesh.owned().lo[1];
  for (int i = 0; i < L.ni; ++i)
    for (int j = 0; j < L.nj; ++j)
      for (int cc = 0; cc < 3; ++cc) {
        s(cc, i, j) = pos(c.geometry, cc, gi0 + i, gj0 + j);
        w(cc, i, j) = omega(cc, gi0 + i, gj0 + j);
      }
  comm::CommStats stats;
  model::ExactBRSolver solver(mesh, exec::Space::Host, c.model.br, c.model.epsilon, &stats, nullptr);
  solver.velocity(state, om, out);
  Result r;
  const auto u = out.view();
  for (int i = 0; i < L.ni; ++i)
    for (int j = 0; j < L.nj; ++j) {
      const auto ref = serial_br(c, gi0 + i, gj0 + j);
      for (int cc = 0; cc < 3; ++cc) {
        r.err = std::max(r.err, std::fabs(u(cc, i, j) - ref[cc]));
        r.scale = std::max(r.scale, std::fabs(ref[cc]));
        r.u.push_back(u(cc, i, j));
      }
    }
  MPI_Allreduce(MPI_IN_PLACE, &r.err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &r.scale, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  // Only owned data travels: 6 doubles per node to the next rank, P−1 rounds.
  if (test::world_size() > 1) {
    const auto& ps = stats.stats().at("ring");
    const long sent = ps.bytes[0] + ps.bytes[1] + ps.bytes[2];
    long expect = 0;
    for (int q = 1; q < test::world_size(); ++q) {
      const int origin = (mesh.grid().rank() - q + 1 + test::world_size()) % test::world_size();
      expect += 6 * long(sizeof(double)) * mesh.decomposition().owned(origin).extent(0) *
                mesh.decomposition().owned(origin).extent(1);
    }
    EXPECT_EQ(sent, expect);
    r.ring = ps;
  }
  return r;
}

}  // namespace

TEST(ExactBR, DistributedRingEqualsSerialAllPairsForEveryProfileBoundaryAndStrategy) {
  std::vector<Case> cases;
  for (const std::string& strategy : test::ring_strategies()) {
    for (const char* profile : {"consistent", "beatnik"})
      for (const char* boundary : {"periodic", "free"}) cases.push_back({profile, boundary, strategy, 14});
    cases.push_back({"consistent", "periodic", strategy, 13, 2});  // 5x5 centred images, odd N
  }
  for (const auto& k : cases) {
    const Result r = run_case(k);
    EXPECT_GT(r.scale, 0.0);
    EXPECT_LE(r.err, 1e-13 * r.scale) << k.profile << " " << k.boundary << " " << k.strategy << " K=" << k.images
                                      << ": max error " << r.err << " of " << r.scale;
  }
}

// Every strategy visits the blocks in the same order, so the sums are bitwise those of the
// first strategy (blocking), and the ring counts the same bytes and messages.
TEST(ExactBR, EveryRingStrategyGivesBitwiseTheSameSumsAndBytes) {
  const std::vector<std::string> names = test::ring_strategies();
  ASSERT_GE(names.size(), 4u) << "blocking, overlap, persistent and rma all run on the host";
  for (const char* boundary : {"periodic", "free"}) {
    const Result a = run_case({"consistent", boundary, names[0], 15});
    for (std::size_t n = 1; n < names.size(); ++n) {
      const Result b = run_case({"consistent", boundary, names[n], 15});
      long differ = 0;
      for (size_t k = 0; k < a.u.size(); ++k) differ += a.u[k] != b.u[k];
      EXPECT_TRUE(test::all_ranks(differ == 0 && a.u.size() == b.u.size()))
          << boundary << ": " << names[n] << " differs from " << names[0] << " in " << differ << " velocities";
      bool same = a.ring.calls == b.ring.calls;
      for (int l = 0; l < 3; ++l) same = same && a.ring.bytes[l] == b.ring.bytes[l] && a.ring.messages[l] == b.ring.messages[l];
      EXPECT_TRUE(test::all_ranks(same)) << boundary << ": " << names[n] << " counted other ring bytes or messages";
    }
  }
}

// Whole high-order runs (every stage of every step calls the ring again, so persistent
// requests and windows are reused): every strategy bitwise equal to the first, periodic and
// the reference's free roll-up.
TEST(ExactBR, FullHighOrderRunWithEveryRingStrategyEqualsBlocking) {
  const std::vector<std::string> names = test::ring_strategies();
  ASSERT_EQ(names[0], "blocking");
  app::Options periodic = test::small_options(16);
  periodic.order = "high";
  periodic.magnitude = 0.2;
  for (app::Options o : {periodic, test::readme_example2_options(16)}) {
    o.br_strategy = names[0];
    const auto ref = test::run_and_gather(o, 3);
    if (test::world_rank() == 0) EXPECT_EQ(ref.size(), 5u * 16 * 16);
    for (std::size_t n = 1; n < names.size(); ++n) {
      o.br_strategy = names[n];
      const auto run = test::run_and_gather(o, 3);
      EXPECT_TRUE(test::all_ranks(run == ref)) << o.profile << "/" << o.boundary << ": " << names[n]
                                               << " run differs from " << names[0];
    }
  }
}

// VALIDATION O9(c): two isolated points, term by term.
TEST(ExactBR, TwoPointsFollowTheDesingularisedFormula) {
  const double src[6 * 2] = {0.1, -0.3, 0.2, 0.5, 0.05, -0.1, 0.3, -0.2, 0.7, 0.4, -0.6, 0.2};  // x|y|z|q per point
  const double tgt[3 * 2] = {0.1, -0.3, 0.2, 0.5, 0.05, -0.1};
  double acc[6] = {};
  model::BRBlockArgs a;
  a.targets = tgt;
  a.nt = 2;
  a.t0 = 0;
  a.t1 = 2;
  a.sources = src;
  a.ns = 2;
  a.images.k = 0;
  a.eps = 0.01;
  a.acc = acc;
  model::br_block_host(a);
  // Point 0 at (0.1, 0.2, 0.05) with q = (0.3, 0.7, −0.6); point 1 at (−0.3, 0.5, −0.1), q = (−0.2, 0.4, 0.2).
  const double p[2][3] = {{0.1, 0.2, 0.05}, {-0.3, 0.5, -0.1}}, q[2][3] = {{0.3, 0.7, -0.6}, {-0.2, 0.4, 0.2}};
  for (int t = 0; t < 2; ++t) {
    const int s = 1 - t;  // the self term is exactly zero
    const double r[3] = {p[t][0] - p[s][0], p[t][1] - p[s][1], p[t][2] - p[s][2]};
    const double d = std::pow(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + 0.01, 1.5);
    const double u[3] = {(q[s][1] * r[2] - q[s][2] * r[1]) / d, (q[s][2] * r[0] - q[s][0] * r[2]) / d,
                         (q[s][0] * r[1] - q[s][1] * r[0]) / d};
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(acc[c * 2 + t], u[c], 1e-14 * std::fabs(u[c]) + 1e-300);
  }
}

// VALIDATION O9(a): flat periodic sheet, ϖ = ∇ψ with ψ = cos(2πx)cos(2πy): in-plane velocity
// exactly zero, u3 = −½ c_H |k| ψ with c_H = exp(−√ε |k|) within 1e-4 (uniform weights,
// δ = √ε = 2Δ, N = 32).
TEST(ExactBR, FlatSheetSingleModeFollowsTheFilteredRieszSymbol) {
  app::Options o = test::small_options(32);
  o.order = "high";
  o.epsilon = 0.25;  // ε = 0.25·Δ = 4Δ² with Δ = 1/16: δ = 2Δ
  const app::RunConfig c = test::config_for(o, MPI_COMM_WORLD);
  comm::Context ctx(MPI_COMM_WORLD);
  mesh::SurfaceMesh mesh(ctx, c.geometry, c.procs);
  const GhostedLayout L = mesh.layout(), owned{L.ni, L.nj, 0};
  mesh::Field state(exec::Space::Host, L, model::kStateComps), om(exec::Space::Host, owned, 3),
      out(exec::Space::Host, owned, 3);
  const double a = 2.0 * M_PI, kk = a * std::sqrt(2.0);
  const auto s = state.view(), w = om.view();
  std::vector<double> psi;
  for (int i = 0; i < L.ni; ++i)
    for (int j = 0; j < L.nj; ++j) {
      const double x = c.geometry.position(0, mesh.owned().lo[0] + i), y = c.geometry.position(1, mesh.owned().lo[1] + j);
      s(0, i, j) = x;
      s(1, i, j) = y;
      s(2, i, j) = 0.0;
      const double w1 = -a * std::sin(a * x) * std::cos(a * y), w2 = -a * std::cos(a * x) * std::sin(a * y);
      w(0, i, j) = w2;  // ω = w2·z_x − w1·z_y with z_x = e1, z_y = e2
      w(1, i, j) = -w1;
      w(2, i, j) = 0.0;
      psi.push_back(std::cos(a * x) * std::cos(a * y));
    }
  model::ExactBRSolver solver(mesh, exec::Space::Host, c.model.br, c.model.epsilon, nullptr, nullptr);
  solver.velocity(state, om, out);
  const auto u = out.view();
  double tangential = 0, num = 0, den = 0;
  for (int i = 0, k = 0; i < L.ni; ++i)
    for (int j = 0; j < L.nj; ++j, ++k) {
      tangential = std::max({tangential, std::fabs(u(0, i, j)), std::fabs(u(1, i, j))});
      const double model = -0.5 * kk * psi[k];
      num += u(2, i, j) * model;
      den += model * model;
    }
  double sums[2] = {num, den};
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &tangential, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const double cH = sums[0] / sums[1], expect = std::exp(-std::sqrt(c.model.epsilon) * kk);
  EXPECT_EQ(tangential, 0.0);
  EXPECT_NEAR(cH, expect, 1e-4) << "measured c_H " << cH;
}
