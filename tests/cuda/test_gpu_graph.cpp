// --gpu-graph (docs/gpu-small.md): the low-order RK step of one rank captured once as a CUDA
// graph and launched whole every step. On one rank the graph run must equal the plain-launch
// run bit for bit after every step (same kernels, same order) and the host run to 1e-12, with
// the same bytes and messages in CommStats and the same timer call counts. Where it cannot
// apply (several ranks, medium order) auto runs plain launches and on is refused. A capture
// that meets an operation a graph cannot hold fails cleanly, and plain work still runs after.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "beatnik/base/error.hpp"
#include "beatnik/exec/graph.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/space.hpp"
#include "beatnik/io/state_csv.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {

constexpr long kSteps = 4;

app::Options base_options(int nodes, const char* boundary, const char* intermediate, const char* reorder) {
  app::Options o = test::small_options(nodes);
  o.profile = "beatnik";
  o.boundary = boundary;
  o.fft_intermediate = intermediate;
  o.fft_reorder = reorder;
  o.initial_condition = "random";
  o.seed = 11;
  o.magnitude = 0.02;
  return o;
}

std::unique_ptr<app::Simulation> make(app::Options o, const char* exec, const char* graph) {
  o.exec = exec;
  o.gpu_graph = graph;
  if (std::string(exec) == "cuda") o.gpu_transport = "staged";
  return std::make_unique<app::Simulation>(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
}

struct Variant {
  std::string what;
  app::Options o;
};

std::vector<Variant> variants() {
  std::vector<Variant> v;
  v.push_back({"periodic/pencil/strided (2-D plan)", base_options(32, "periodic", "pencil", "strided")});
  v.push_back({"periodic/slab/contiguous", base_options(31, "periodic", "slab", "contiguous")});
  v.push_back({"free/slab/strided", base_options(29, "free", "slab", "strided")});
  Variant r2c{"periodic/pencil r2c, --gpu-timers host", base_options(30, "periodic", "pencil", "strided")};
  r2c.o.fft_transform = "r2c";
  r2c.o.gpu_timers = "host";
  v.push_back(r2c);
  Variant overlap{"periodic/slab --halo-overlap", base_options(32, "periodic", "slab", "strided")};
  overlap.o.halo_overlap = true;
  v.push_back(overlap);
  Variant persistent{"periodic/pencil --halo-strategy persistent", base_options(28, "periodic", "pencil", "strided")};
  persistent.o.halo_strategy = "persistent";
  v.push_back(persistent);
  return v;
}

}  // namespace

TEST(GpuGraph, OneRankGraphEqualsPlainLaunchesBitwiseAndTheHost) {
  ASSERT_GT(exec::device_count(), 0) << "the cuda tests need a GPU";
  for (const Variant& v : variants()) {
    const std::string what = v.what + " on " + std::to_string(test::world_size()) + " rank(s)";
    auto host = make(v.o, "host", "auto");
    auto plain = make(v.o, "cuda", "off");
    auto graph = make(v.o, "cuda", "auto");
    const bool one = test::world_size() == 1;
    EXPECT_FALSE(plain->step_graph()) << what;
    // auto: the graph exactly on one rank.
    EXPECT_EQ(graph->graph_in_use(), one) << what;
    double worst = 0;
    bool bitwise = true;
    for (long s = 0; s < kSteps; ++s) {
      host->step();
      plain->step();
      graph->step();
      const auto a = io::gather_state(graph->mesh(), graph->state());
      const auto b = io::gather_state(plain->mesh(), plain->state());
      const auto h = io::gather_state(host->mesh(), host->state());
      if (test::world_rank() == 0) {
        bitwise = bitwise && a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
        worst = std::max(worst, test::max_rel_diff(a, h, 5));
      }
    }
    if (one) {
      EXPECT_TRUE(graph->graph_in_use()) << what << ": " << graph->step_graph()->fallback();
      EXPECT_EQ(graph->step_graph()->captures(), 1) << what << ": captured once, launched every step after";
    }
    if (test::world_rank() == 0) std::printf("[ compared ] %s: graph %s, bitwise %s, max rel diff vs host %.3e\n",
                                             what.c_str(), graph->graph_in_use() ? "on" : "off",
                                             bitwise ? "yes" : "NO", worst);
    EXPECT_TRUE(bitwise) << what;
    EXPECT_LE(worst, 1e-12) << what;
    // The launches replay the capture's bookkeeping: the same bytes, messages and calls per
    // pattern, and every timer region with the same call count.
    const auto& cg = graph->comm_stats().stats();
    const auto& cp = plain->comm_stats().stats();
    ASSERT_EQ(cg.size(), cp.size()) << what;
    for (const auto& [name, p] : cp) {
      ASSERT_TRUE(cg.count(name)) << what << ": pattern " << name;
      const comm::PatternStats& g = cg.at(name);
      EXPECT_EQ(g.calls, p.calls) << what << ": " << name;
      for (int l = 0; l < 3; ++l) {
        EXPECT_EQ(g.messages[l], p.messages[l]) << what << ": " << name;
        EXPECT_EQ(g.bytes[l], p.bytes[l]) << what << ": " << name;
      }
    }
    const auto& tg = graph->timers().stats();
    const auto& tp = plain->timers().stats();
    ASSERT_EQ(tg.size(), tp.size()) << what;
    for (const auto& [name, p] : tp) {
      ASSERT_TRUE(tg.count(name)) << what << ": region " << name;
      EXPECT_EQ(tg.at(name).calls, p.calls) << what << ": region " << name;
    }
    if (one && v.o.boundary == "periodic") {  // the replayed counts are not all zero: a periodic
      ASSERT_TRUE(cp.count("halo")) << what;  // rank sends its halo to itself
      EXPECT_GT(cp.at("halo").bytes[0], 0) << what;
      EXPECT_EQ(cp.at("halo").calls, 2 * 3 * kSteps) << what;  // state and V, three stages
    }
  }
}

// Where the graph cannot apply: auto runs plain launches, on is refused with the reason.
TEST(GpuGraph, RefusedWhereItCannotApply) {
  ASSERT_GT(exec::device_count(), 0);
  app::Options medium = base_options(16, "periodic", "pencil", "strided");
  medium.order = "medium";
  EXPECT_FALSE(make(medium, "cuda", "auto")->step_graph());
  try {
    make(medium, "cuda", "on");
    ADD_FAILURE() << "--gpu-graph on with medium order was accepted";
  } catch (const NotAvailable& e) {  // the first reason that applies
    const char* why = test::world_size() > 1 ? "ranks" : "low-order step only";
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
  app::Options low = base_options(16, "periodic", "pencil", "strided");
  if (test::world_size() > 1) {
    EXPECT_FALSE(make(low, "cuda", "auto")->step_graph());
    try {
      make(low, "cuda", "on");
      ADD_FAILURE() << "--gpu-graph on on several ranks was accepted";
    } catch (const NotAvailable& e) {
      EXPECT_NE(std::string(e.what()).find("ranks"), std::string::npos) << e.what();
    }
  } else {
    auto on = make(low, "cuda", "on");
    EXPECT_TRUE(on->graph_in_use());
    on->step();
    EXPECT_TRUE(on->graph_in_use());
  }
}

// A capture that meets what a graph cannot hold fails with the reason, keeps nothing and leaves
// no error behind: plain device work runs after it (the fallback of --gpu-graph auto).
TEST(GpuGraph, FailedCaptureLeavesPlainLaunchesWorking) {
  ASSERT_GT(exec::device_count(), 0);
  exec::Buffer<double> d(exec::Space::Device, 4);
  std::vector<double> h = {1, 2, 3, 4}, back(4, 0);
  exec::CapturedWork work;
  const std::string fence = work.capture([] { exec::fence(exec::Space::Device); });
  EXPECT_FALSE(fence.empty());
  EXPECT_FALSE(work.captured());
  const std::string copy =
      work.capture([&] { exec::copy(d.data(), exec::Space::Device, h.data(), exec::Space::Host, h.size()); });
  EXPECT_FALSE(copy.empty());
  EXPECT_FALSE(work.captured());
  const std::string thrown = work.capture([] { throw InputError("stop here"); });
  EXPECT_EQ(thrown, "stop here");
  EXPECT_FALSE(work.captured());
  if (test::world_rank() == 0)
    std::printf("[ refused  ] fence: %s\n[ refused  ] copy: %s\n", fence.c_str(), copy.c_str());
  exec::copy(d.data(), exec::Space::Device, h.data(), exec::Space::Host, h.size());
  exec::copy(back.data(), exec::Space::Host, d.data(), exec::Space::Device, back.size());
  exec::fence(exec::Space::Device);
  EXPECT_EQ(back, h);
}
