// The ring pass with every strategy of comm/ring/registry, on host blocks of uneven sizes (an
// empty one among them) and of sizes beyond MPI's eager limit: every rank sees every block, in
// the order own, rank−1, rank−2, ..., with the contents its origin wrote, call after call (the
// persistent requests and the window are made once and reused); the bytes, messages and timer
// calls are the same for every strategy and match the ring's schedule worked out here.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "beatnik/base/error.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/comm/context.hpp"
#include "beatnik/comm/ring/registry.hpp"
#include "beatnik/comm/ring_pass.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {

// What rank `origin` writes at position k of its block (exact in a double).
double value(int origin, long k, int call) { return origin * 1e7 + k + 0.25 * call; }

struct Seen {
  std::vector<int> order;  // origins, one per block, in visiting order, every call
  long wrong = 0;          // doubles that differ from what their origin wrote
  long chunk_errors = 0;   // chunks not visited 0..chunks−1 in order
};

// Runs `calls` ring passes with `strategy`; counts(rank) doubles per block.
Seen run_ring(const std::string& strategy, long (*counts)(int), int calls, comm::CommStats& stats, Timers& timers) {
  const int me = test::world_rank();
  comm::Context ctx(MPI_COMM_WORLD);
  comm::RingPass ring(MPI_COMM_WORLD, counts(me), exec::Space::Host, strategy, ctx.locality(MPI_COMM_WORLD), &stats,
                      &timers, "ring");
  Seen seen;
  for (int call = 0; call < calls; ++call) {
    double* own = ring.own_block();
    for (long k = 0; k < counts(me); ++k) own[k] = value(me, k, call);
    int expect_chunk = 0;
    ring.run([&](const double* block, int origin, int chunk, int chunks) {
      if (chunk != expect_chunk) ++seen.chunk_errors;
      expect_chunk = chunk + 1 == chunks ? 0 : chunk + 1;
      if (chunk != 0) return;
      seen.order.push_back(origin);
      EXPECT_EQ(ring.count_of(origin), counts(origin));
      for (long k = 0; k < counts(origin); ++k) seen.wrong += block[k] != value(origin, k, call);
    });
  }
  return seen;
}

long uneven(int rank) { return (rank * 4) % 7 * 3; }  // 0, 12, 3, 15, 6 doubles
long large(int rank) { return 40000 + 1000 * rank; }  // 320 KB and more: rendezvous protocols

}  // namespace

TEST(RingPass, EveryStrategyDeliversEveryBlockInRingOrderCallAfterCall) {
  const int me = test::world_rank(), p = test::world_size();
  const int calls = 3;
  const std::vector<std::string> names = test::ring_strategies();
  ASSERT_EQ(names.size(), comm::ring::registry().size()) << "every strategy runs on host data";
  for (long (*counts)(int) : {uneven, large}) {
    // The schedule: in round r this rank sees the block of rank − r and sends it on (r < P−1).
    std::vector<int> order;
    long sent_bytes = 0;
    for (int call = 0; call < calls; ++call)
      for (int r = 0; r < p; ++r) {
        const int origin = (me - r + p) % p;
        order.push_back(origin);
        if (r + 1 < p) sent_bytes += counts(origin) * long(sizeof(double));
      }
    for (const std::string& name : names) {
      comm::CommStats stats;
      Timers timers;
      const Seen seen = run_ring(name, counts, calls, stats, timers);
      const std::string what = name + " with " + std::to_string(counts(0)) + "+ doubles per block";
      EXPECT_EQ(seen.order, order) << what;
      EXPECT_TRUE(test::all_ranks(seen.wrong == 0)) << what << ": " << seen.wrong << " wrong doubles";
      EXPECT_EQ(seen.chunk_errors, 0) << what;
      if (p == 1) {
        EXPECT_TRUE(stats.stats().empty()) << what << ": one rank sends nothing";
        continue;
      }
      const comm::PatternStats& s = stats.stats().at("ring");
      EXPECT_EQ(s.calls, calls) << what;
      EXPECT_EQ(s.messages[0] + s.messages[1] + s.messages[2], long(calls) * (p - 1)) << what;
      EXPECT_EQ(s.messages[0], 0) << what << ": a rank never sends to itself";
      EXPECT_EQ(s.bytes[0] + s.bytes[1] + s.bytes[2], sent_bytes) << what;
      // Timer regions: a compute call per block, a ring call per transfer; the hidden region
      // exists for every strategy, with a call per transfer where the transfer overlaps.
      const auto& t = timers.stats();
      ASSERT_TRUE(t.count("ring.compute") && t.count("ring.ring") && t.count("ring.ring.hidden")) << what;
      EXPECT_EQ(t.at("ring.compute").calls, long(calls) * p) << what;
      EXPECT_EQ(t.at("ring.ring").calls, long(calls) * (p - 1)) << what;
      const long hidden_calls = t.at("ring.ring.hidden").calls;
      EXPECT_TRUE(hidden_calls == 0 || hidden_calls == long(calls) * (p - 1)) << what << ": " << hidden_calls;
    }
  }
}

TEST(RingRegistry, UnknownNamesAndUnsupportedTransportsAreRefusedClearly) {
  try {
    comm::ring::find_strategy("token-ring");
    ADD_FAILURE() << "accepted an unknown strategy";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("token-ring"), std::string::npos) << what;
    for (const auto& s : comm::ring::registry()) EXPECT_NE(what.find(s.name), std::string::npos) << what;
  }
  // Unknown names fail before the ring's first collective, on every rank alike.
  EXPECT_THROW(comm::RingPass(MPI_COMM_WORLD, 6, exec::Space::Host, "token-ring", {0}, nullptr, nullptr, "ring"),
               InputError);
  // NCCL has neither persistent requests nor one-sided puts; MPI windows here are host memory.
  for (const char* name : {"persistent", "rma"}) {
    try {
      comm::ring::find_strategy(name, comm::TransportKind::Nccl);
      ADD_FAILURE() << name << " accepted the nccl transport";
    } catch (const NotAvailable& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(name), std::string::npos) << what;
      EXPECT_NE(what.find("nccl"), std::string::npos) << what;
    }
  }
  EXPECT_THROW(comm::ring::find_strategy("rma", comm::TransportKind::CudaAware), NotAvailable);
  EXPECT_NO_THROW(comm::ring::find_strategy("rma", comm::TransportKind::Staged));
  EXPECT_NO_THROW(comm::ring::find_strategy("persistent", comm::TransportKind::CudaAware));
  for (const char* name : {"blocking", "overlap"})
    for (auto t : {comm::TransportKind::Host, comm::TransportKind::Staged, comm::TransportKind::CudaAware,
                   comm::TransportKind::Nccl})
      EXPECT_NO_THROW(comm::ring::find_strategy(name, t)) << name << " " << comm::to_string(t);
}

TEST(RingRegistry, NamesAndHelpCoverEveryStrategy) {
  const std::string names = comm::ring::strategy_names(), help = comm::ring::strategy_help();
  for (const auto& s : comm::ring::registry()) {
    EXPECT_NE(names.find(s.name), std::string::npos) << s.name;
    EXPECT_NE(help.find(s.name), std::string::npos) << s.name;
    EXPECT_NE(help.find(s.description), std::string::npos) << s.name;
  }
}
