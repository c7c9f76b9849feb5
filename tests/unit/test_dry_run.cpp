// --dry-run: the accounting planned in one process for P ranks must equal what a real run on P
// ranks measures, rank by rank (exchanges, messages and bytes by locality), for every placement,
// order and FFT exchange, and its results section must equal the real run's.
#include <gtest/gtest.h>

#include "beatnik/app/dry_run.hpp"
#include "beatnik/app/report.hpp"
#include "beatnik/app/simulation.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {

constexpr long kSteps = 2;

void compare(const app::Options& o, const std::string& what) {
  const app::RunConfig cfg = test::config_for(o, MPI_COMM_WORLD);
  app::Simulation sim(MPI_COMM_WORLD, cfg);
  while (sim.steps_done() < kSteps) sim.step();
  const int size = test::world_size(), rank = test::world_rank();
  const app::DryRunPlan plan = app::plan_dry_run(cfg, size, cfg.ranks_per_node);
  // The placement the run got is the one planned.
  EXPECT_EQ(sim.mesh().grid().grid_rank_of_parent(), plan.grid_rank_of_rank) << what;
  const auto& measured = sim.comm_stats().stats();
  const auto& planned = plan.per_rank[rank].stats();
  ASSERT_FALSE(measured.empty()) << what;
  EXPECT_EQ(measured.size(), planned.size()) << what;
  for (const auto& [name, m] : measured) {
    ASSERT_TRUE(planned.count(name)) << what << ": " << name << " not planned";
    const auto& p = planned.at(name);
    EXPECT_EQ(m.calls, p.calls * kSteps) << what << " " << name;
    for (int l = 0; l < 3; ++l) {
      EXPECT_EQ(m.bytes[l], p.bytes[l] * kSteps) << what << " " << name << " locality " << l;
      EXPECT_EQ(m.messages[l], p.messages[l] * kSteps) << what << " " << name << " locality " << l;
    }
  }
  const nlohmann::json doc = app::results_document(sim, app::RunOutcome{true, "", 1.0}, {"beatnik"});
  if (sim.mesh().grid().rank() == 0)
    EXPECT_EQ(doc["communication"], app::dry_run_communication(plan, kSteps)) << what;
}

app::Options base(const char* order, const char* placement) {
  app::Options o = test::small_options(16);
  o.order = order;
  o.placement = placement;
  o.placement_seed = std::string(placement) == "random" ? std::optional<std::uint64_t>(7) : std::nullopt;
  o.ranks_per_node = 2;
  o.steps = kSteps;
  return o;
}

TEST(DryRun, EqualsMeasuredAccountingEveryPlacement) {
  for (const char* placement : {"linear", "cart", "node-blocks", "random"})
    compare(base("low", placement), std::string(placement) + ", low");
  for (const char* placement : {"linear", "random"})
    for (const char* order : {"medium", "high"})
      compare(base(order, placement), std::string(placement) + ", " + order);
}

TEST(DryRun, EqualsMeasuredAccountingEveryFftExchange) {
  for (const char* exchange : {"alltoallv", "alltoall", "p2p"})
    for (const char* intermediate : {"slab", "pencil"}) {
      app::Options o = base("low", "random");
      o.fft_exchange = exchange;
      o.fft_intermediate = intermediate;
      o.fft_spectrum = intermediate == std::string("slab") ? "input" : "intermediate";
      compare(o, std::string(exchange) + " " + intermediate);
    }
}

TEST(DryRun, EqualsMeasuredAccountingFreeBoundaryAndOneRankPerNode) {
  app::Options o = base("high", "node-blocks");  // free boundaries: high order (or the beatnik profile)
  o.boundary = "free";
  o.ranks_per_node = 1;
  compare(o, "free, 1 rank per node");
  o.ranks_per_node = std::nullopt;  // one node (the test's machine): no off-node bytes
  o.placement = "linear";
  {
    const app::RunConfig cfg = test::config_for(o, MPI_COMM_WORLD);
    const app::DryRunPlan plan = app::plan_dry_run(cfg, test::world_size(), 0);
    for (const auto& s : plan.per_rank)
      for (const auto& [n, p] : s.stats()) EXPECT_EQ(p.bytes[2], 0) << n;
  }
}

}  // namespace
