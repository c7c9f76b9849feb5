// GPU against CPU for the exact Birkhoff–Rott solver and full medium/high-order runs: the
// device kernel (shared-memory tiles) and the host kernel (SIMD, rsqrt + Newton) must agree
// to 1e-12 relative per step. Built in the CUDA preset only; needs a visible GPU (the test
// reports itself skipped, with the reason, when there is none). The ring pass moves device
// blocks with every strategy of comm/ring/registry over every GPU transport it supports
// (staged, cuda-aware, nccl) and must give the host's result; the pairs it does not support
// must be refused with the registry's reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "beatnik/app/simulation.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/comm/ring/registry.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/exec/space.hpp"
#include "beatnik/io/state_csv.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {

const char* const kDeviceTransports[] = {"staged", "cuda-aware", "nccl"};

comm::TransportKind transport_kind(const std::string& t) {
  return t == "staged" ? comm::TransportKind::Staged
         : t == "cuda-aware" ? comm::TransportKind::CudaAware
                             : comm::TransportKind::Nccl;
}

// --gpu-transport auto may pick any device transport: a strategy that one of them cannot
// carry runs staged (every strategy supports staged).
std::string transport_for(const std::string& strategy) {
  for (const char* t : kDeviceTransports)
    if (!comm::ring::find_strategy(strategy).unavailable(transport_kind(t)).empty()) return "staged";
  return "auto";
}

}  // namespace

TEST(BRDevice, DeviceRunsEqualHostRunsPerStep) {
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  std::vector<app::Options> setups;
  for (const char* order : {"medium", "high"}) {
    app::Options o = test::small_options(25);
    o.order = order;
    setups.push_back(o);
  }
  app::Options k2 = test::small_options(25);  // 5x5 images: the kernel's generic image loop
  k2.order = "high";
  k2.br_images = 2;
  setups.push_back(k2);
  k2.nodes = 24;  // even N: lattice pairs half a period apart (br_kernel.hpp, image_centre)
  setups.push_back(k2);
  app::Options f = test::small_options(24);
  f.order = "high";
  f.boundary = "free";
  f.initial_condition = "sech2";
  f.magnitude = 0.1;
  f.period = 9.0;
  f.epsilon = 2.0;
  setups.push_back(f);
  f.profile = "beatnik";
  setups.push_back(f);
  for (app::Options o : setups)
    for (const std::string& strategy : test::ring_strategies(comm::TransportKind::Staged)) {
      o.br_strategy = strategy;
      o.gpu_transport = transport_for(strategy);
      for (long s = 1; s <= 3; ++s) {
        o.exec = "host";
        decltype(test::run_and_gather(o, s)) host, dev;
        try {
          host = test::run_and_gather(o, s);
          o.exec = "cuda";
          dev = test::run_and_gather(o, s);
        } catch (const NotAvailable& e) {  // only what this MPI library lacks (an RMA window)
          EXPECT_TRUE(test::expected_transport_refusal(strategy + " ring", e.what())) << e.what();
          break;
        }
        const double d = test::world_rank() == 0 ? test::max_rel_diff(dev, host, 5) : 0.0;
        EXPECT_TRUE(test::all_ranks(d <= 1e-12))
            << o.order << "/" << o.boundary << "/" << o.profile << " " << strategy << " step " << s << ": " << d;
      }
    }
}

namespace {

// Largest relative difference, step by step, of a GPU run with `transport` against the host
// run; negative when the transport cannot run here (the reason in `skip`). Also checks that the
// requested transport is the one used and that each of `patterns` counted the same messages
// and bytes, per locality, as on the host — or, for data-dependent patterns (by_locality false:
// a particle within round-off of a cell edge may go either way), the same bytes over all ranks.
double transport_difference(const app::Options& base, const std::string& transport, std::string& skip,
                            const std::vector<std::string>& patterns, bool by_locality = true) {
  auto pair = test::host_and_device(base, transport);
  if (!pair.dev) {
    skip = pair.refusal;
    return -1.0;
  }
  app::Simulation& host = *pair.host;
  std::unique_ptr<app::Simulation>& dev = pair.dev;
  EXPECT_EQ(std::string(comm::to_string(dev->transport().kind())), transport);
  double worst = 0.0;
  for (long s = 0; s < 3; ++s) {
    host.step();
    dev->step();
    const auto a = io::gather_state(dev->mesh(), dev->state());
    const auto b = io::gather_state(host.mesh(), host.state());
    double diff = test::world_rank() == 0 ? test::max_rel_diff(a, b, 5) : 0.0;
    MPI_Bcast(&diff, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    worst = std::max(worst, diff);
  }
  const auto& hs = host.comm_stats().stats();
  const auto& ds = dev->comm_stats().stats();
  for (const std::string& p : patterns) {
    bool same = hs.count(p) == ds.count(p);
    if (same && hs.count(p) && by_locality)
      for (int l = 0; l < 3; ++l)
        same = same && hs.at(p).bytes[l] == ds.at(p).bytes[l] && hs.at(p).messages[l] == ds.at(p).messages[l];
    if (same && hs.count(p) && !by_locality) {
      long sum[2] = {hs.at(p).bytes[0] + hs.at(p).bytes[1] + hs.at(p).bytes[2],
                     ds.at(p).bytes[0] + ds.at(p).bytes[1] + ds.at(p).bytes[2]};
      MPI_Allreduce(MPI_IN_PLACE, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      same = sum[0] == sum[1];
    }
    EXPECT_TRUE(test::all_ranks(same)) << transport << ": " << p << " bytes/messages differ from the host run";
  }
  return worst;
}

}  // namespace

TEST(BRDevice, EveryRingTransportGivesTheHostRing) {
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  if (test::world_size() == 1 && test::world_rank() == 0)
    std::printf("[ note     ] 1 rank: the ring has no transfers; run on 2 ranks to compare the transports\n");
  app::Options periodic = test::small_options(25);
  periodic.order = "high";
  app::Options free = test::small_options(23);  // odd: uneven blocks travel the ring
  free.order = "high";
  free.boundary = "free";
  free.initial_condition = "sech2";
  free.magnitude = 0.1;
  free.period = 9.0;
  free.epsilon = 2.0;
  free.profile = "beatnik";
  for (app::Options o : {periodic, free})
    for (const auto& strategy : comm::ring::registry())
      for (const char* t : kDeviceTransports) {
        o.br_strategy = strategy.name;
        std::string skip;
        const double d = transport_difference(o, t, skip, {"ring"});
        const std::string what = o.profile + "/" + o.boundary + " " + strategy.name + " ring, transport " + t +
                                 " on " + std::to_string(test::world_size()) + " rank(s)";
        if (const std::string why = strategy.unavailable(transport_kind(t)); !why.empty()) {
          // Refused, before anything ran, with the registry's reason (unless the transport
          // itself is refused first, for what this machine lacks).
          EXPECT_LT(d, 0.0) << what << ": ran although the registry says " << why;
          const bool ring_refusal = skip.find(std::string("ring strategy ") + strategy.name) != std::string::npos &&
                                    skip.find(why) != std::string::npos;
          if (ring_refusal && test::world_rank() == 0) std::printf("[ NOT RUN  ] %s: %s\n", what.c_str(), skip.c_str());
          EXPECT_TRUE(ring_refusal || test::expected_transport_refusal(what, skip)) << what << ": refusal: " << skip;
          continue;
        }
        if (d < 0) {  // only what this machine may lack is acceptable, and said aloud
          EXPECT_TRUE(test::expected_transport_refusal(what, skip)) << what << ": unexpected refusal: " << skip;
          continue;
        }
        if (test::world_rank() == 0) std::printf("[ compared ] %s: max rel diff %.3e\n", what.c_str(), d);
        EXPECT_LE(d, 1e-12) << what;
      }
}

// The cutoff solver's whole pipeline on the device (owner search, sorts, ghosts, cell list,
// kernel) against the host, with every transport for the migrate and ghost exchanges and both
// partitions: 1e-12 per step, and the same migrated bytes.
TEST(BRDevice, CutoffSolverOnTheDeviceGivesTheHostResult) {
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  app::Options periodic = test::small_options(25);
  periodic.order = "high";
  periodic.solver = "cutoff";
  periodic.cutoff = 0.35;
  periodic.magnitude = 0.2;
  app::Options medium = periodic;
  medium.order = "medium";
  app::Options free = test::readme_example2_options(24);  // beatnik profile: the float32 test
  free.solver = "cutoff";
  free.cutoff = 0.5;
  for (app::Options o : {periodic, medium, free})
    for (const char* partition : {"uniform", "balanced"})
      for (const char* t : {"staged", "cuda-aware", "nccl"}) {
        o.spatial_partition = partition;
        std::string skip;
        const double d = transport_difference(o, t, skip, {"migrate"}, false);  // 72 B per node per call
        const std::string what = o.order + "/" + o.profile + "/" + o.boundary + " cutoff, " + partition +
                                 ", transport " + t + " on " + std::to_string(test::world_size()) + " rank(s)";
        if (d < 0) {
          EXPECT_TRUE(test::expected_transport_refusal(what, skip)) << what << ": unexpected refusal: " << skip;
          continue;
        }
        if (test::world_rank() == 0) std::printf("[ compared ] %s: max rel diff %.3e\n", what.c_str(), d);
        EXPECT_LE(d, 1e-12) << what;
      }
}
