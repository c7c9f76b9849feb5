// The tree solver on the device (-S tree -x cuda, docs/tree.md "On the GPU"): its near, far
// and edge sums run on the GPU from device fields, and must give the host tree's velocities to
// 1e-12 relative to max |u| (periodic and free, tolerances 1e-3 and 1e-6, so far terms, window
// terms, edge terms and far terms through the lower-degree sets the device computes are all
// exercised); the edge terms' pair counts must be the host's, and turning them off must change
// the velocities by less than the tolerance; with θ = 0 it must equal the exact solver on the
// device to 1e-12; every LET strategy must give the same bits, and each the same bits run to run,
// over host MPI and over the NCCL transport alike; the edge stage pipelined with the lists must
// give the one-shot path's bits; the lists built on the device must give the host lists' bits and
// counts; the migration on the device must give the host round trip's
// bits and accounting (BEATNIK_TREE_MIGRATE=host); the sums kernel's branch-free rsqrt must give
// the library's bits for every normal argument kind.
// Built in the CUDA preset only (label cuda); needs a visible GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <limits>
#include <vector>

#include "beatnik/comm/let/registry.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/model/exact_br_solver.hpp"
#include "beatnik/model/tree_br_solver.hpp"
#include "beatnik/model/tree_sums_device.hpp"
#include "physics/br_surface_case.hpp"
#include "support/test_support.hpp"
#include "unit/dry_run_expect.hpp"

using namespace beatnik;

namespace {

// Each rank on its own GPU where the node has enough (as the program binds them), so that the
// NCCL transport can run; else every rank on the first.
class BindGpus : public ::testing::Environment {
 public:
  void SetUp() override {
    if (exec::device_count() == 0) return;
    const comm::Context ctx(MPI_COMM_WORLD);
    exec::bind_device(ctx.node_local_rank(), -1);
  }
};
::testing::Environment* const kBindGpus = ::testing::AddGlobalTestEnvironment(new BindGpus);

mesh::Field to_device(const mesh::Field& h) {
  mesh::Field d(exec::Space::Device, h.layout(), h.ncomp());
  exec::copy(d.comp(0), exec::Space::Device, h.comp(0), exec::Space::Host, h.bytes() / sizeof(double));
  return d;
}

// This rank's owned velocities from `Solver` on the device (device fields in and out).
template <class Solver>
std::vector<double> device_velocity(test::BRSurfaceCase& s, const model::BRSettings& b,
                                    model::TreeBRSolver::Totals* totals = nullptr, comm::CommStats* stats = nullptr) {
  const mesh::Field state = to_device(s.state), omega = to_device(s.omega), out = to_device(s.out);
  Solver solver(*s.mesh, exec::Space::Device, b, s.c.model.epsilon, stats, nullptr);
  solver.velocity(state, omega, out);
  if constexpr (std::is_same_v<Solver, model::TreeBRSolver>)
    if (totals) *totals = solver.totals();
  exec::copy(s.out.comp(0), exec::Space::Host, out.comp(0), exec::Space::Device, out.bytes() / sizeof(double));
  return s.owned_out();
}

// max |a − ref| / max |ref| over every rank.
// Two calls of a device tree solver on the same device fields: this rank's owned velocities of each.
std::vector<std::vector<double>> two_calls(model::TreeBRSolver& solver, test::BRSurfaceCase& s, const mesh::Field& state,
                                           const mesh::Field& omega, const mesh::Field& out) {
  std::vector<std::vector<double>> calls;
  for (int call = 0; call < 2; ++call) {
    solver.velocity(state, omega, out);
    exec::copy(s.out.comp(0), exec::Space::Host, out.comp(0), exec::Space::Device, out.bytes() / sizeof(double));
    calls.push_back(s.owned_out());
  }
  return calls;
}

double max_rel(const std::vector<double>& a, const std::vector<double>& ref) {
  double m[2] = {0, 0};
  for (size_t k = 0; k < a.size(); ++k) {
    m[0] = std::max(m[0], std::abs(a[k] - ref[k]));
    m[1] = std::max(m[1], std::abs(ref[k]));
  }
  MPI_Allreduce(MPI_IN_PLACE, m, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m[0] / m[1];
}

// |a − ref|₂ / |ref|₂ over every rank (the tolerance's measure).
double rel_2norm(const std::vector<double>& a, const std::vector<double>& ref) {
  double m[2] = {0, 0};
  for (size_t k = 0; k < a.size(); ++k) {
    m[0] += (a[k] - ref[k]) * (a[k] - ref[k]);
    m[1] += ref[k] * ref[k];
  }
  MPI_Allreduce(MPI_IN_PLACE, m, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return std::sqrt(m[0] / m[1]);
}

// The 64² multi-mode cosine (−I cos −m 0.1 −p 3), where a periodic run forms edge terms.
app::Options cosine_options(const char* boundary) {
  app::Options o = test::br_options("consistent", boundary, 64);
  o.initial_condition = "cos";
  o.magnitude = 0.1;
  o.period = 3.0;
  return o;
}

// The case's settings with the tolerance table's (θ, degree) for tol, leaves of `leaf`, and the
// single traversal (the tests below that are not about the dual traversal keep their lists).
model::BRSettings tolerance_settings(const test::BRSurfaceCase& s, double tol, int leaf) {
  model::BRSettings b = s.c.model.br;
  // The table's dual column (θ 0.4, degree 4 / 8 / 12): the single column's higher degrees would
  // leave these small meshes' clusters too small for proxy sets.
  const model::TreeParameters p = model::tree_parameters(tol, true);
  p.apply(b);
  b.tree_leaf = leaf;
  b.tree_dual = false;
  return b;
}

long sum_ranks(long v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

// 64 doubles in each binade 2^lo … 2^hi, their mantissas from a fixed generator seeded with r.
std::vector<double> binade_samples(int lo, int hi, unsigned long long r) {
  std::vector<double> d;
  for (int e = lo; e <= hi; ++e)
    for (int k = 0; k < 64; ++k) {
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      d.push_back(std::ldexp(1.0 + double(r >> 12) * 0x1p-52, e));
    }
  return d;
}

}  // namespace

TEST(TreeDevice, EqualsTheHostTree) {
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  // Leaf 100: batches of more than 64 targets (the device kernel takes them 64 at a time).
  for (const char* boundary : {"periodic", "free"})
    for (double tol : {1e-3, 1e-6})
      for (int leaf : {32, 100}) {
        test::BRSurfaceCase s(test::br_options("consistent", boundary, 64), MPI_COMM_WORLD);
        const model::BRSettings b = tolerance_settings(s, tol, leaf);
        const auto host = s.velocity<model::TreeBRSolver>(b);
        model::TreeBRSolver::Totals t;
        const auto dev = device_velocity<model::TreeBRSolver>(s, b, &t);
        const long far_all = sum_ranks(t.cluster_terms), edge_all = sum_ranks(t.edge_terms),
                   low_all = sum_ranks(t.low_terms);  // far terms through the device's lower-degree sets
        const double d = max_rel(dev, host);
        if (test::world_rank() == 0)
          std::printf("[ compared ] tree %s TOL %.0e leaf %d: max rel diff %.3e, %ld edge terms\n", boundary, tol, leaf,
                      d, edge_all);
        EXPECT_GT(far_all, 0) << boundary << " TOL " << tol << ": no far terms, the test would miss the far sum";
        EXPECT_GT(low_all, 0) << boundary << " TOL " << tol << ": no lower-degree sets used, the test would miss them";
        EXPECT_LE(d, 1e-12) << boundary << " TOL " << tol << " leaf " << leaf;
      }
}

// The single traversal's lists by the lists' kernels run on the device (tree_lists_device.hpp,
// ListsPass in Space::Device) equal the host's lists term for term, on a host-space solver's
// trees after one call: periodic K = 1 and 2 and free, TOL 1e-3, 1e-6, 1e-9, edge terms on; and
// the edge stage's keys and term tables numbered on the device equal the host's.
TEST(TreeDevice, ListsKernelOnTheDeviceEqualsTheHosts) {
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  struct Case {
    const char* boundary;
    int images;
  };
  long edge = 0;
  for (const Case c : {Case{"periodic", 1}, Case{"periodic", 2}, Case{"free", 1}})
    for (double tol : {1e-3, 1e-6, 1e-9}) {
      test::BRSurfaceCase s(cosine_options(c.boundary), MPI_COMM_WORLD);
      model::BRSettings b = tolerance_settings(s, tol, 16);
      b.images = c.images;
      b.tree_edge = 1;
      const std::string what = std::string(c.boundary) + " K " + std::to_string(c.images) + " TOL " + std::to_string(tol);
      model::TreeBRSolver tree(*s.mesh, exec::Space::Host, b, s.c.model.epsilon, nullptr, nullptr);
      tree.velocity(s.state, s.omega, s.out);
      const std::vector<long> want = tree.list_terms();
      EXPECT_GT(want.size(), 0u) << what;
      EXPECT_EQ(tree.list_terms_kernel(exec::Space::Device), want) << what;
      EXPECT_EQ(tree.edge_key_terms_kernel(exec::Space::Device), tree.edge_key_terms()) << what << ": edge keys";
      EXPECT_EQ(tree.range_terms_kernel(exec::Space::Device), tree.range_terms()) << what << ": the sums' ranges";
      edge += tree.take_loads().at(0).edge_terms;
    }
  EXPECT_GT(sum_ranks(edge), 0) << "no edge term";
}

TEST(TreeDevice, DeviceListsGiveTheHostListsBits) {
  // The device solver with its lists built on the device (the lists' kernels, their sums' ranges
  // made there: tree_br_lists_device.cpp) against the same solver with the host's lists (their
  // ranges uploaded): bitwise the same velocities over two calls of one solver, and the same
  // interaction counts (the device's load statistics come from its own reductions); periodic
  // K = 1 and 2 and free, TOL 1e-3 and 1e-6, edge terms on, the balanced partition (uneven
  // ranks). Edge terms, windows and lower-degree sets must all have been formed.
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  struct Case {
    const char* boundary;
    int images;
  };
  long edge = 0, low = 0;
  for (const Case c : {Case{"periodic", 1}, Case{"periodic", 2}, Case{"free", 1}})
    for (double tol : {1e-3, 1e-6}) {
      app::Options o = cosine_options(c.boundary);
      o.spatial_partition = "balanced";
      test::BRSurfaceCase s(o, MPI_COMM_WORLD);
      model::BRSettings b = tolerance_settings(s, tol, 16);
      b.images = c.images;
      b.tree_edge = 1;
      const std::string what = std::string(c.boundary) + " K " + std::to_string(c.images) + " TOL " + std::to_string(tol);
      const mesh::Field state = to_device(s.state), omega = to_device(s.omega), out = to_device(s.out);
      std::vector<std::vector<double>> u[2];
      model::TreeBRSolver::Totals t[2];
      for (int dev : {0, 1}) {
        model::TreeBRSolver solver(*s.mesh, exec::Space::Device, b, s.c.model.epsilon, nullptr, nullptr);
        solver.lists_on_device = dev;
        u[dev] = two_calls(solver, s, state, omega, out);
        t[dev] = solver.totals();
      }
      EXPECT_EQ(u[1][0], u[0][0]) << what << ": the device lists' velocities differ from the host lists'";
      EXPECT_EQ(u[1][1], u[1][0]) << what << ": the second call differs";
      EXPECT_EQ(t[1].direct_pairs, t[0].direct_pairs) << what;
      EXPECT_EQ(t[1].proxy_pairs, t[0].proxy_pairs) << what;
      EXPECT_EQ(t[1].cluster_terms, t[0].cluster_terms) << what;
      EXPECT_EQ(t[1].low_terms, t[0].low_terms) << what;
      EXPECT_EQ(t[1].edge_terms, t[0].edge_terms) << what;
      EXPECT_EQ(t[1].edge_proxy_pairs, t[0].edge_proxy_pairs) << what;
      EXPECT_EQ(t[1].edge_direct_pairs, t[0].edge_direct_pairs) << what;
      edge += t[1].edge_terms;
      low += t[1].low_terms;
    }
  EXPECT_GT(sum_ranks(edge), 0) << "no edge term";
  EXPECT_GT(sum_ranks(low), 0) << "no far term through a lower-degree set";
}

TEST(TreeDevice, DualTraversalEqualsTheHosts) {
  // --tree-traversal dual on the device (docs/tree-log.md "The dual traversal on the device"): the
  // target tree's top levels, then subtrees in runs of 8 batches (several runs and parts), the
  // clusters' grids summed by the sums kernel and the downward pass on the device. Against the
  // host's dual traversal: every pair count equal (the same lists) and the velocities to 1e-12
  // (the device's downward pass through merged grids, the host's direct);
  // two calls of one solver bitwise equal; within the tolerance of the device's single
  // traversal. Periodic (edge terms too) and free, TOL 1e-3 and 1e-6, the multi-mode cosine.
  // The leaves walked on the host (the default) and by the lists' kernels: the same bits.
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  long cc_all = 0, merged_all = 0;
  for (const char* boundary : {"periodic", "free"})
    for (double tol : {1e-3, 1e-6}) {
      test::BRSurfaceCase s(cosine_options(boundary), MPI_COMM_WORLD);
      model::BRSettings b = tolerance_settings(s, tol, 32);
      b.tree_dual = true;
      model::TreeBRSolver host_solver(*s.mesh, exec::Space::Host, b, s.c.model.epsilon, nullptr, nullptr);
      host_solver.velocity(s.state, s.omega, s.out);
      const auto host = s.owned_out();
      const model::TreeBRSolver::Totals h = host_solver.totals();
      const mesh::Field state = to_device(s.state), omega = to_device(s.omega), out = to_device(s.out);
      model::TreeBRSolver solver(*s.mesh, exec::Space::Device, b, s.c.model.epsilon, nullptr, nullptr);
      solver.min_run = 8;
      const std::vector<std::vector<double>> calls = two_calls(solver, s, state, omega, out);
      const model::TreeBRSolver::Totals t = solver.totals();
      // The leaves walked by the lists' kernels (BEATNIK_TREE_DUAL_LEAVES=device) instead of on
      // the host (leaf_visit): the same lists, so the same bits and counts, call after call.
      model::TreeBRSolver dev_leaves(*s.mesh, exec::Space::Device, b, s.c.model.epsilon, nullptr, nullptr);
      dev_leaves.min_run = 8;
      dev_leaves.dual_leaves_on_device = 1;
      const std::vector<std::vector<double>> by_dev = two_calls(dev_leaves, s, state, omega, out);
      const model::TreeBRSolver::Totals td = dev_leaves.totals();
      // The first run's batches in 4 runs (ramp): the same parts' lists, so the same bits.
      model::TreeBRSolver ramped(*s.mesh, exec::Space::Device, b, s.c.model.epsilon, nullptr, nullptr);
      ramped.min_run = 8;
      ramped.ramp = 4;
      const std::vector<std::vector<double>> by_ramp = two_calls(ramped, s, state, omega, out);
      EXPECT_EQ(by_ramp[0], calls[0]) << boundary << " TOL " << tol << ": the first run in 4";
      EXPECT_EQ(by_ramp[1], calls[0]) << boundary << " TOL " << tol << ": the first run in 4, call 2";
      EXPECT_EQ(ramped.totals().cluster_terms, t.cluster_terms) << boundary << " TOL " << tol << ": ramp";
      EXPECT_EQ(by_dev[0], calls[0]) << boundary << " TOL " << tol << ": the leaves walked on the device";
      EXPECT_EQ(by_dev[1], calls[0]) << boundary << " TOL " << tol << ": the leaves walked on the device, call 2";
      EXPECT_EQ(td.cluster_terms, t.cluster_terms) << boundary << " TOL " << tol;
      EXPECT_EQ(td.low_terms, t.low_terms) << boundary << " TOL " << tol;
      EXPECT_EQ(td.edge_terms, t.edge_terms) << boundary << " TOL " << tol;
      EXPECT_EQ(td.direct_pairs, t.direct_pairs) << boundary << " TOL " << tol;
      EXPECT_EQ(td.proxy_pairs, t.proxy_pairs) << boundary << " TOL " << tol;
      EXPECT_EQ(t.cluster_terms, 2 * h.cluster_terms) << boundary << " TOL " << tol;
      EXPECT_EQ(t.low_terms, 2 * h.low_terms) << boundary << " TOL " << tol;
      b.tree_dual = false;
      const auto single = device_velocity<model::TreeBRSolver>(s, b);
      const double d = max_rel(calls[0], host), e_single = rel_2norm(calls[0], single);
      const long cc = sum_ranks(h.cc_terms);
      cc_all += cc;
      merged_all += sum_ranks(t.down_merged);
      if (test::world_rank() == 0)
        std::printf("[ compared ] dual %s TOL %.0e: %ld cluster-cluster terms, max rel diff to the host %.3e, "
                    "rel 2-norm to single %.3e\n",
                    boundary, tol, cc, d, e_single);
      EXPECT_EQ(calls[0], calls[1]) << boundary << " TOL " << tol << ": the second call differs";
      EXPECT_EQ(t.cc_terms, 2 * h.cc_terms) << boundary << " TOL " << tol;
      EXPECT_EQ(t.cc_pairs, 2 * h.cc_pairs) << boundary << " TOL " << tol;
      EXPECT_EQ(t.down_pairs, 2 * h.down_pairs) << boundary << " TOL " << tol;
      EXPECT_EQ(t.direct_pairs, 2 * h.direct_pairs) << boundary << " TOL " << tol;
      EXPECT_EQ(t.proxy_pairs, 2 * h.proxy_pairs) << boundary << " TOL " << tol;
      EXPECT_EQ(t.edge_terms, 2 * h.edge_terms) << boundary << " TOL " << tol;
      EXPECT_LE(d, 1e-12) << boundary << " TOL " << tol;
      EXPECT_LE(e_single, tol) << boundary << " TOL " << tol;
    }
  EXPECT_GT(cc_all, 0) << "no cluster-cluster term was formed: the test would miss the grids and the downward pass";
  // The device's downward pass goes through merged grids (tree_down.hpp) where it can.
  if (test::world_rank() == 0) std::printf("[ compared ] %ld merged grids in the downward passes\n", merged_all);
  EXPECT_GT(merged_all, 0) << "no merged grid was made: the test would miss them";
}

TEST(TreeDevice, EdgeTermsEqualTheHostsAndSplittingTheEdge) {
  // A periodic cosine at TOL 1e-6, leaf 32, where the host forms edge terms (on 1 and 2 ranks):
  // the device's must be formed too, with the host's pair counts (the same tables' cuts) and
  // velocities to 1e-12; without them (--tree-edge-terms off) the device must stay within TOL of
  // both and sum more direct pairs.
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  test::BRSurfaceCase s(cosine_options("periodic"), MPI_COMM_WORLD);
  model::BRSettings b = tolerance_settings(s, 1e-6, 32);
  model::TreeBRSolver host_solver(*s.mesh, exec::Space::Host, b, s.c.model.epsilon, nullptr, nullptr);
  host_solver.velocity(s.state, s.omega, s.out);
  const auto host = s.owned_out();
  const model::TreeBRSolver::Totals h = host_solver.totals();
  model::TreeBRSolver::Totals on, off;
  const auto dev = device_velocity<model::TreeBRSolver>(s, b, &on);
  b.tree_edge = false;
  const auto dev_off = device_velocity<model::TreeBRSolver>(s, b, &off);
  const double d = max_rel(dev, host), e_off = rel_2norm(dev_off, dev);
  const long dev_terms = sum_ranks(on.edge_terms), host_terms = sum_ranks(h.edge_terms);  // (collectives: every rank)
  if (test::world_rank() == 0)
    std::printf("[ compared ] edge terms: device %ld (host %ld), max rel diff to the host %.3e; off: rel 2-norm %.3e\n",
                dev_terms, host_terms, d, e_off);
  EXPECT_GT(dev_terms, 0) << "no edge term was formed on the device";
  EXPECT_EQ(on.edge_terms, h.edge_terms);
  EXPECT_EQ(on.edge_proxy_pairs, h.edge_proxy_pairs);
  EXPECT_EQ(on.edge_direct_pairs, h.edge_direct_pairs);
  EXPECT_EQ(on.direct_pairs, h.direct_pairs);
  EXPECT_EQ(on.proxy_pairs, h.proxy_pairs);
  EXPECT_LE(d, 1e-12);
  EXPECT_EQ(off.edge_terms, 0);
  EXPECT_GT(off.direct_pairs, on.direct_pairs + on.edge_direct_pairs) << "the edge terms saved no direct pairs";
  EXPECT_LE(e_off, 1e-6);
}

TEST(TreeDevice, PipelinedEdgeStageGivesTheOneShotBits) {
  // The periodic cosine at TOL 1e-6, leaf 32, in runs of 8 batches: the edge stage queued with
  // the host's lists, a piece every run and every 3 runs (tables of the keys new to those runs, then
  // their sums; every 3 runs also with the first run's batches in 4 runs), must give the one-shot path's velocities bit for bit and its pair counts, over
  // two calls of one solver (the second reuses the first's buffers); and it must have been
  // queued in several pieces (else it would test nothing), with edge terms whose removal
  // changes the velocities (else equal bits would say little).
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  test::BRSurfaceCase s(cosine_options("periodic"), MPI_COMM_WORLD);
  model::BRSettings b = tolerance_settings(s, 1e-6, 32);
  const mesh::Field state = to_device(s.state), omega = to_device(s.omega), out = to_device(s.out);
  const auto run = [&](int pipe, const model::BRSettings& set, model::TreeBRSolver::Totals* t, int* pieces) {
    model::TreeBRSolver solver(*s.mesh, exec::Space::Device, set, s.c.model.epsilon, nullptr, nullptr);
    solver.lists_on_device = 0;  // (the edge stage is pipelined with the host's lists)
    solver.edge_pipe = std::abs(pipe);
    solver.ramp = pipe < 0 ? 4 : 1;
    solver.min_run = 8;
    const std::vector<std::vector<double>> calls = two_calls(solver, s, state, omega, out);
    EXPECT_EQ(calls[0], calls[1]) << "pipe " << pipe << ": the second call differs";
    if (t) *t = solver.totals();
    if (pieces) *pieces = solver.edge_device() ? solver.edge_device()->sum_pieces : 0;
    return calls[0];
  };
  model::TreeBRSolver::Totals one, piped;
  int one_pieces = 0, pieces = 0;
  const auto ref = run(0, b, &one, &one_pieces);
  EXPECT_GT(sum_ranks(one.edge_terms), 0) << "no edge term was formed";
  EXPECT_EQ(one_pieces, one.edge_terms > 0 ? 1 : 0);
  for (int pipe : {1, 3, -3}) {  // (−3: every 3 runs, the first run's batches in 4 runs)
    const auto u = run(pipe, b, &piped, &pieces);
    EXPECT_EQ(u, ref) << "pipe " << pipe << ": the pipelined edge stage differs from the one-shot's";
    EXPECT_EQ(piped.edge_terms, one.edge_terms) << "pipe " << pipe;
    EXPECT_EQ(piped.edge_proxy_pairs, one.edge_proxy_pairs) << "pipe " << pipe;
    EXPECT_EQ(piped.edge_direct_pairs, one.edge_direct_pairs) << "pipe " << pipe;
    EXPECT_GT(sum_ranks(pieces), pipe == 1 ? 3 : 1) << "pipe " << pipe << ": the edge stage was not pipelined";
  }
  b.tree_edge = false;
  EXPECT_NE(run(1, b, nullptr, nullptr), ref) << "the edge terms did not matter: equal bits would say little";
}

TEST(TreeDevice, EveryLetStrategyGivesTheSameBitsRunToRun) {
  // The periodic cosine at TOL 1e-6 with edge terms and far terms through the lower-degree sets
  // (every device kernel), on the balanced partition: each LET strategy twice, a fresh solver
  // each time; the velocities must be bitwise the same across calls and strategies (the sums
  // run in a fixed order; no floating-point atomics).
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  for (const char* boundary : {"periodic", "free"}) {
    test::BRSurfaceCase s(cosine_options(boundary), MPI_COMM_WORLD);
    model::BRSettings b = tolerance_settings(s, 1e-6, 32);
    b.partition = mesh::SpatialPartition::Balanced;
    std::vector<double> ref;
    for (const auto& e : comm::let::registry()) {
      b.let_strategy = e.name;
      model::TreeBRSolver::Totals t;
      const auto u = device_velocity<model::TreeBRSolver>(s, b, &t);
      const auto again = device_velocity<model::TreeBRSolver>(s, b);
      EXPECT_GT(sum_ranks(t.cluster_terms), 0) << boundary << ": no far terms";
      EXPECT_EQ(u, again) << boundary << " " << e.name << ": not reproducible";
      if (ref.empty()) ref = u;
      else EXPECT_EQ(u, ref) << boundary << " " << e.name << " differs from " << comm::let::registry().front().name;
    }
    // The run's NCCL transport: the push strategies' blocks go through device memory and NCCL
    // (comm/let/push.hpp), the pull stays on MPI; the same bits, and the same LET bytes.
    if (test::world_size() == 1) continue;  // no LET
    if (!comm::nccl_built() || exec::device_count() < test::world_size()) {  // (the tests run on one node)
      if (test::world_rank() == 0)
        std::printf("[ NOT RUN  ] LET over NCCL (%s): needs NCCL and one GPU per rank (%d GPU(s), %d ranks)\n",
                    boundary, exec::device_count(), test::world_size());
      continue;
    }
    test::BRSurfaceCase g(cosine_options(boundary), MPI_COMM_WORLD, true);
    for (const auto& e : comm::let::registry()) {
      b.let_strategy = e.name;
      EXPECT_STREQ(comm::let::path(e.name, g.mesh->transport()), e.pulls ? "mpi" : "nccl");
      comm::CommStats host_stats, nccl_stats;
      const auto h = device_velocity<model::TreeBRSolver>(s, b, nullptr, &host_stats);
      const auto u = device_velocity<model::TreeBRSolver>(g, b, nullptr, &nccl_stats);
      EXPECT_EQ(u, ref) << boundary << " " << e.name << " over NCCL differs from the host MPI path";
      EXPECT_EQ(h, ref) << boundary << " " << e.name;
      const auto let_bytes = [](const comm::CommStats& c) {
        const auto it = c.stats().find("let");
        return it == c.stats().end() ? -1L : it->second.bytes[1] + it->second.bytes[2];
      };
      EXPECT_EQ(let_bytes(nccl_stats), let_bytes(host_stats)) << boundary << " " << e.name;
      EXPECT_GT(let_bytes(nccl_stats), 0) << boundary << " " << e.name;
    }
  }
}

TEST(TreeDevice, DeviceMigrationGivesTheHostRoundTripsBits) {
  // The migration there and back on the device (br_migrate.hpp: keys, sort, records and the
  // velocities' return in device memory; one rank: tree order straight into the field) against
  // BEATNIK_TREE_MIGRATE=host (downloaded, host MPI, uploaded): pure data movement, so the same
  // bits, and the same "migrate" accounting (calls, messages, bytes by locality); over the run's
  // NCCL transport too where it can run. On the balanced partition of the cosine, where the
  // particles move between ranks.
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  const char* saved = std::getenv("BEATNIK_TREE_MIGRATE");
  const std::string keep = saved ? saved : "";
  const auto migrate = [](const comm::CommStats& c) {
    const auto it = c.stats().find("migrate");
    return it == c.stats().end() ? comm::PatternStats{} : it->second;
  };
  const auto same = [](const comm::PatternStats& a, const comm::PatternStats& b) {
    bool eq = a.calls == b.calls;
    for (int l = 0; l < 3; ++l) eq = eq && a.messages[l] == b.messages[l] && a.bytes[l] == b.bytes[l];
    return eq;
  };
  for (const char* boundary : {"periodic", "free"}) {
    test::BRSurfaceCase s(cosine_options(boundary), MPI_COMM_WORLD);
    model::BRSettings b = tolerance_settings(s, 1e-6, 32);
    b.partition = mesh::SpatialPartition::Balanced;
    const auto host = s.velocity<model::TreeBRSolver>(b);
    setenv("BEATNIK_TREE_MIGRATE", "host", 1);
    comm::CommStats old_stats, new_stats;
    const auto old_path = device_velocity<model::TreeBRSolver>(s, b, nullptr, &old_stats);
    unsetenv("BEATNIK_TREE_MIGRATE");
    const auto dev = device_velocity<model::TreeBRSolver>(s, b, nullptr, &new_stats);
    const auto again = device_velocity<model::TreeBRSolver>(s, b);
    EXPECT_EQ(dev, old_path) << boundary << ": the device migration differs from the host round trip";
    EXPECT_EQ(dev, again) << boundary << ": not reproducible";
    const double d = max_rel(dev, host);  // (collective: every rank)
    EXPECT_LE(d, 1e-12) << boundary;
    EXPECT_TRUE(same(migrate(new_stats), migrate(old_stats))) << boundary << ": the migrate accounting changed";
    const long moved = sum_ranks(migrate(new_stats).bytes[1] + migrate(new_stats).bytes[2]);
    if (test::world_size() > 1) {
      EXPECT_GT(moved, 0) << boundary << ": no particle changed rank, the test would miss the migration";
    } else {
      EXPECT_EQ(migrate(new_stats).calls, 0) << "one rank, the device build: no migration";
    }
    if (test::world_rank() == 0)
      std::printf("[ compared ] tree device migration %s: %ld bytes to other ranks, max rel diff to the host %.3e\n",
                  boundary, moved, d);
    if (test::world_size() == 1) continue;
    if (!comm::nccl_built() || exec::device_count() < test::world_size()) {
      if (test::world_rank() == 0)
        std::printf("[ NOT RUN  ] migration over NCCL (%s): needs NCCL and one GPU per rank\n", boundary);
      continue;
    }
    test::BRSurfaceCase g(cosine_options(boundary), MPI_COMM_WORLD, true);
    comm::CommStats nccl_stats;
    const auto u = device_velocity<model::TreeBRSolver>(g, b, nullptr, &nccl_stats);
    EXPECT_EQ(u, dev) << boundary << ": the migration over NCCL differs";
    EXPECT_TRUE(same(migrate(nccl_stats), migrate(old_stats))) << boundary << ": NCCL's migrate accounting";
  }
  if (saved) setenv("BEATNIK_TREE_MIGRATE", keep.c_str(), 1);
  else unsetenv("BEATNIK_TREE_MIGRATE");
}

TEST(TreeDevice, ThetaZeroEqualsTheExactSolverOnTheDevice) {
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  for (const char* profile : {"consistent", "beatnik"})
    for (const char* boundary : {"periodic", "free"}) {
      test::BRSurfaceCase s(test::br_options(profile, boundary, 24), MPI_COMM_WORLD);
      model::BRSettings b = s.c.model.br;
      b.tree_theta = 0.0;
      b.tree_leaf = 7;
      const auto exact = device_velocity<model::ExactBRSolver>(s, b);
      const auto tree = device_velocity<model::TreeBRSolver>(s, b);
      const double d = max_rel(tree, exact);
      if (test::world_rank() == 0) std::printf("[ compared ] theta 0 %s %s: max rel diff %.3e\n", profile, boundary, d);
      EXPECT_LE(d, 1e-12) << profile << " " << boundary;
    }
}

TEST(TreeDevice, BranchFreeRsqrtHasTheLibrarysBits) {
  // The sums kernel's pair loop takes rsqrt_normal (no branch to the library's path for zero,
  // subnormal, inf or NaN arguments); over every binade of the normal doubles, mantissas from a
  // fixed generator and the ends of the range, it must give rsqrt's bits.
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  std::vector<double> d = binade_samples(-1022, 1023, 0x9e3779b97f4a7c15ull);
  for (double x : {std::numeric_limits<double>::min(), std::numeric_limits<double>::max(), 1.0, 0x1p-20, 1e-12, 3e200,
                   std::nextafter(1.0, 2.0), std::nextafter(4.0, 0.0)})
    d.push_back(x);
  const long bad = model::tree_rsqrt_mismatches(d.data(), static_cast<long>(d.size()));
  if (test::world_rank() == 0) std::printf("[ compared ] rsqrt_normal: %ld of %zu differ\n", bad, d.size());
  EXPECT_EQ(bad, 0);
}

TEST(TreeDevice, OneStepCubedRsqrtIsWithinTwoUlps) {
  // The sums kernel's default pair loop (variant 9) takes d^(−3/2) in one step from the hardware
  // estimate y of d^(−1/2): y³·(1 + 3/2·e + 15/8·e²), e = 1 − d·y². Over the binades 2^−600 …
  // 2^600 (mantissas from a fixed generator, and the ends), against a long-double reference, it
  // must be within 2 ulps; the estimate's error term |e| must be small enough that the series'
  // next term, 35/16·e³, is below an ulp (|e| < 2^−18). A wrong coefficient of e² (1.8 for 15/8)
  // fails the first, an estimate of 2^−12 the second.
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  std::vector<double> d = binade_samples(-600, 600, 0x2545f4914f6cdd1dull);
  for (double x : {0x1p-600, 0x1p600, 1.0, 3e200, 1e-12, std::nextafter(1.0, 2.0), std::nextafter(4.0, 0.0)}) d.push_back(x);
  const long n = static_cast<long>(d.size());
  std::vector<double> f(d.size()), e(d.size()), g(d.size());
  model::tree_rsqrt_cubed(d.data(), n, f.data(), e.data(), g.data());
  double worst = 0.0, worst_old = 0.0, emax = 0.0;
  for (long k = 0; k < n; ++k) {
    const long double ref = std::pow(static_cast<long double>(d[k]), -1.5L);
    const long double ulp = std::ldexp(1.0L, std::ilogb(static_cast<double>(ref)) - 52);
    worst = std::max(worst, static_cast<double>(std::fabs(f[k] - ref) / ulp));
    worst_old = std::max(worst_old, static_cast<double>(std::fabs(g[k] - ref) / ulp));
    emax = std::max(emax, std::abs(e[k]));
  }
  if (test::world_rank() == 0)
    std::printf("[ compared ] d^(-3/2) of %ld values: one step within %.3f ulps (rsqrt_normal cubed: %.3f); "
                "the estimate's |e| up to %.3e (2^%.2f)\n",
                n, worst, worst_old, emax, std::log2(emax));
  EXPECT_LE(worst, 2.0);
  EXPECT_LT(emax, 0x1p-18);
}

TEST(TreeDevice, FirstCallEqualsTheDryRunPlan) {
  // `--dry-run -S tree -x cuda`: the migration and LET a device run's first BR call sends (or,
  // rma, fetches) equal the plan, rank by rank and locality by locality (with the host's edge
  // terms: test_dry_run_tree's DeviceRunPlans... checks the plans are the host's).
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  for (const char* let : {"alltoallv", "sparse", "rma"})
    for (const char* boundary : {"periodic", "free"}) {
      app::Options o = test::small_options(24);
      o.order = "high";
      o.solver = "tree";
      o.exec = "cuda";
      o.boundary = boundary;
      o.let_strategy = let;
      o.tree_leaf = 6;
      o.br_tolerance = 1e-6;
      o.ranks_per_node = 2;
      comm::CommStats stats, planned;
      test::first_call_against_plan<model::TreeBRSolver>(test::config_for(o, MPI_COMM_WORLD), stats, {"let", "migrate"},
                                                         planned, std::string(let) + " " + boundary);
    }
}
