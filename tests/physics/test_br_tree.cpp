// Treecode Birkhoff–Rott solver (-S tree, docs/tree.md) and the run-time accuracy check
// (--br-check): the check against an error computed here from the exact solver's velocities
// (1–4 ranks, the cutoff solver's error falls as c grows); the tree with θ = 0 against the
// exact solver; the tree's measured error against the exact solver at each tolerance, on a
// periodic multi-mode surface and on a free sech² surface after roll-up has begun; the error
// falling with the degree; run-to-run bitwise reproducibility; every LET strategy the same bits.
// The tree tests run on every rank count (particles on the spatial decomposition, the LET).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>

#include "beatnik/app/br_check_report.hpp"
#include "beatnik/comm/context.hpp"
#include "beatnik/comm/let/registry.hpp"
#include "beatnik/mesh/surface_mesh.hpp"
#include "beatnik/model/br_check.hpp"
#include "beatnik/model/cutoff_br_solver.hpp"
#include "beatnik/model/exact_br_solver.hpp"
#include "beatnik/model/br_targets_host.hpp"
#include "beatnik/model/state.hpp"
#include "beatnik/model/tree_br_solver.hpp"
#include "beatnik/model/tree_edge.hpp"
#include "beatnik/model/tree_interp.hpp"
#include "beatnik/model/tree_pull.hpp"
#include "beatnik/search/cluster_tree.hpp"
#include "physics/br_surface_case.hpp"
#include "physics/br_test_surface.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {

int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

using SurfaceCase = test::BRSurfaceCase;

// Relative 2-norm and max-norm differences (3 values per node), over all ranks of comm.
std::array<double, 2> rel_error(const std::vector<double>& a, const std::vector<double>& ref, MPI_Comm comm) {
  double s[2] = {0, 0}, m[2] = {0, 0};
  for (size_t k = 0; k < a.size(); k += 3) {
    double d2 = 0, e2 = 0;
    for (int c = 0; c < 3; ++c) {
      d2 += (a[k + c] - ref[k + c]) * (a[k + c] - ref[k + c]);
      e2 += ref[k + c] * ref[k + c];
    }
    s[0] += d2;
    s[1] += e2;
    m[0] = std::max(m[0], std::sqrt(d2));
    m[1] = std::max(m[1], std::sqrt(e2));
  }
  MPI_Allreduce(MPI_IN_PLACE, s, 2, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, m, 2, MPI_DOUBLE, MPI_MAX, comm);
  return {std::sqrt(s[0] / s[1]), m[0] / m[1]};
}

}  // namespace

// --br-check against the error computed here from the exact solver's velocities at the same
// samples (chosen here by the documented rule), for the cutoff solver at growing c: the check
// agrees, the error is non-zero and falls as c grows. Every rank count checks the same nodes.
TEST(BRCheck, AgreesWithTheErrorAgainstTheExactSolver) {
  const long K = 37;
  double last = HUGE_VAL;
  for (double cutoff : {0.4, 0.8, 1.6}) {
    app::Options o = test::br_options("consistent", "periodic", 16);
    SurfaceCase s(o, MPI_COMM_WORLD);
    model::BRSettings b = s.c.model.br;
    b.cutoff = cutoff;
    b.check_samples = K;
    const auto exact = s.velocity<model::ExactBRSolver>(b);
    const auto cut = s.velocity<model::CutoffBRSolver>(b);  // leaves `out` = the cutoff velocities
    model::BRCheck check(*s.mesh, b, s.c.model.epsilon, nullptr);
    check.run(s.state, s.omega, s.out);
    const app::BRCheckStep got = app::reduce_br_check(check.take(), 1, MPI_COMM_WORLD);
    // The same samples by the rule ⌊(2k+1)·N/2K⌋ on the global index gi·n + gj.
    const long N = s.mesh->global_nodes(), ny = s.c.geometry.nodes[1];
    std::vector<double> a, ref;
    for (long k = 0; k < K; ++k) {
      const long g = (2 * k + 1) * N / (2 * K);
      const int gi = static_cast<int>(g / ny), gj = static_cast<int>(g % ny);
      const auto& own = s.mesh->owned();
      if (gi < own.lo[0] || gi >= own.hi[0] || gj < own.lo[1] || gj >= own.hi[1]) continue;
      const long q = 3 * (long(gi - own.lo[0]) * s.mesh->layout().nj + (gj - own.lo[1]));
      for (int c = 0; c < 3; ++c) {
        a.push_back(cut[q + c]);
        ref.push_back(exact[q + c]);
      }
    }
    const auto want = rel_error(a, ref, MPI_COMM_WORLD);
    EXPECT_EQ(got.samples, K);
    EXPECT_GT(want[0], 1e-6) << "c = " << cutoff;
    EXPECT_NEAR(got.rms_rel, want[0], 1e-9 * want[0]) << "c = " << cutoff;
    EXPECT_NEAR(got.max_rel, want[1], 1e-9 * want[1]) << "c = " << cutoff;
    EXPECT_LT(got.rms_rel, last) << "c = " << cutoff;
    last = got.rms_rel;
  }
}

// θ = 0 opens every cluster: the tree sums every pair directly and equals the exact solver,
// periodic and free, in both profiles' image rules, with either spatial partition — on any rank
// count (the LET then carries every source of the other ranks).
TEST(TreeBR, ThetaZeroEqualsTheExactSolver) {
  for (const char* profile : {"consistent", "beatnik"})
    for (const char* boundary : {"periodic", "free"})
      for (auto partition : {mesh::SpatialPartition::Uniform, mesh::SpatialPartition::Balanced}) {
        SurfaceCase s(test::br_options(profile, boundary, 24), MPI_COMM_WORLD);
        model::BRSettings b = s.c.model.br;
        b.tree_theta = 0.0;
        b.tree_leaf = 7;
        b.partition = partition;
        const auto exact = s.velocity<model::ExactBRSolver>(b);
        const auto tree = s.velocity<model::TreeBRSolver>(b);
        const auto e = rel_error(tree, exact, MPI_COMM_WORLD);
        EXPECT_LE(e[1], 1e-12) << profile << " " << boundary << " " << mesh::to_string(partition);
      }
}

namespace {

// The tree's error against the exact solver on `s` with (θ, degree); asserts that the far field
// was used when `far` (at 48² a degree-12 cluster never has more sources than proxies while
// well separated: TOL 1e-9 sums every pair directly there).
double tree_error(SurfaceCase& s, double theta, int degree, bool far = true, int leaf = 32,
                  mesh::SpatialPartition partition = mesh::SpatialPartition::Uniform, long* pairs = nullptr,
                  bool dual = false, double edge_margin = model::tree::kEdgeMargin) {
  model::BRSettings b = s.c.model.br;
  b.tree_dual = dual;
  b.tree_edge_margin = edge_margin;
  b.partition = partition;
  b.tree_theta = theta;
  b.tree_degree = degree;
  b.tree_leaf = leaf;
  const auto exact = s.velocity<model::ExactBRSolver>(b);
  model::TreeBRSolver tree(*s.mesh, exec::Space::Host, b, s.c.model.epsilon, nullptr, nullptr);
  tree.velocity(s.state, s.omega, s.out);
  const auto loads = tree.take_loads();
  long terms = loads.at(0).cluster_terms, cost = loads.at(0).direct_pairs + loads.at(0).proxy_pairs;
  MPI_Allreduce(MPI_IN_PLACE, &terms, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &cost, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (pairs) *pairs = cost;
  if (far) EXPECT_GT(terms, 0) << "the far field was not used";
  return rel_error(s.owned_out(), exact, MPI_COMM_WORLD)[0];
}

// The reference's README example 2 (free, sech²) in the consistent profile, run with the cutoff
// solver (c = 0.5, cheap) to reach roll-up.
app::Options rolled_up_sech2() {
  app::Options o = test::readme_example2_options(48);
  o.profile = "consistent";
  o.solver = "cutoff";
  o.cutoff = 0.5;
  return o;
}

// The surfaces of the tolerance table (48²): the periodic multi-mode cosine after 5 steps and the
// free sech² after 40 (0.8 τ), with the steps to run.
std::vector<std::pair<app::Options, int>> tolerance_surfaces() {
  app::Options cos = test::br_options("consistent", "periodic", 48);
  cos.initial_condition = "cos";
  cos.magnitude = 0.1;
  cos.period = 3.0;
  return {{cos, 5}, {rolled_up_sech2(), 40}};
}

// Copies the positions and ω a run on all ranks reached after `steps` steps into s (the same
// options and ranks: the same decomposition).
void from_run(SurfaceCase& s, const app::Options& o, int steps) {
  app::Simulation sim(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
  for (int k = 0; k < steps; ++k) sim.step();
  sim.model().gather(sim.state());
  sim.model().birkhoff_rott(sim.state(), false);  // ω of the reached state (and its velocity)
  const mesh::FieldView st = sim.state().view(), w = sim.model().omega_field().view();
  for (int i = 0; i < s.mesh->layout().ni; ++i)
    for (int j = 0; j < s.mesh->layout().nj; ++j) {
      for (int c = 0; c < 3; ++c) {
        s.state.view()(c, i, j) = st(c, i, j);
        s.omega.view()(c, i, j) = w(c, i, j);
      }
    }
}

}  // namespace

// For each tolerance the table's (θ, degree) give a relative 2-norm error within it: the
// periodic multi-mode cosine surface, and a free sech² surface after roll-up has begun, on any
// rank count (which clusters are used depends on it), the cosine on the balanced partition.
TEST(TreeBR, MeasuredErrorWithinTheTolerance) {
  for (const auto& [o, steps] : tolerance_surfaces()) {
    SurfaceCase s(o, MPI_COMM_WORLD);
    from_run(s, o, steps);
    const auto partition =
        o.boundary == "periodic" ? mesh::SpatialPartition::Balanced : mesh::SpatialPartition::Uniform;
    for (double tol : {1e-3, 1e-6, 1e-9}) {
      // The far field must be used at TOL 1e-3, and at 1e-6 on up to 3 ranks (on 4, a rank's
      // 576 particles make clusters too small for degree-10 proxy sets on one of the surfaces).
      const bool far = tol >= 1e-3 || (tol >= 1e-6 && world_size() < 4);
      for (bool dual : {false, true}) {  // both traversals (--tree-traversal), each with its table
        const model::TreeParameters t = model::tree_parameters(tol, dual);
        const double e = tree_error(s, t.theta, t.degree, far, 32, partition, nullptr, dual, t.edge_margin);
        EXPECT_LE(e, tol) << o.initial_condition << " TOL " << tol << " dual " << dual;
        if (test::world_rank() == 0)  // the margins docs/tree.md quotes
          std::printf("%s TOL %g %s: error %.2e\n", o.initial_condition.c_str(), tol, dual ? "dual" : "single", e);
        EXPECT_GT(e, 0.0);
      }
    }
  }
}

// Every LET strategy gives bitwise the velocities of alltoallv on the same ranks, with the far
// field in use and (on more than one rank) LET bytes under the pattern "let" only between
// different ranks; the same strategy twice gives the same bits.
TEST(TreeBR, EveryLetStrategyGivesTheSameVelocities) {
  app::Options o = test::br_options("consistent", "periodic", 48);
  o.initial_condition = "cos";
  o.magnitude = 0.1;
  o.period = 3.0;
  SurfaceCase s(o, MPI_COMM_WORLD);
  model::BRSettings b = s.c.model.br;
  b.tree_theta = 0.5;
  b.tree_degree = 6;
  b.tree_leaf = 32;
  b.partition = mesh::SpatialPartition::Balanced;
  std::vector<double> ref;
  for (const auto& e : comm::let::registry()) {
    b.let_strategy = e.name;
    comm::CommStats stats;
    const auto u = s.velocity<model::TreeBRSolver>(b, &stats);
    const auto again = s.velocity<model::TreeBRSolver>(b);
    EXPECT_EQ(u, again) << e.name << ": not reproducible";
    if (ref.empty()) ref = u;
    else EXPECT_EQ(u, ref) << e.name << " differs from " << comm::let::registry().front().name;
    const auto& all = stats.stats();
    const auto it = all.find("let");
    long bytes[3] = {0, 0, 0};
    if (it != all.end())
      for (int l = 0; l < 3; ++l) bytes[l] = it->second.bytes[l];
    MPI_Allreduce(MPI_IN_PLACE, bytes, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(bytes[0], 0) << e.name << ": a rank sent itself LET bytes";
    if (world_size() > 1) EXPECT_GT(bytes[1] + bytes[2], 0) << e.name << ": no LET travelled";
  }
}

// At fixed θ the error falls as the degree rises: by 3–5× a step of 2 on one rank, but not at
// every step on every decomposition (3 ranks, with the opened clusters' proxies in the LET:
// 5.3e-5 at degree 7, 6.0e-5 at 9, 1.7e-5 at 11 on this 48² case), so it is checked over
// steps of 4 (< 0.6×) and over the whole range (degree 11 < 1 % of degree 1); the same run
// twice gives the same bits.
TEST(TreeBR, ErrorFallsWithTheDegreeAndRunsAreReproducible) {
  SurfaceCase s(test::br_options("consistent", "periodic", 48), MPI_COMM_WORLD);
  std::vector<double> e;
  const std::vector<int> degrees{1, 3, 5, 7, 9, 11};
  for (int degree : degrees) e.push_back(tree_error(s, 0.6, degree));
  for (size_t k = 2; k < e.size(); ++k)
    EXPECT_LT(e[k], 0.6 * e[k - 2]) << "degree " << degrees[k] << " against " << degrees[k - 2];
  EXPECT_LT(e.back(), 0.01 * e.front());
  model::BRSettings b = s.c.model.br;
  b.tree_theta = 0.6;
  b.tree_degree = 6;
  b.tree_leaf = 32;
  const auto u1 = s.velocity<model::TreeBRSolver>(b);
  const auto u2 = s.velocity<model::TreeBRSolver>(b);
  EXPECT_EQ(u1, u2);
}

// Not a check: the measurement behind tree_parameters' table (docs/tree.md), run by hand with
// --gtest_also_run_disabled_tests --gtest_filter=*ToleranceTable: the error and the cost (direct
// + proxy pairs; at 48² they rank the choices poorly: docs/tree.md measures the cost at 256²),
// for each traversal (each has its column in tree_parameters).
TEST(TreeBR, DISABLED_ToleranceTable) {
  for (const auto& [o, steps] : tolerance_surfaces()) {
    SurfaceCase s(o, MPI_COMM_WORLD);
    from_run(s, o, steps);
    for (bool dual : {false, true})
      for (double theta : {0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7})
        for (int p : {2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 16}) {
          long pairs = 0;
          const double e = tree_error(s, theta, p, false, 32, mesh::SpatialPartition::Uniform, &pairs, dual);
          if (test::world_rank() == 0)
            printf("%s %s theta %.2f p %d err %.3e pairs %ld\n", o.initial_condition.c_str(),
                   dual ? "dual" : "single", theta, p, e, pairs);
        }
  }
}

namespace {

// A tree over n pseudo-random points in a box of side `side` (thin in z, as a surface), with
// made-up proxy sets (8 proxies of made-up values on every cluster with more than 8 sources):
// the LET's rules read only which clusters have proxies, never their values.
model::tree::SourceTree random_tree(long n, int leaf, double side, unsigned seed) {
  std::vector<double> p(6 * n);
  unsigned s = seed;
  auto next = [&s] {
    s = s * 1664525u + 1013904223u;
    return (s >> 8) / double(1u << 24);
  };
  for (long k = 0; k < n; ++k) {
    p[k] = side * (next() - 0.5);
    p[n + k] = side * (next() - 0.5);
    p[2 * n + k] = 0.05 * side * (next() - 0.5);
    for (int c = 3; c < 6; ++c) p[c * n + k] = next() - 0.5;
  }
  search::ClusterTree tree;
  tree.build(p.data(), p.data() + n, p.data() + 2 * n, n, leaf);
  model::tree::SourceTree t;
  t.n = n;
  t.clusters = tree.clusters();
  t.full.assign(t.clusters.size(), 1);
  t.pts.resize(6 * n);
  for (long q = 0; q < n; ++q)
    for (int c = 0; c < 6; ++c) t.pts[c * n + q] = p[c * n + tree.order()[q]];
  for (const auto& C : t.clusters) {
    const bool has = C.count() > 8;
    t.proxy_start.push_back(has ? long(t.proxies.size()) : -1);
    t.proxy_count.push_back(has ? 8 : 0);
    for (int k = 0; has && k < 48; ++k) t.proxies.push_back(next());
  }
  return t;
}

int depth(const std::vector<search::Cluster>& cl, int c = 0) {
  return cl[c].leaf() ? 0 : 1 + std::max(depth(cl, cl[c].child[0]), depth(cl, cl[c].child[1]));
}

}  // namespace

// The pulled LET (model/tree_pull.hpp, what --let-strategy rma runs) is, double for double, the
// block the owner pushes (pack_let), for target boxes near, far, overlapping and straddling the
// periodic window's edge, periodic and free, several θ — with the owner's sections served here
// span by span as the strategy would fetch them; and a walk takes one round per tree level
// plus one for the data, never one per cluster.
TEST(TreeLet, PulledBlockEqualsThePushedBlock) {
  const double L = 2.0;
  const model::tree::SourceTree owner = random_tree(3000, 16, L, 7);
  const int levels = depth(owner.clusters) + 1;
  std::vector<double> records;
  const std::vector<comm::let::Section> sec = model::tree::expose(owner, records);
  std::vector<long> sizes;
  for (const auto& x : sec) sizes.push_back(x.size);
  const model::tree::SourceTree others = random_tree(2000, 16, L, 11);
  int compared = 0, whole = 0;
  for (bool periodic : {true, false})
    for (double theta : {0.0, 0.3, 0.5, 0.8})
    for (bool edge : {false, true}) {  // edge: clusters cut by T's window edge travel whole
      model::BRImages img;
      img.k = 1;
      img.centred = true;
      img.period[0] = img.period[1] = periodic ? L : 0.0;
      const model::tree::Rules rules = model::tree::make_rules(img, theta, edge);
      // Target boxes: another tree's clusters (the whole box, and smaller ones anywhere), the
      // owner's own root, and a far box.
      std::vector<search::Cluster> targets;
      for (size_t c = 0; c < others.clusters.size(); c += 17) targets.push_back(others.clusters[c]);
      targets.push_back(owner.clusters[0]);
      search::Cluster far = others.clusters[0];
      for (int d = 0; d < 2; ++d) {
        far.lo[d] += 3 * L;
        far.hi[d] += 3 * L;
      }
      targets.push_back(far);
      std::vector<std::vector<search::Cluster>> sets;
      for (const search::Cluster& T : targets) sets.push_back({T});
      // And a rank's target boxes, as the solver sends them (tree_let.hpp): the other tree's.
      std::vector<double> rec(model::tree::kLetBoxes * model::tree::kBoxWidth);
      model::tree::target_box_records(others, rec.data());
      sets.push_back(model::tree::target_boxes(rec.data()));
      EXPECT_GT(sets.back().size(), 8u);
      for (const std::vector<search::Cluster>& T : sets) {
        std::vector<double> pushed;
        const long size = model::tree::pack_let(owner, T, rules, pushed);
        if (edge) {  // the whole clusters change some blocks
          std::vector<double> plain;
          model::tree::pack_let(owner, T, model::tree::make_rules(img, theta, false), plain);
          whole += plain != pushed;
        }
        model::tree::LetPull walk(T, rules, 2);
        std::vector<comm::let::Span> want;
        walk.start(1, sizes, want);
        while (!want.empty()) {
          std::vector<double> got;
          for (const auto& w : want) {
            const double* from = sec[w.section].data + w.offset;
            got.insert(got.end(), from, from + w.count);
          }
          want.clear();
          walk.next(1, got, want);
        }
        std::vector<double> pulled(walk.block_size(1));
        if (!pulled.empty()) walk.write_block(1, pulled.data());
        EXPECT_EQ(long(pulled.size()), size);
        EXPECT_EQ(pulled, pushed) << "periodic " << periodic << " theta " << theta << " edge " << edge;
        EXPECT_LE(walk.rounds(), levels + 1);
        ++compared;
      }
    }
  EXPECT_GT(compared, 200);
  EXPECT_GT(whole, 0);
}

namespace {

// x and y of every node squeezed towards a corner of the domain: on the uniform partition every
// other cell is empty; on the balanced one every node sits at the same x and y (z tells them
// apart), so the quantile cuts coincide and leave ranks empty too.
void squeeze(SurfaceCase& s, mesh::SpatialPartition partition) {
  const double L0 = s.c.geometry.period[0], L1 = s.c.geometry.period[1];
  for (int i = 0; i < s.mesh->layout().ni; ++i)
    for (int j = 0; j < s.mesh->layout().nj; ++j) {
      auto v = s.state.view();
      const double f = partition == mesh::SpatialPartition::Uniform ? 0.02 : 0.0;
      v(0, i, j) = -0.4 * L0 + f * v(0, i, j);
      v(1, i, j) = -0.4 * L1 + f * v(1, i, j);
      v(2, i, j) += 1e-3 * (s.gi(i) * 31 + s.gj(j));
    }
}

}  // namespace

// Ranks without particles (empty trees, no targets) and trees that change size from call to
// call: each LET strategy's solver is kept over three calls (squeezed, spread, squeezed: the rma
// window is made, then grows) and gives alltoallv's bits each time, on both partitions, periodic
// and free; with θ = 0, the squeezed surface's tree equals the exact solver. No call may hang.
TEST(TreeBR, EveryLetStrategyWithEmptyRanksAndChangingTrees) {
  for (const char* boundary : {"periodic", "free"})
    for (auto partition : {mesh::SpatialPartition::Uniform, mesh::SpatialPartition::Balanced}) {
      const std::string what = std::string(boundary) + " " + mesh::to_string(partition);
      SurfaceCase s(test::br_options("consistent", boundary, 16), MPI_COMM_WORLD);
      SurfaceCase squeezed(test::br_options("consistent", boundary, 16), MPI_COMM_WORLD);
      squeeze(squeezed, partition);
      model::BRSettings b = s.c.model.br;
      b.tree_theta = 0.5;
      b.tree_degree = 3;
      b.tree_leaf = 8;
      b.partition = partition;
      std::vector<std::unique_ptr<model::TreeBRSolver>> solvers;
      for (const auto& e : comm::let::registry()) {
        b.let_strategy = e.name;
        solvers.push_back(std::make_unique<model::TreeBRSolver>(*s.mesh, exec::Space::Host, b, s.c.model.epsilon,
                                                                nullptr, nullptr));
      }
      for (int call = 0; call < 3; ++call) {
        const mesh::Field& state = call == 1 ? s.state : squeezed.state;
        std::vector<double> ref;
        long empty = 0;
        for (size_t k = 0; k < solvers.size(); ++k) {
          solvers[k]->velocity(state, s.omega, s.out);
          const auto u = s.owned_out();
          if (k == 0) {
            ref = u;
            empty = solvers[k]->take_loads().at(0).particles == 0;
          } else {
            EXPECT_EQ(u, ref) << comm::let::registry()[k].name << ", " << what << ", call " << call;
          }
        }
        // A solver reused from call to call (its LET parts unpacked into the last call's trees)
        // gives a fresh solver's bits.
        model::BRSettings first = b;
        first.let_strategy = comm::let::registry().front().name;
        model::TreeBRSolver fresh(*s.mesh, exec::Space::Host, first, s.c.model.epsilon, nullptr, nullptr);
        fresh.velocity(state, s.omega, s.out);
        EXPECT_EQ(s.owned_out(), ref) << what << ", call " << call << ": the reused solver differs from a fresh one";
        MPI_Allreduce(MPI_IN_PLACE, &empty, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (call != 1 && world_size() > 1) EXPECT_GT(empty, 0) << what << ": every rank has particles";
        for (double x : ref) EXPECT_TRUE(std::isfinite(x)) << what;
      }
      for (const auto& e : comm::let::registry()) {
        b.let_strategy = e.name;
        b.tree_theta = 0.0;
        const auto exact = squeezed.velocity<model::ExactBRSolver>(b);
        const auto tree = squeezed.velocity<model::TreeBRSolver>(b);
        EXPECT_LE(rel_error(tree, exact, MPI_COMM_WORLD)[1], 1e-12) << e.name << ", " << what;
      }
    }
}

namespace {

// Sources on a cluster cut by the image window's edge: x on a lattice of 1/64 with repeats (ties
// in the sorted order), y and z spread; period L = 2, K = 1, centred.
struct EdgeCase {
  model::BRImages img;
  search::Cluster C;
  std::vector<double> src;  // [x|y|z|qx|qy|qz]
  long n = 0;
  EdgeCase() {
    img.k = 1;
    img.centred = true;
    img.period[0] = img.period[1] = 2.0;
    n = 900;
    src.resize(6 * n);
    unsigned s = 5;
    auto next = [&s] {
      s = s * 1664525u + 1013904223u;
      return (s >> 8) / double(1u << 24);
    };
    for (long k = 0; k < n; ++k) {
      src[k] = 0.25 + std::floor(40 * next()) / 64.0;  // [0.25, 0.86], ~22 sources per x
      src[n + k] = 0.6 * (next() - 0.5);
      src[2 * n + k] = 0.02 * (next() - 0.5);
      for (int c = 3; c < 6; ++c) src[c * n + k] = next() - 0.5;
    }
    C.begin = 0;
    C.end = n;
    for (int d = 0; d < 3; ++d) {
      C.lo[d] = *std::min_element(&src[d * n], &src[d * n] + n);
      C.hi[d] = *std::max_element(&src[d * n], &src[d * n] + n);
    }
  }
};

}  // namespace

// An edge term (model/tree_edge.hpp) takes for each target the sources its window holds: the
// targets sit so that the edge of images mx = 1 and mx = −2 (x) cuts the cluster. With a prefix
// row per source it equals the proxy set of exactly those sources (the direct window test's
// set: one source more or less would show far above round-off) to 1e-13; with the solver's rows
// it is the direct window sum to the interpolation's accuracy (degree 8 at ρ ≈ 0.15).
TEST(TreeEdge, PrefixTablesTakeTheSourcesOfTheWindow) {
  const EdgeCase e;
  const long nt = 64;
  std::vector<double> t(3 * nt);
  for (long q = 0; q < nt; ++q) {
    t[q] = -0.8 + 0.7 * q / double(nt - 1) + 1.0 / 128;  // cuts anywhere in [0.2, 0.9]
    t[nt + q] = 0.5 * std::sin(double(q));
    t[2 * nt + q] = 0.01 * std::cos(double(q));
  }
  search::Cluster T;  // the targets' box
  for (int d = 0; d < 3; ++d) {
    T.lo[d] = *std::min_element(&t[d * nt], &t[d * nt] + nt);
    T.hi[d] = *std::max_element(&t[d * nt], &t[d * nt] + nt);
  }
  int dg[3];
  const int m = model::tree::grid_degrees(e.C, 8, 0.4, dg);
  std::vector<double> px(6 * m);
  model::tree::interpolate(e.C, dg, e.src.data(), e.n, 0, e.n, px.data(), m);
  const double eps = 0.01;
  int cut_seen = 0;
  for (int mx : {1, -2}) {
    int cut = 0;
    EXPECT_EQ(model::tree::cover(T, e.C, mx, 0, e.img, &cut), model::tree::Cover::Partial);
    EXPECT_EQ(model::tree::edge_axis(cut), 0);
    model::tree::EdgeTable one, rows;
    model::tree::build_edge_table(e.C, e.src.data(), e.n, 0, dg, px.data(), m, one, 1);
    model::tree::build_edge_table(e.C, e.src.data(), e.n, 0, dg, px.data(), m, rows);
    EXPECT_GT(rows.block, 1);
    std::vector<double> u1(3 * nt, 0.0), ur(3 * nt, 0.0), uw(3 * nt, 0.0), ui(3 * nt, 0.0);
    model::tree::EdgeCounts c1, cr;
    model::tree::edge_sum(one, mx, 0, &t[0], &t[nt], &t[2 * nt], nt, e.img, eps, &u1[0], &u1[nt], &u1[2 * nt], c1);
    model::tree::edge_sum(rows, mx, 0, &t[0], &t[nt], &t[2 * nt], nt, e.img, eps, &ur[0], &ur[nt], &ur[2 * nt], cr);
    EXPECT_EQ(c1.direct_pairs, 0);
    EXPECT_GT(cr.direct_pairs, 0);
    // The references, target by target: the direct window sum (the tree's leaf rule), and the
    // proxy set interpolated from the sources that the window test takes.
    double norm = 0.0;
    for (long q = 0; q < nt; ++q) {
      model::BRSourceRange all{e.src.data(), e.n, 0, e.n, mx, 0, true};
      const long taken = model::br_targets_host(&t[q], &t[nt + q], &t[2 * nt + q], 1, &all, 1, e.img, eps, &uw[q],
                                                &uw[nt + q], &uw[2 * nt + q]);
      std::vector<double> sub;
      for (int c = 0; c < 6; ++c)
        for (long k = 0; k < e.n; ++k) {
          const double a0 = model::image_centre(t[q] - e.src[k], 2.0, 1.0);
          if (std::abs(mx * 2.0 - a0) <= 2.0 * e.img.k) sub.push_back(e.src[c * e.n + k]);
        }
      const long ns = long(sub.size()) / 6;
      ASSERT_EQ(ns, taken) << "target " << q;
      if (ns > 0 && ns < e.n) ++cut_seen;
      if (ns == 0) continue;
      std::vector<double> ps(6 * m);
      model::tree::interpolate(e.C, dg, sub.data(), ns, 0, ns, ps.data(), m);
      model::BRSourceRange prox{ps.data(), m, 0, m, mx, 0, false};
      model::br_targets_host(&t[q], &t[nt + q], &t[2 * nt + q], 1, &prox, 1, e.img, eps, &ui[q], &ui[nt + q],
                             &ui[2 * nt + q], model::BRHostKernel::Scalar);
      for (int c = 0; c < 3; ++c) norm = std::max(norm, std::abs(uw[c * nt + q]));
    }
    ASSERT_GT(norm, 0.0);
    for (long k = 0; k < 3 * nt; ++k) {
      EXPECT_NEAR(u1[k], ui[k], 1e-13 * norm) << "mx " << mx << " entry " << k;
      EXPECT_NEAR(ur[k], uw[k], 1e-6 * norm) << "mx " << mx << " entry " << k;
    }
  }
  EXPECT_GT(cut_seen, 20);  // most targets' windows cut the cluster
}

// The solver's edge terms (on by default) against the same tree splitting the edge down to
// leaves (BRSettings::tree_edge off), on the tolerance test's periodic cosine at TOL 1e-6: edge
// terms are formed (over all ranks), both are within TOL of the exact solver and of each other,
// the edge takes direct pairs away, and every LET strategy gives the same bits.
TEST(TreeBR, EdgeTermsAgreeWithSplittingTheEdge) {
  const auto [o, steps] = tolerance_surfaces().front();
  SurfaceCase s(o, MPI_COMM_WORLD);
  from_run(s, o, steps);
  const model::TreeParameters tp = model::tree_parameters(1e-6, true);  // the dual column's smaller degree fits 48²–64²
  model::BRSettings b = s.c.model.br;
  tp.apply(b);
  b.tree_leaf = 16;
  const auto exact = s.velocity<model::ExactBRSolver>(b);
  std::vector<double> u[2];
  long load[2][2];
  for (int edge : {0, 1}) {
    b.tree_edge = edge;
    model::TreeBRSolver tree(*s.mesh, exec::Space::Host, b, s.c.model.epsilon, nullptr, nullptr);
    tree.velocity(s.state, s.omega, s.out);
    u[edge] = s.owned_out();
    const auto l = tree.take_loads().at(0);
    load[edge][0] = l.edge_terms;
    load[edge][1] = l.direct_pairs + l.edge_direct_pairs;
    MPI_Allreduce(MPI_IN_PLACE, load[edge], 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_LE(rel_error(u[edge], exact, MPI_COMM_WORLD)[0], 1e-6) << "edge " << edge;
  }
  EXPECT_EQ(load[0][0], 0);
  EXPECT_GT(load[1][0], 0) << "no edge term was formed";
  EXPECT_LT(load[1][1], load[0][1]) << "the edge terms did not save direct pairs";
  EXPECT_LE(rel_error(u[1], u[0], MPI_COMM_WORLD)[0], 1e-6);
  b.tree_edge = true;
  for (const auto& e : comm::let::registry()) {
    b.let_strategy = e.name;
    EXPECT_EQ(s.velocity<model::TreeBRSolver>(b), u[1]) << e.name;
  }
}

// The edge terms' margin (--tree-edge-margin; the table's 1.0 from TOL 1e-6 up, 1.5 below) on
// the tolerance test's periodic cosine at TOL 1e-6, both traversals: a smaller margin takes
// coarser clusters through cheaper sets, so the edge terms' proxy pairs fall (over all ranks),
// while the error stays at least 10 below TOL; at the table's margin every LET strategy gives the
// same bits (the owners' LET decisions and the receivers' lists apply the same margin).
TEST(TreeBR, EdgeMarginTradesEdgePairsWithinTheTolerance) {
  const auto [o, steps] = tolerance_surfaces().front();
  SurfaceCase s(o, MPI_COMM_WORLD);
  from_run(s, o, steps);
  const double tol = 1e-6;
  for (bool dual : {false, true}) {
    const model::TreeParameters tp = model::tree_parameters(tol, true);  // (the dual column's degree fits 48²)
    ASSERT_LT(tp.edge_margin, model::tree::kEdgeMargin);
    model::BRSettings b = s.c.model.br;
    b.tree_dual = dual;
    tp.apply(b);  // (its margin replaced below)
    b.tree_leaf = 32;
    const auto exact = s.velocity<model::ExactBRSolver>(b);
    long pairs[2] = {0, 0};
    std::vector<double> u;
    int k = 0;
    for (double margin : {model::tree::kEdgeMargin, tp.edge_margin}) {
      b.tree_edge_margin = margin;
      model::TreeBRSolver tree(*s.mesh, exec::Space::Host, b, s.c.model.epsilon, nullptr, nullptr);
      tree.velocity(s.state, s.omega, s.out);
      u = s.owned_out();
      pairs[k] = tree.take_loads().at(0).edge_proxy_pairs;
      MPI_Allreduce(MPI_IN_PLACE, &pairs[k], 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      const double e = rel_error(u, exact, MPI_COMM_WORLD)[0];
      EXPECT_LE(e, tol / 10) << "margin " << margin << " dual " << dual;
      if (test::world_rank() == 0)  // docs/tree-log.md "The edge terms' margin"
        std::printf("dual %d margin %g: error %.2e, edge proxy pairs %ld\n", int(dual), margin, e, pairs[k]);
      ++k;
    }
    EXPECT_GT(pairs[0], 0) << "no edge term was formed";
    EXPECT_LT(pairs[1], pairs[0]) << "the smaller margin did not save edge pairs, dual " << dual;
    for (const auto& e : comm::let::registry()) {
      b.let_strategy = e.name;
      EXPECT_EQ(s.velocity<model::TreeBRSolver>(b), u) << e.name << " dual " << dual;
    }
  }
}

// The dual traversal (--tree-traversal dual: cluster–cluster terms at target clusters' grids,
// then the downward pass) on a 64² periodic cosine at TOL 1e-6, leaf 32: cluster–cluster terms
// are formed (over all ranks), the velocities are within TOL of the exact solver and of the
// single traversal, every LET strategy gives the same bits, the same call twice the same bits;
// with θ = 0 nothing is interpolated and it equals the exact solver (periodic and free).
TEST(TreeBR, DualTraversalAgreesWithSingle) {
  app::Options o = test::br_options("consistent", "periodic", 64);
  o.initial_condition = "cos";
  o.magnitude = 0.1;
  o.period = 3.0;
  SurfaceCase s(o, MPI_COMM_WORLD);
  const model::TreeParameters tp = model::tree_parameters(1e-6, true);  // the dual column's smaller degree fits 48²–64²
  model::BRSettings b = s.c.model.br;
  tp.apply(b);
  b.tree_leaf = 32;
  const auto exact = s.velocity<model::ExactBRSolver>(b);
  std::vector<double> u[2];
  long terms[2][2];
  for (int dual : {0, 1}) {
    b.tree_dual = dual;
    model::TreeBRSolver tree(*s.mesh, exec::Space::Host, b, s.c.model.epsilon, nullptr, nullptr);
    tree.velocity(s.state, s.omega, s.out);
    u[dual] = s.owned_out();
    const auto l = tree.take_loads().at(0);
    terms[dual][0] = l.cc_terms;
    terms[dual][1] = l.cc_pairs;
    MPI_Allreduce(MPI_IN_PLACE, terms[dual], 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_LE(rel_error(u[dual], exact, MPI_COMM_WORLD)[0], 1e-6) << "dual " << dual;
  }
  EXPECT_EQ(terms[0][0], 0);
  EXPECT_GT(terms[1][0], 0) << "no cluster-cluster term was formed";
  EXPECT_GT(terms[1][1], 0);
  EXPECT_NE(u[1], u[0]);
  EXPECT_LE(rel_error(u[1], u[0], MPI_COMM_WORLD)[0], 1e-6);
  b.tree_dual = true;
  for (const auto& e : comm::let::registry()) {
    b.let_strategy = e.name;
    EXPECT_EQ(s.velocity<model::TreeBRSolver>(b), u[1]) << e.name;
  }
  for (const char* boundary : {"periodic", "free"}) {
    SurfaceCase z(test::br_options("consistent", boundary, 24), MPI_COMM_WORLD);
    model::BRSettings bz = z.c.model.br;
    bz.tree_theta = 0.0;
    bz.tree_leaf = 7;
    bz.tree_dual = true;
    const auto ex = z.velocity<model::ExactBRSolver>(bz);
    const auto tr = z.velocity<model::TreeBRSolver>(bz);
    EXPECT_LE(rel_error(tr, ex, MPI_COMM_WORLD)[1], 1e-12) << boundary;
  }
}

// The single traversal's lists walk every image of a batch at once (BRSettings::tree_walk_images)
// and must equal one walk per image (the straightforward walk, kept as the reference): the same
// terms in the same order, so the same bits and the same counts. On a wavy 64² cosine, periodic
// (K = 1 and K = 2: 25 and 49 images) and free, with and without edge terms, leaf 16 (with LET
// parts on more than one rank), and with every LET strategy.
TEST(TreeBR, AllImagesInOneWalkEqualOneWalkPerImage) {
  const model::TreeParameters tp = model::tree_parameters(1e-6, true);  // the dual column's smaller degree fits 48²–64²
  struct Case {
    const char* boundary;
    int images;
  };
  for (const Case c : {Case{"periodic", 1}, Case{"periodic", 2}, Case{"free", 1}}) {
    app::Options o = test::br_options("consistent", c.boundary, 64);
    o.initial_condition = "cos";
    o.magnitude = 0.1;
    o.period = 3.0;
    SurfaceCase s(o, MPI_COMM_WORLD);
    model::BRSettings b = s.c.model.br;
    tp.apply(b);
    b.tree_leaf = 16;
    b.tree_dual = false;
    b.images = c.images;
    for (int edge : {0, 1}) {
      b.tree_edge = edge;
      std::vector<double> u[2];
      long load[2][6];
      for (int all : {0, 1}) {
        b.tree_walk_images = all;
        model::TreeBRSolver tree(*s.mesh, exec::Space::Host, b, s.c.model.epsilon, nullptr, nullptr);
        tree.velocity(s.state, s.omega, s.out);
        u[all] = s.owned_out();
        const auto l = tree.take_loads().at(0);
        const long v[6] = {l.direct_pairs, l.cluster_terms, l.proxy_pairs, l.edge_terms, l.edge_proxy_pairs,
                           l.edge_direct_pairs};
        std::copy(v, v + 6, load[all]);
        MPI_Allreduce(MPI_IN_PLACE, load[all], 6, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      }
      const std::string what =
          std::string(c.boundary) + " K " + std::to_string(c.images) + " edge " + std::to_string(edge);
      EXPECT_GT(load[1][1], 0) << what << ": no far term";
      EXPECT_EQ(load[1][3] > 0, edge == 1 && std::string(c.boundary) == "periodic") << what;
      for (int k = 0; k < 6; ++k) EXPECT_EQ(load[1][k], load[0][k]) << what << " count " << k;
      EXPECT_EQ(u[1], u[0]) << what;
      b.tree_walk_images = true;
      for (const auto& e : comm::let::registry()) {
        b.let_strategy = e.name;
        EXPECT_EQ(s.velocity<model::TreeBRSolver>(b), u[0]) << what << " " << e.name;
      }
      b.let_strategy = s.c.model.br.let_strategy;
    }
  }
}

// The dual traversal's fast lists (dual_node: per target cluster its values computed once, the
// distance once per pair, pairs that only go down passed on) equal the reference traversal's
// (dual_reference: every pair re-decided from scratch at every level) term for term — every
// batch's near, far and edge terms and every target cluster's cluster–cluster terms, in order —
// and a whole call gives the same bits. On a wavy 64² cosine, periodic (K = 1 and 2) and free, at
// TOL 1e-3, 1e-6 and 1e-9, leaf 16 (LET parts on more than one rank). So do the lists whose
// leaves are walked by the lists' kernels (dual_terms_kernel: -x cuda's leaves, run on the host).
namespace {
// The dual lists' cases: the multi-mode cosine (magnitude 0.1, period 3) on an n² mesh, and the
// settings of TOL with the dual traversal.
app::Options dual_case_options(const char* boundary, int n) {
  app::Options o = test::br_options("consistent", boundary, n);
  o.initial_condition = "cos";
  o.magnitude = 0.1;
  o.period = 3.0;
  return o;
}
model::BRSettings dual_settings(const SurfaceCase& s, double tol) {
  const model::TreeParameters tp = model::tree_parameters(tol, true);
  model::BRSettings b = s.c.model.br;
  tp.apply(b);
  b.tree_dual = true;
  return b;
}
}  // namespace

TEST(TreeBR, DualFastListsEqualTheReference) {
  struct Case {
    const char* boundary;
    int images;
  };
  long cc = 0, far = 0, edge = 0;
  for (const Case c : {Case{"periodic", 1}, Case{"periodic", 2}, Case{"free", 1}})
    for (double tol : {1e-3, 1e-6, 1e-9}) {
      SurfaceCase s(dual_case_options(c.boundary, 64), MPI_COMM_WORLD);
      model::BRSettings b = dual_settings(s, tol);
      b.tree_leaf = 16;
      b.images = c.images;
      const std::string what = std::string(c.boundary) + " K " + std::to_string(c.images) + " TOL " + std::to_string(tol);
      std::vector<double> u[2];
      std::vector<long> terms[2];
      for (int ref : {0, 1}) {
        model::TreeBRSolver tree(*s.mesh, exec::Space::Host, b, s.c.model.epsilon, nullptr, nullptr);
        tree.dual_reference = ref;
        tree.velocity(s.state, s.omega, s.out);
        u[ref] = s.owned_out();
        terms[ref] = tree.dual_terms();
        const auto l = tree.take_loads().at(0);
        if (ref == 0) {
          cc += l.cc_terms;
          far += l.cluster_terms;
          edge += l.edge_terms;
          // The same solver's lists again by the other traversal.
          tree.dual_reference = true;
          tree.dual_lists_again();
          EXPECT_EQ(tree.dual_terms(), terms[0]) << what << ": the reference again";
          tree.dual_reference = false;
          tree.dual_lists_again();
          EXPECT_EQ(tree.dual_terms(), terms[0]) << what << ": the fast lists again";
          // The leaves' walks by the lists' kernels (-x cuda's dual_leaves_device, here on the
          // host) from the pairs the traversal hands the leaves: the same terms in the same order.
          EXPECT_EQ(tree.dual_terms_kernel(), terms[0]) << what << ": the leaves by the lists' kernels";
          EXPECT_EQ(tree.dual_terms_kernel(exec::Space::Host, true), terms[0]) << what << ": the leaves queued";
          EXPECT_EQ(tree.dual_terms(), terms[0]) << what << ": the host's lists after the kernels'";
        }
      }
      EXPECT_GT(terms[0].size(), 0u) << what;
      EXPECT_EQ(terms[0], terms[1]) << what;
      EXPECT_EQ(u[0], u[1]) << what;
    }
  long n[3] = {cc, far, edge};
  MPI_Allreduce(MPI_IN_PLACE, n, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GT(n[0], 0) << "no cluster-cluster term";
  EXPECT_GT(n[1], 0) << "no far term";
  EXPECT_GT(n[2], 0) << "no edge term";
}

// The single traversal's lists made again by the lists' kernels (tree_lists_device.hpp: an item
// per (batch, source tree, image), an explicit stack, count then fill; run on the host) equal
// the host's (lists: walk → decide) term for term: every batch's near, far and edge terms in
// order, with their image, partial flag, lower-degree set and edge axis. The dual lists' cases
// (periodic K = 1 and 2, free; TOL 1e-3, 1e-6, 1e-9; leaf 16), with and without edge terms; on
// more than one rank the LET parts too. With edge terms, the edge stage's keys numbered by the
// kernels (ListsPass::edge_keys) equal the host's edge_keys(): the same keys in the same order
// and every term's table number. The sums' ranges made from the kernels' lists (ListsPass::ranges)
// equal those the host makes from its lists (near_ranges' merges, far_ranges), with the terms
// through a lower-degree set counted alike.
TEST(TreeBR, ListsKernelEqualsTheHost) {
  struct Case {
    const char* boundary;
    int images;
  };
  long n[5] = {0, 0, 0, 0, 0};  // near (partial), far, low, edge terms seen; terms on LET parts
  for (const Case c : {Case{"periodic", 1}, Case{"periodic", 2}, Case{"free", 1}})
    for (double tol : {1e-3, 1e-6, 1e-9})
      for (int edge : {0, 1}) {
        SurfaceCase s(dual_case_options(c.boundary, 64), MPI_COMM_WORLD);
        model::BRSettings b = dual_settings(s, tol);
        b.tree_dual = false;
        b.tree_leaf = 16;
        b.images = c.images;
        b.tree_edge = edge;
        const std::string what = std::string(c.boundary) + " K " + std::to_string(c.images) + " TOL " +
                                 std::to_string(tol) + " edge " + std::to_string(edge);
        model::TreeBRSolver tree(*s.mesh, exec::Space::Host, b, s.c.model.epsilon, nullptr, nullptr);
        tree.velocity(s.state, s.omega, s.out);
        const std::vector<long> want = tree.list_terms();
        EXPECT_GT(want.size(), 0u) << what;
        EXPECT_EQ(tree.list_terms_kernel(), want) << what;
        if (edge) EXPECT_EQ(tree.edge_key_terms_kernel(), tree.edge_key_terms()) << what << ": edge keys";
        EXPECT_EQ(tree.range_terms_kernel(), tree.range_terms()) << what << ": the sums' ranges";
        const auto l = tree.take_loads().at(0);
        n[1] += l.cluster_terms;
        n[2] += l.low_terms;
        n[3] += l.edge_terms;
        for (size_t k = 0; k < want.size();) {  // per batch: near, far, edge; a size then 7 fields each
          for (int kind = 0; kind < 3; ++kind) {
            const long m = want[k++];
            for (long t = 0; t < m; ++t, k += 7) {
              if (kind == 0 && want[k + 4]) ++n[0];
              if (want[k] > 0) ++n[4];
            }
          }
        }
      }
  MPI_Allreduce(MPI_IN_PLACE, n, 5, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GT(n[0], 0) << "no partial near term";
  if (world_size() > 1) EXPECT_GT(n[4], 0) << "no term on a LET part";
  EXPECT_GT(n[1], 0) << "no far term";
  EXPECT_GT(n[2], 0) << "no lower-degree term";
  EXPECT_GT(n[3], 0) << "no edge term";
}

// Not a test: the dual lists' time, fast and reference interleaved, on one call's trees
// (BEATNIK_DUAL_BENCH="n tol reps", e.g. "256 1e-6 20"; run with --gtest_also_run_disabled_tests).
TEST(TreeBR, DISABLED_DualListsTiming) {
  int n = 256, reps = 10;
  double tol = 1e-6;
  if (const char* e = std::getenv("BEATNIK_DUAL_BENCH")) std::sscanf(e, "%d %lf %d", &n, &tol, &reps);
  SurfaceCase s(dual_case_options("periodic", n), MPI_COMM_WORLD);
  const model::BRSettings b = dual_settings(s, tol);
  model::TreeBRSolver tree(*s.mesh, exec::Space::Host, b, s.c.model.epsilon, nullptr, nullptr);
  tree.velocity(s.state, s.omega, s.out);
  const std::vector<long> want = tree.dual_terms();
  // Wall time, and this process's CPU time (all its threads: less disturbed by other load).
  auto cpu = [] {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
  };
  double t[2] = {0, 0}, best[2] = {1e30, 1e30}, c[2] = {0, 0}, cbest[2] = {1e30, 1e30};
  for (int r = 0; r < reps; ++r)
    for (int ref : {1, 0}) {
      tree.dual_reference = ref;
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime(), c0 = cpu();
      tree.dual_lists_again();
      const double dc = cpu() - c0;
      MPI_Barrier(MPI_COMM_WORLD);
      const double dt = MPI_Wtime() - t0;
      t[ref] += dt;
      best[ref] = std::min(best[ref], dt);
      c[ref] += dc;
      cbest[ref] = std::min(cbest[ref], dc);
      EXPECT_EQ(tree.dual_terms(), want);
    }
  std::printf("dual lists %d^2 TOL %g, rank %d of %d, ms wall mean (best) / cpu mean (best): reference %.2f (%.2f) / "
              "%.2f (%.2f), fast %.2f (%.2f) / %.2f (%.2f)\n",
              n, tol, s.ctx.rank(), world_size(), 1e3 * t[1] / reps, 1e3 * best[1], 1e3 * c[1] / reps, 1e3 * cbest[1],
              1e3 * t[0] / reps, 1e3 * best[0], 1e3 * c[0] / reps, 1e3 * cbest[0]);
}
