// --warmup K: the first K steps are left out of every accumulator the report reads. A low-order
// run moves the same bytes in every step, so after K warm-up steps of S the communication
// counts must be (S - K) / S of the same run without warm-up, and every per-step series must
// hold S - K entries.
#include <gtest/gtest.h>

#include "beatnik/app/report.hpp"
#include "beatnik/app/simulation.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {

constexpr long kSteps = 6, kWarmup = 2;

struct Finished {
  std::unique_ptr<app::Simulation> sim;
  nlohmann::json doc;  // complete on rank 0
};

Finished run_with_warmup(long warmup) {
  app::Options o;
  o.nodes = 16;
  o.steps = kSteps;
  o.warmup = warmup;
  Finished r;
  r.sim = std::make_unique<app::Simulation>(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
  while (r.sim->steps_done() < kSteps) r.sim->step();
  r.doc = app::results_document(*r.sim, app::RunOutcome{true, "", 1.0}, {"beatnik"});
  return r;
}

TEST(Warmup, CommunicationIsThatOfTheMeasuredSteps) {
  const Finished cold = run_with_warmup(0), warm = run_with_warmup(kWarmup);
  // This rank's own counts.
  const auto& c = cold.sim->comm_stats().stats();
  const auto& w = warm.sim->comm_stats().stats();
  ASSERT_FALSE(c.empty());
  ASSERT_EQ(c.size(), w.size());
  for (const auto& [name, cs] : c) {
    ASSERT_TRUE(w.count(name)) << name;
    const auto& ws = w.at(name);
    EXPECT_EQ(ws.calls * kSteps, cs.calls * (kSteps - kWarmup)) << name;
    for (int l = 0; l < 3; ++l) {
      EXPECT_EQ(ws.bytes[l] * kSteps, cs.bytes[l] * (kSteps - kWarmup)) << name << " locality " << l;
      EXPECT_EQ(ws.messages[l] * kSteps, cs.messages[l] * (kSteps - kWarmup)) << name << " locality " << l;
    }
  }
  // Timer calls: the region "step" once per measured step.
  EXPECT_EQ(warm.sim->timers().stats().at("step").calls, kSteps - kWarmup);
  EXPECT_EQ(cold.sim->timers().stats().at("step").calls, kSteps);
  EXPECT_EQ(warm.sim->measured_steps(), kSteps - kWarmup);
  EXPECT_EQ(static_cast<long>(warm.sim->warmup_seconds().size()), kWarmup);
  for (const auto& [name, s] : warm.sim->region_series()) EXPECT_EQ(static_cast<long>(s.size()), kSteps - kWarmup) << name;

  // The results document: totals over ranks and per measured step.
  if (test::world_rank() != 0) return;
  for (auto& [p, cj] : cold.doc["communication"].items()) {
    const auto& wj = warm.doc["communication"][p];
    for (const char* loc : {"self", "on_node", "off_node"}) {
      EXPECT_EQ(wj["bytes_total"][loc].get<long>() * kSteps, cj["bytes_total"][loc].get<long>() * (kSteps - kWarmup))
          << p << " " << loc;
      EXPECT_DOUBLE_EQ(wj["bytes_per_step_total"][loc].get<double>(), cj["bytes_per_step_total"][loc].get<double>())
          << p << " " << loc;
    }
  }
  EXPECT_EQ(warm.doc["warmup"]["steps"].get<long>(), kWarmup);
  EXPECT_EQ(cold.doc["warmup"]["steps"].get<long>(), 0);
  EXPECT_EQ(warm.doc["steps"]["seconds"].size(), size_t(kSteps - kWarmup));
  EXPECT_EQ(warm.doc["steps"]["measured"].get<long>(), kSteps - kWarmup);
  EXPECT_EQ(warm.doc["steps"]["done"].get<long>(), kSteps);
  EXPECT_EQ(warm.doc["steps"]["statistics"]["count"].get<long>(), kSteps - kWarmup);
  for (auto& [n, s] : warm.doc["timers"]["series"].items()) EXPECT_EQ(s.size(), size_t(kSteps - kWarmup)) << n;
}

}  // namespace
