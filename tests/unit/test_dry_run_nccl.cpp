// --dry-run of a -x cuda run over the NCCL transport (planned on this host build, which has no
// CUDA and no NCCL): NCCL has no all-to-all, so every FFT exchange algorithm becomes one grouped
// send/receive of the real runs (Redistributor::nccl_transfer), never padded; the halo posts the
// same messages as over MPI. Checked against a hand count of the reshapes' bytes and against
// the measured accounting of a real run whose MPI exchange sends exactly those runs
// (alltoallv), on 1-4 ranks with uneven splits, for every exchange name.
#include <gtest/gtest.h>

#include "beatnik/app/dry_run.hpp"
#include "beatnik/app/dry_run_plan.hpp"
#include "beatnik/app/simulation.hpp"
#include "support/test_support.hpp"
#include "unit/dry_run_expect.hpp"

using namespace beatnik;

namespace {

app::Options base(int nodes, const char* exchange) {
  app::Options o = test::small_options(nodes);
  o.order = "low";
  o.fft_exchange = exchange;
  o.ranks_per_node = 2;
  o.steps = 1;
  return o;
}

app::DryRunPlan plan_for(app::Options o, const char* exec, const char* transport, int ranks = test::world_size()) {
  o.exec = exec;
  o.gpu_transport = transport;
  const app::RunConfig c = app::dry_run_config(o, ranks);
  return app::plan_dry_run(c, ranks, c.ranks_per_node);
}

// Bytes of a pattern per step, all ranks and localities together.
long total_bytes(const app::DryRunPlan& plan, const std::string& name) {
  long b = 0;
  for (const auto& s : plan.per_rank) {
    auto it = s.stats().find(name);
    if (it != s.stats().end()) b += it->second.bytes[0] + it->second.bytes[1] + it->second.bytes[2];
  }
  return b;
}

TEST(DryRunNccl, ReshapesUnpaddedByHandCount) {
  // Planned in this one process for 2 x 2 and 3 x 2 ranks (both dimensions split, so every
  // reshape runs): default pencils, spectrum in the last intermediate layout, per derivative 3
  // forward reshapes of complex values and 3 inverse ones, the last of real values; every node's
  // value moves once in each (to itself or to another rank). 17 x 17 nodes: uneven splits.
  // The full complex spectrum (--fft-transform c2c) keeps the count simple.
  const long n = 17, per_step = 3 * (3 * 16 + 2 * 16 + 8) * n * n;
  const auto full = [](app::Options o) {
    o.fft_transform = "c2c";
    return o;
  };
  for (const int ranks : {4, 6}) {
    for (const char* exchange : {"alltoallv", "alltoall", "p2p", "nccl"}) {
      const app::DryRunPlan nccl = plan_for(full(base(n, exchange)), "cuda", "nccl", ranks);
      EXPECT_TRUE(nccl.nccl) << exchange;
      EXPECT_EQ(total_bytes(nccl, "fft"), per_step) << exchange << " on " << ranks;
    }
    // Over MPI the padded all-to-all sends more on an uneven split (so the check above can fail).
    const app::DryRunPlan mpi = plan_for(full(base(n, "alltoall")), "cuda", "staged", ranks);
    EXPECT_FALSE(mpi.nccl);
    EXPECT_GT(total_bytes(mpi, "fft"), per_step) << ranks;
  }
  // A host run never uses NCCL, whatever --gpu-transport says.
  EXPECT_FALSE(plan_for(base(n, "alltoallv"), "host", "nccl").nccl);
}

TEST(DryRunNccl, EqualsTheRunsOfARealExchangeRankByRank) {
  // What nccl_transfer posts is one message per run of the plan (peer, count) — what the MPI
  // alltoallv run sends and counts. A real run of that, measured, against the NCCL dry run of
  // each exchange name, every pattern (halo included), rank by rank and locality by locality.
  for (const char* intermediate : {"slab", "pencil"}) {
    app::Options o = base(18, "alltoallv");
    o.fft_intermediate = intermediate;
    o.fft_spectrum = intermediate == std::string("slab") ? "input" : "intermediate";
    o.placement = "random";
    o.placement_seed = 7;
    app::Simulation sim(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
    sim.step();
    for (const char* exchange : {"alltoallv", "alltoall", "p2p", "p2p-pipelined"}) {
      app::Options d = o;
      d.fft_exchange = exchange;
      const app::DryRunPlan plan = plan_for(d, "cuda", "nccl");
      const std::string what = std::string(intermediate) + " " + exchange;
      EXPECT_EQ(sim.mesh().grid().grid_rank_of_parent(), plan.grid_rank_of_rank) << what;
      test::expect_planned_steps(sim.comm_stats(), plan.per_rank[test::world_rank()], 1, what);
    }
  }
}

TEST(DryRunNccl, RefusesWhatTheDeviceRunRefuses) {
  app::Options o = base(16, "nccl");  // --fft-exchange nccl needs the NCCL transport
  EXPECT_THROW(plan_for(o, "cuda", "staged"), NotAvailable);
  o = base(16, "alltoallv");
  o.halo_strategy = "neighbor";  // NCCL runs the halo as grouped send/receives only
  EXPECT_ANY_THROW(plan_for(o, "cuda", "nccl"));
  EXPECT_THROW(plan_for(base(16, "alltoallv"), "cuda", "pigeon"), InputError);
}

}  // namespace
