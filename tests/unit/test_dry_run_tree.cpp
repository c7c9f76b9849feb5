// --dry-run -S tree: the migration and the locally essential tree planned in one process from the
// initial surface (app/dry_run_tree.hpp) must equal, rank by rank and locality by locality, what
// the real tree solver sends (or, rma, fetches) in its first Birkhoff-Rott call on the real initial
// state, with every LET strategy, periodic and free, uniform and balanced partitions; and a
// skeleton step (three calls on the initial surface) must equal the whole per-step plan.
#include <gtest/gtest.h>

#include "beatnik/app/dry_run.hpp"
#include "beatnik/app/dry_run_plan.hpp"
#include "beatnik/app/simulation.hpp"
#include "beatnik/model/tree_br_solver.hpp"
#include "support/test_support.hpp"
#include "unit/dry_run_expect.hpp"

using namespace beatnik;

namespace {

using test::find_pattern;
using test::to_others;

const char* const kLetStrategies[] = {"alltoallv", "sparse", "rma"};

app::Options tree_options(int nodes, const char* boundary, const char* partition, const char* let) {
  app::Options o = test::small_options(nodes);
  o.order = "high";
  o.solver = "tree";
  o.boundary = boundary;
  o.spatial_partition = partition;
  o.let_strategy = let;
  o.tree_leaf = 6;  // several levels per rank: clusters opened, proxies and particles sent
  o.br_tolerance = 1e-3;
  o.ranks_per_node = 2;
  return o;
}

// One velocity() call of a fresh tree solver on the run's initial state against the plan. Returns
// the LET bytes between ranks, summed over all ranks.
long first_call(const app::Options& o, const std::string& what) {
  comm::CommStats stats, planned;
  const std::vector<model::TreeLoad> loads = test::first_call_against_plan<model::TreeBRSolver>(
      test::config_for(o, MPI_COMM_WORLD), stats, {"let", "migrate"}, planned, what);
  // The solver's own load record: LET bytes sent (push) or fetched (rma).
  if (loads.size() == 1u)
    EXPECT_EQ(loads[0].let_bytes * app::kDryRunBRCallsPerStep, to_others(find_pattern(planned, "let"))) << what;
  long let = to_others(find_pattern(stats, "let"));
  MPI_Allreduce(MPI_IN_PLACE, &let, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return let;
}

TEST(DryRunTree, FirstCallEqualsTheSolversAccounting) {
  for (const char* let : kLetStrategies) {
    long bytes = 0;
    for (const char* boundary : {"periodic", "free"})
      for (const char* partition : {"uniform", "balanced"})
        for (const int n : {16, 21})
          bytes += first_call(tree_options(n, boundary, partition, let),
                              std::string(let) + " " + boundary + " " + partition + " n=" + std::to_string(n));
    // The LET is tested, not only its absence: on 2-4 ranks blocks travel.
    if (test::world_size() > 1) EXPECT_GT(bytes, 0) << let;
  }
  // Exact sums (θ = 0: every source travels) and the beatnik profile's images.
  app::Options o = tree_options(16, "periodic", "uniform", "sparse");
  o.tree_theta = 0.0;
  first_call(o, "theta 0");
  o = tree_options(16, "free", "balanced", "rma");
  o.profile = "beatnik";
  first_call(o, "beatnik profile");
}

TEST(DryRunTree, SkeletonStepEqualsThePlan) {
  // The skeleton runs all three calls of a step on the initial surface: exactly the estimate.
  for (const char* let : kLetStrategies)
    for (const char* order : {"high", "medium"}) {
      app::Options o = tree_options(16, "periodic", "uniform", let);
      o.order = order;
      o.skeleton = true;
      o.steps = 1;
      const app::RunConfig cfg = test::config_for(o, MPI_COMM_WORLD);
      app::Simulation sim(MPI_COMM_WORLD, cfg);
      sim.step();
      const app::DryRunPlan plan = app::plan_dry_run(cfg, test::world_size(), cfg.ranks_per_node);
      test::expect_planned_steps(sim.comm_stats(), plan.per_rank[test::world_rank()], 1,
                                 std::string("skeleton ") + let + " " + order);
    }
}

TEST(DryRunTree, RefusesWhatItCannotEstimate) {
  app::RunConfig cfg = test::config_for(tree_options(16, "periodic", "uniform", "alltoallv"), MPI_COMM_WORLD);
  cfg.options.input = "surface.h5";
  EXPECT_THROW(app::plan_dry_run(cfg, test::world_size(), 2), NotAvailable);
  cfg = test::config_for(tree_options(8193, "periodic", "uniform", "alltoallv"), MPI_COMM_WORLD);
  EXPECT_THROW(app::plan_dry_run(cfg, test::world_size(), 2), NotAvailable);
}

TEST(DryRunTree, DeviceRunPlansTheHostTreeWithAndWithoutEdgeTerms) {
  // -x cuda forms the host's edge terms (docs/tree.md "On the GPU"), so a device run's plan (as
  // dry_run_config makes it) must be the host tree's, rank by rank, with --tree-edge-terms on
  // (the default) and off alike; and the two settings must plan different LETs somewhere (else
  // the test could not tell them apart). Planned in this process for 2-4 ranks whatever the
  // world size.
  long differ = 0;
  for (const int ranks : {2, 3, 4})
    for (const char* let : kLetStrategies)
      for (const char* boundary : {"periodic", "free"}) {
        app::DryRunPlan plans[2][2];  // [edge terms off, on][host, device]
        for (const char* edge : {"off", "on"})
          for (const char* exec : {"host", "cuda"}) {
            app::Options o = tree_options(32, boundary, "uniform", let);  // (at 24² the edge terms change no LET)
            o.br_tolerance = 1e-6;
            o.tree_edge_terms = edge;
            o.exec = exec;
            if (o.exec == "cuda") o.gpu_transport = "staged";
            const app::RunConfig cfg = app::dry_run_config(o, ranks);
            EXPECT_EQ(cfg.model.br.tree_edge, o.tree_edge_terms == "on");
            plans[o.tree_edge_terms == "on"][o.exec == "cuda"] = app::plan_dry_run(cfg, ranks, cfg.ranks_per_node);
          }
        const std::string what = std::string(let) + " " + boundary + " on " + std::to_string(ranks) + " ranks";
        for (int e : {0, 1}) {
          EXPECT_EQ(plans[e][1].estimated, plans[e][0].estimated) << what;
          for (int r = 0; r < ranks; ++r)
            for (const char* name : {"let", "migrate"})
              test::expect_same_pattern(find_pattern(plans[e][1].per_rank[r], name), 1,
                                        find_pattern(plans[e][0].per_rank[r], name), 1,
                                        what + " " + name + (e ? " edge terms on" : " edge terms off"));
        }
        for (int r = 0; r < ranks; ++r)
          differ += to_others(find_pattern(plans[1][0].per_rank[r], "let")) !=
                    to_others(find_pattern(plans[0][0].per_rank[r], "let"));
      }
  EXPECT_GT(differ, 0) << "no case where the edge terms change the LET: the test cannot tell the plans apart";
}

TEST(DryRunTree, MessageSetsReplayPushedBlocksOnly) {
  // beatnik-commbench replays sends: the pushed LET is a message set, the pulled one is named
  // unplanned rather than replayed as sends.
  app::PlanOptions opt;
  opt.exchanges = true;
  opt.skip_unplanned = true;
  const int p = test::world_size();
  const app::DryRunPlan push =
      app::plan_dry_run(test::config_for(tree_options(16, "periodic", "uniform", "sparse"), MPI_COMM_WORLD), p, 0, opt);
  EXPECT_TRUE(push.unplanned.empty());
  EXPECT_EQ(push.exchanges.count("let"), 1u);
  const app::DryRunPlan pull =
      app::plan_dry_run(test::config_for(tree_options(16, "periodic", "uniform", "rma"), MPI_COMM_WORLD), p, 0, opt);
  ASSERT_EQ(pull.unplanned.size(), 1u);
  EXPECT_EQ(pull.unplanned[0].rfind("let:", 0), 0u);
  EXPECT_EQ(pull.exchanges.count("let"), 0u);
  for (const auto& s : pull.per_rank) EXPECT_EQ(find_pattern(s, "ring").calls, 0);
}

}  // namespace
