// Cutoff Birkhoff–Rott solver (MODEL.md §9, DECISIONS.md): against the exact solver where the
// cutoff covers every pair (free), against a serial brute-force "every image within c" sum
// written here (periodic, c wider than a rank's cell and than the box), decomposition,
// migration-strategy and partition invariance of full runs, and the reference's own cutoff run
// (shared/spec/reference-data/cut_f16, copied to tests/data).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "beatnik/comm/context.hpp"
#include "beatnik/comm/migrate/registry.hpp"
#include "beatnik/io/state_csv.hpp"
#include "beatnik/mesh/surface_mesh.hpp"
#include "beatnik/model/cutoff_br_solver.hpp"
#include "beatnik/model/exact_br_solver.hpp"
#include "beatnik/model/state.hpp"
#include "physics/br_surface_case.hpp"
#include "physics/br_test_surface.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {

using SurfaceCase = test::BRSurfaceCase;

app::Options cutoff_options(const char* profile, const char* boundary, int n, double cutoff) {
  app::Options o = test::small_options(n);
  o.profile = profile;
  o.boundary = boundary;
  o.order = "high";
  o.solver = "cutoff";
  o.cutoff = cutoff;
  o.epsilon = 0.5;
  return o;
}

// max |a − b| and max |b| over all ranks.
std::array<double, 2> compare(const std::vector<double>& a, const std::vector<double>& b) {
  double m[2] = {0, 0};
  for (size_t k = 0; k < a.size(); ++k) {
    m[0] = std::max(m[0], std::fabs(a[k] - b[k]));
    m[1] = std::max(m[1], std::fabs(b[k]));
  }
  MPI_Allreduce(MPI_IN_PLACE, m, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return {m[0], m[1]};
}

// Is the image point s within the cutoff of t? The consistent profile tests |r|² ≤ c² in double;
// the beatnik profile the reference's float32 test (reference-data/README.md).
bool within(const double t[3], const double s[3], double cutoff, bool float32) {
  if (!float32) {
    const double r[3] = {t[0] - s[0], t[1] - s[1], t[2] - s[2]};
    return r[0] * r[0] + r[1] * r[1] + r[2] * r[2] <= cutoff * cutoff;
  }
  volatile float d2 = 0.0f;  // no contraction: the reference's float arithmetic, term by term
  for (int k = 0; k < 3; ++k) {
    volatile float r = static_cast<float>(t[k]) - static_cast<float>(s[k]);
    volatile float rr = r * r;
    d2 = d2 + rr;
  }
  return std::sqrt(static_cast<float>(d2)) <= static_cast<float>(cutoff);
}

// Serial sum over every source node and every periodic image of it within the cutoff of the
// target node (ti, tj), straight from MODEL.md §7 and DECISIONS.md.
std::array<double, 3> brute_force(const app::RunConfig& c, int ti, int tj) {
  const auto& g = c.geometry;
  const bool beatnik = c.profile == app::Profile::Beatnik;
  const double dA = g.spacing[0] * g.spacing[1], eps = c.model.epsilon, cut = c.model.br.cutoff;
  const int K[2] = {g.periodic[0] ? static_cast<int>(std::ceil(cut / g.period[0])) + 2 : 0,
                    g.periodic[1] ? static_cast<int>(std::ceil(cut / g.period[1])) + 2 : 0};
  double t[3];
  for (int k = 0; k < 3; ++k) t[k] = test::br_test_position(g, k, ti, tj);
  std::array<double, 3> u{0, 0, 0};
  for (int si = 0; si < g.nodes[0]; ++si)
    for (int sj = 0; sj < g.nodes[1]; ++sj) {
      const double W = test::br_test_weight(g, c.nodes, si, sj, beatnik);
      double w[3];
      for (int k = 0; k < 3; ++k) w[k] = test::br_test_omega(k, si, sj);
      for (int a = -K[0]; a <= K[0]; ++a)
        for (int b = -K[1]; b <= K[1]; ++b) {
          const double s[3] = {test::br_test_position(g, 0, si, sj) + a * g.period[0],
                               test::br_test_position(g, 1, si, sj) + b * g.period[1],
                               test::br_test_position(g, 2, si, sj)};
          if (!within(t, s, cut, beatnik)) continue;
          test::br_test_add_pair(u, t, s, w, -dA * W / (4.0 * M_PI), eps);
        }
    }
  return u;
}

}  // namespace

// VALIDATION/MODEL §16.6: with free boundaries and a cutoff beyond every pair distance the
// cutoff sum is the exact sum, for every migration strategy and both partitions.
TEST(CutoffBR, EqualsTheExactSolverWhenTheCutoffCoversEveryPair) {
  for (const char* profile : {"consistent", "beatnik"})
    for (const std::string strategy : test::migrate_strategies())
      for (const char* partition : {"uniform", "balanced"}) {
        app::Options o = cutoff_options(profile, "free", 13, 10.0);
        o.migrate_strategy = strategy;
        o.spatial_partition = partition;
        SurfaceCase s(o);
        const auto cut = s.velocity<model::CutoffBRSolver>();
        const auto exact = s.velocity<model::ExactBRSolver>();
        const auto d = compare(cut, exact);
        EXPECT_GT(d[1], 0.0);
        EXPECT_LE(d[0], 1e-12 * d[1]) << profile << " " << strategy << " " << partition;
      }
}

// Periodic: every image within c, against the brute-force sum, for cutoffs inside a cell,
// wider than a rank's cell (2 ranks and more) and wider than the box itself (several images of
// one source, periodic self-images on 1 rank).
TEST(CutoffBR, PeriodicSumEqualsEveryImageWithinTheCutoff) {
  for (const char* profile : {"consistent", "beatnik"})
    for (double cutoff : {0.3, 1.3, 2.5}) {
      app::Options o = cutoff_options(profile, "periodic", 12, cutoff);
      SurfaceCase s(o);
      comm::CommStats stats;
      const auto u = s.velocity<model::CutoffBRSolver>(&stats);
      std::vector<double> ref;
      for (int i = 0; i < s.mesh->layout().ni; ++i)
        for (int j = 0; j < s.mesh->layout().nj; ++j) {
          const auto r = brute_force(s.c, s.gi(i), s.gj(j));
          ref.insert(ref.end(), r.begin(), r.end());
        }
      const auto d = compare(u, ref);
      EXPECT_GT(d[1], 0.0);
      EXPECT_LE(d[0], 1e-12 * d[1]) << profile << " c = " << cutoff << ": " << d[0] << " of " << d[1];
      // Particles go out (48 B) and their velocities come back (24 B): 72 B per node in all.
      const auto& m = stats.stats().at("migrate");
      long bytes = m.bytes[0] + m.bytes[1] + m.bytes[2];
      MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      EXPECT_EQ(bytes, 72L * s.mesh->global_nodes());
      // Every rank count makes ghosts here: neighbours' particles, or periodic self-images on 1 rank.
      const auto& gh = stats.stats().at("ghost");
      long ghost = gh.bytes[0] + gh.bytes[1] + gh.bytes[2];
      MPI_Allreduce(MPI_IN_PLACE, &ghost, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      EXPECT_GT(ghost, 0);
    }
}

namespace {

// The gathered state after each of `steps` steps (rank 0 of comm; empty elsewhere).
std::vector<std::vector<double>> states_per_step(const app::Options& o, int steps, MPI_Comm comm) {
  std::vector<std::vector<double>> out;
  if (comm == MPI_COMM_NULL) return out;
  app::Simulation sim(comm, test::config_for(o, comm));
  for (int s = 0; s < steps; ++s) {
    sim.step();
    out.push_back(io::gather_state(sim.mesh(), sim.state()));
  }
  return out;
}

}  // namespace

// Full high- and medium-order cutoff runs: every rank count, migration strategy and partition
// equals one rank, per step, to 1e-12.
TEST(CutoffBR, FullRunsAgreeAcrossRanksStrategiesAndPartitions) {
  std::vector<app::Options> setups;
  setups.push_back(cutoff_options("consistent", "periodic", 14, 0.35));
  setups.push_back(cutoff_options("beatnik", "free", 14, 0.5));
  setups.back().initial_condition = "sech2";
  setups.back().magnitude = 0.1;
  setups.back().period = 9.0;
  setups.push_back(cutoff_options("consistent", "periodic", 14, 0.35));
  setups.back().order = "medium";
  for (app::Options& o : setups) o.magnitude = o.initial_condition == "cos" ? 0.2 : o.magnitude;
  const int steps = 3;
  for (const app::Options& base : setups) {
    MPI_Comm one = test::first_ranks(1);
    const auto serial = states_per_step(base, steps, one);
    if (one != MPI_COMM_NULL) MPI_Comm_free(&one);
    for (const std::string strategy : test::migrate_strategies())
      for (const char* partition : {"uniform", "balanced"}) {
        app::Options o = base;
        o.migrate_strategy = strategy;
        o.spatial_partition = partition;
        const auto run = states_per_step(o, steps, MPI_COMM_WORLD);
        if (test::world_rank() != 0) continue;
        for (int s = 0; s < steps; ++s)
          EXPECT_LE(test::max_rel_diff(run[s], serial[s], 5), 1e-12)
              << base.order << "/" << base.boundary << "/" << base.profile << " " << strategy << " " << partition
              << " step " << s + 1;
      }
  }
}

namespace {

// Rows "i j x y z w1 w2" of a reference file -> 5 values per node in (i, j) order, n × n nodes.
std::vector<double> read_reference(const std::string& path, int n) {
  std::ifstream in(path);
  std::vector<double> v(5 * size_t(n) * n, NAN);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    int i = 0, j = 0;
    double x[5];
    row >> i >> j >> x[0] >> x[1] >> x[2] >> x[3] >> x[4];
    for (int c = 0; c < 5; ++c) v[5 * (size_t(i) * n + j) + c] = x[c];
  }
  return v;
}

}  // namespace

// The reference's own cutoff run (beatnik profile, float32 neighbour test, Simpson weights):
// -n 16 -O high -S cutoff -c 0.5 -I sech2 -m 0.1 -p 9.0 -b free -a 0.15 -M 2 -e 2, after 1 and
// 20 steps, to 1e-10 relative per component, on every rank count.
TEST(CutoffBR, ReproducesTheReferenceCutoffRun) {
  app::Options o = test::readme_example2_options(16);
  o.solver = "cutoff";
  o.cutoff = 0.5;
  app::Simulation sim(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
  for (int step = 1; step <= 20; ++step) {
    sim.step();
    if (step != 1 && step != 20) continue;
    const auto got = io::gather_state(sim.mesh(), sim.state());
    if (test::world_rank() != 0) continue;
    char name[64];
    std::snprintf(name, sizeof name, "/step%05d.txt", step);
    const auto ref = read_reference(std::string(BEATNIK_TEST_DATA) + "/cut_f16" + name, 16);
    for (int c = 0; c < 5; ++c) {
      double err = 0, scale = 0;
      for (size_t k = c; k < ref.size(); k += 5) {
        err = std::max(err, std::fabs(got[k] - ref[k]));
        scale = std::max(scale, std::fabs(ref[k]));
      }
      EXPECT_LE(err, 1e-10 * scale) << "component " << c << " at step " << step << ": " << err << " of " << scale;
    }
  }
}
