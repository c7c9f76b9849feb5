#pragma once
// Measured accounting against the dry run's plan (test_dry_run_cutoff, test_dry_run_tree,
// test_dry_run_nccl).
#include <gtest/gtest.h>

#include <mpi.h>

#include <string>
#include <vector>

#include "beatnik/app/dry_run_plan.hpp"
#include "beatnik/app/simulation.hpp"
#include "beatnik/comm/comm_stats.hpp"
#include "support/test_support.hpp"

namespace beatnik::test {

// The pattern `name` of `s` (all zero when it has none).
inline comm::PatternStats find_pattern(const comm::CommStats& s, const std::string& name) {
  auto it = s.stats().find(name);
  return it == s.stats().end() ? comm::PatternStats{} : it->second;
}

// Bytes to other ranks (both localities off self).
inline long to_others(const comm::PatternStats& s) { return s.bytes[1] + s.bytes[2]; }

// m_times × the measured pattern equals p_times × the planned one: calls, and bytes and messages
// of every locality.
inline void expect_same_pattern(const comm::PatternStats& m, long m_times, const comm::PatternStats& p, long p_times,
                                const std::string& what) {
  EXPECT_EQ(m.calls * m_times, p.calls * p_times) << what;
  for (int l = 0; l < 3; ++l) {
    EXPECT_EQ(m.bytes[l] * m_times, p.bytes[l] * p_times) << what << " locality " << l;
    EXPECT_EQ(m.messages[l] * m_times, p.messages[l] * p_times) << what << " locality " << l;
  }
}

// One velocity() call of a fresh particle solver (cutoff, tree) on the initial state of `cfg`'s
// run, accounted in `stats`, against the dry run's estimate: each pattern of `patterns` (the
// estimated ones, sorted) equals kDryRunBRCallsPerStep calls of it. Returns the call's load records.
template <class Solver>
auto first_call_against_plan(const app::RunConfig& cfg, comm::CommStats& stats,
                             const std::vector<std::string>& patterns, comm::CommStats& planned,
                             const std::string& what) {
  app::Simulation sim(MPI_COMM_WORLD, cfg);
  Solver solver(sim.mesh(), cfg.space, cfg.model.br, cfg.model.epsilon, &stats, nullptr);
  const mesh::Field omega(cfg.space, sim.state().layout(), 3), out(cfg.space, sim.state().layout(), 3);
  solver.velocity(sim.state(), omega, out);
  const auto loads = solver.take_loads();
  EXPECT_EQ(loads.size(), 1u) << what;
  const app::DryRunPlan plan = app::plan_dry_run(cfg, world_size(), cfg.ranks_per_node);
  EXPECT_EQ(plan.estimated, patterns) << what;
  planned = plan.per_rank[world_rank()];
  for (const std::string& name : patterns)
    expect_same_pattern(find_pattern(stats, name), app::kDryRunBRCallsPerStep, find_pattern(planned, name), 1,
                        what + " " + name);
  return loads;
}

// Every measured pattern over `steps` steps equals the per-step plan times `steps`, and nothing
// else is planned.
inline void expect_planned_steps(const comm::CommStats& measured, const comm::CommStats& planned, long steps,
                                 const std::string& what) {
  EXPECT_FALSE(measured.stats().empty()) << what;
  EXPECT_EQ(measured.stats().size(), planned.stats().size()) << what;
  for (const auto& [name, m] : measured.stats()) {
    auto it = planned.stats().find(name);
    if (it == planned.stats().end()) {
      ADD_FAILURE() << what << ": " << name << " not planned";
      continue;
    }
    expect_same_pattern(m, 1, it->second, steps, what + " " + name);
  }
}

}  // namespace beatnik::test
