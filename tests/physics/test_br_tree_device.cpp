// The tree solver on the device (-S tree -x cuda, docs/tree.md "On the GPU"): its near and far
// sums run on the GPU from device fields, and must give the host tree's velocities to 1e-12
// relative to max |u| (periodic and free, tolerances 1e-3 and 1e-6, so far terms and window
// terms are both exercised, and far terms through the lower-degree sets the device computes);
// with θ = 0 it must equal the exact solver on the device to 1e-12.
// Built in the CUDA preset only (label cuda); needs a visible GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "beatnik/exec/memory.hpp"
#include "beatnik/model/exact_br_solver.hpp"
#include "beatnik/model/tree_br_solver.hpp"
#include "physics/br_surface_case.hpp"
#include "support/test_support.hpp"
#include "unit/dry_run_expect.hpp"

using namespace beatnik;

namespace {

mesh::Field to_device(const mesh::Field& h) {
  mesh::Field d(exec::Space::Device, h.layout(), h.ncomp());
  exec::copy(d.comp(0), exec::Space::Device, h.comp(0), exec::Space::Host, h.bytes() / sizeof(double));
  return d;
}

// This rank's owned velocities from `Solver` on the device (device fields in and out).
template <class Solver>
std::vector<double> device_velocity(test::BRSurfaceCase& s, const model::BRSettings& b, long* far_terms = nullptr,
                                    long* low_terms = nullptr) {
  const mesh::Field state = to_device(s.state), omega = to_device(s.omega), out = to_device(s.out);
  Solver solver(*s.mesh, exec::Space::Device, b, s.c.model.epsilon, nullptr, nullptr);
  solver.velocity(state, omega, out);
  if constexpr (std::is_same_v<Solver, model::TreeBRSolver>)
    if (far_terms) *far_terms = solver.totals().cluster_terms, *low_terms = solver.totals().low_terms;
  exec::copy(s.out.comp(0), exec::Space::Host, out.comp(0), exec::Space::Device, out.bytes() / sizeof(double));
  return s.owned_out();
}

// max |a − ref| / max |ref| over every rank.
double max_rel(const std::vector<double>& a, const std::vector<double>& ref) {
  double m[2] = {0, 0};
  for (size_t k = 0; k < a.size(); ++k) {
    m[0] = std::max(m[0], std::abs(a[k] - ref[k]));
    m[1] = std::max(m[1], std::abs(ref[k]));
  }
  MPI_Allreduce(MPI_IN_PLACE, m, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m[0] / m[1];
}

}  // namespace

TEST(TreeDevice, EqualsTheHostTree) {
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  // Leaf 100: batches of more than 64 targets (the device kernel takes them 64 at a time).
  for (const char* boundary : {"periodic", "free"})
    for (double tol : {1e-3, 1e-6})
      for (int leaf : {32, 100}) {
        test::BRSurfaceCase s(test::br_options("consistent", boundary, 64), MPI_COMM_WORLD);
        model::BRSettings b = s.c.model.br;
        const model::TreeParameters p = model::tree_parameters(tol);
        b.tree_theta = p.theta;
        b.tree_degree = p.degree;
        b.tree_leaf = leaf;
        b.tree_edge = false;  // the device forms no edge terms (TreeBRSolver's constructor)
        b.tree_dual = false;  // nor cluster-cluster terms (the device runs the single traversal)
        const auto host = s.velocity<model::TreeBRSolver>(b);
        long terms[2] = {0, 0};  // far terms, of which through lower-degree sets (the device's)
        const auto dev = device_velocity<model::TreeBRSolver>(s, b, &terms[0], &terms[1]);
        MPI_Allreduce(MPI_IN_PLACE, terms, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        const long far_all = terms[0];
        const double d = max_rel(dev, host);
        if (test::world_rank() == 0)
          std::printf("[ compared ] tree %s TOL %.0e leaf %d: max rel diff %.3e\n", boundary, tol, leaf, d);
        EXPECT_GT(far_all, 0) << boundary << " TOL " << tol << ": no far terms, the test would miss the far sum";
        EXPECT_GT(terms[1], 0) << boundary << " TOL " << tol << ": no lower-degree sets used, the test would miss them";
        EXPECT_LE(d, 1e-12) << boundary << " TOL " << tol << " leaf " << leaf;
      }
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

TEST(TreeDevice, FirstCallEqualsTheDryRunPlan) {
  // `--dry-run -S tree -x cuda`: the migration and LET a device run's first BR call sends (or,
  // rma, fetches) equal the plan, rank by rank and locality by locality (its owners open what a
  // host run with edge terms would send whole: test_dry_run_tree's DeviceRunPlans... checks that).
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
