// Every halo strategy of the registry (comm/halo/registry.hpp) against closed-form ghosts and,
// bit for bit, against isend: periodic and free grids, uneven splits (13 x 11 nodes), every
// process grid the rank count allows (1xP and Px1 included, where a neighbour repeats or is
// this rank itself), with and without corners, over several exchanges so that requests and
// windows made once are reused with new data each time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "beatnik/base/timers.hpp"
#include "beatnik/comm/context.hpp"
#include "beatnik/comm/halo/registry.hpp"
#include "beatnik/comm/halo_exchange.hpp"
#include "beatnik/exec/space.hpp"
#include "beatnik/mesh/field.hpp"
#include "beatnik/mesh/surface_mesh.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {

constexpr int kNx = 13, kNy = 11, kComps = 3, kExchanges = 3;
const double kUnset = -1.0e300;  // ghosts no neighbour fills keep it

mesh::Geometry geometry(bool periodic) {
  mesh::Geometry g;
  g.nodes = {kNx, kNy};
  g.periodic = {periodic, periodic};
  g.node_spacing = g.spacing = {0.1, 0.2};
  g.origin = {-0.3, 0.5};
  g.period = {kNx * 0.1, kNy * 0.2};
  return g;
}

// The value of component c at global node (gi, gj) in exchange number k: new every exchange,
// so a ghost left from the previous one is caught.
double value(int k, int c, int gi, int gj) { return std::sin(0.3 * gi + c + k) + std::cos(0.7 * gj - c) + 10.0 * k + 0.01 * gi * gj; }

struct Exchanged {
  std::vector<double> field;  // every value, ghosts included, after each exchange in turn
  double worst = 0;           // largest |ghost - closed form| over the exchanges
};

Exchanged exchange_with(const std::string& strategy, const mesh::SurfaceMesh& m, bool periodic, bool corners, Timers* timers) {
  const GhostedLayout L = m.layout();
  const Box2 own = m.owned();
  mesh::Field f(exec::Space::Host, L, kComps);
  comm::HaloExchange h(m.grid(), L, comm::HaloPattern{2, corners}, kComps, exec::Space::Host, m.locality(), nullptr,
                       "halo", nullptr, comm::HaloRun{strategy, timers, "halo.test"});
  Exchanged run;
  const auto view = f.view();
  for (int k = 0; k < kExchanges; ++k) {
    for (int c = 0; c < kComps; ++c)
      for (int i = -2; i < L.ni + 2; ++i)
        for (int j = -2; j < L.nj + 2; ++j) {
          const bool owned = i >= 0 && i < L.ni && j >= 0 && j < L.nj;
          view(c, i, j) = owned ? value(k, c, own.lo[0] + i, own.lo[1] + j) : kUnset;
        }
    h.exchange(f.components());
    for (int c = 0; c < kComps; ++c)
      for (int i = -2; i < L.ni + 2; ++i)
        for (int j = -2; j < L.nj + 2; ++j) {
          run.field.push_back(view(c, i, j));
          const bool gi = i < 0 || i >= L.ni, gj = j < 0 || j >= L.nj;
          if (!gi && !gj) continue;
          int wi = own.lo[0] + i, wj = own.lo[1] + j;
          // A ghost is filled when its neighbour exists: always on a periodic grid, inside the
          // mesh on a free one; corner ghosts only with corners.
          bool filled = !(gi && gj && !corners);
          if (periodic) {
            wi = (wi % kNx + kNx) % kNx;
            wj = (wj % kNy + kNy) % kNy;
          } else if (wi < 0 || wi >= kNx || wj < 0 || wj >= kNy) {
            filled = false;
          }
          const double want = filled ? value(k, c, wi, wj) : kUnset;
          run.worst = std::max(run.worst, std::fabs(view(c, i, j) - want));
        }
  }
  return run;
}

}  // namespace

TEST(HaloStrategies, TheRegistryListsEveryStrategyOnce) {
  const auto names = test::halo_strategies();
  for (const char* n : {"isend", "persistent", "neighbor", "rma-fence", "rma-pscw", "rma-lock"})
    EXPECT_EQ(std::count(names.begin(), names.end(), std::string(n)), 1) << n;
  EXPECT_THROW(comm::halo::find_strategy("carrier-pigeon"), InputError);
  // NCCL replaces the MPI strategies: only the default is accepted there, and device-ipc (which
  // moves its bytes itself) where the build has CUDA.
  EXPECT_NO_THROW(comm::halo::find_strategy("isend", comm::TransportKind::Nccl));
  for (const char* n : {"persistent", "neighbor", "rma-fence", "rma-pscw", "rma-lock"})
    EXPECT_THROW(comm::halo::find_strategy(n, comm::TransportKind::Nccl), NotAvailable) << n;
  if (exec::cuda_built())
    EXPECT_TRUE(comm::halo::find_strategy("device-ipc", comm::TransportKind::Nccl).device_direct);
  else
    EXPECT_THROW(comm::halo::find_strategy("device-ipc", comm::TransportKind::Nccl), NotAvailable);
}

TEST(HaloStrategies, GhostsEqualTheClosedFormAndIsendBitForBit) {
  comm::Context ctx(MPI_COMM_WORLD);
  for (auto procs : test::process_grids())
    for (bool periodic : {true, false})
      for (bool corners : {true, false}) {
        mesh::SurfaceMesh m(ctx, geometry(periodic), procs);
        const Exchanged ref = exchange_with("isend", m, periodic, corners, nullptr);
        const std::string where = "grid " + std::to_string(procs[0]) + "x" + std::to_string(procs[1]) +
                                  (periodic ? " periodic" : " free") + (corners ? " with corners" : " faces only");
        EXPECT_TRUE(test::all_ranks(ref.worst == 0.0)) << "isend " << where << ": off by " << ref.worst;
        for (const std::string& s : test::halo_strategies()) {
          const Exchanged run = exchange_with(s, m, periodic, corners, nullptr);
          EXPECT_TRUE(test::all_ranks(run.worst == 0.0)) << s << " " << where << ": off by " << run.worst;
          const bool same = run.field.size() == ref.field.size() &&
                            std::memcmp(run.field.data(), ref.field.data(), ref.field.size() * sizeof(double)) == 0;
          EXPECT_TRUE(test::all_ranks(same)) << s << " " << where << ": not bitwise equal to isend";
        }
      }
}

// The four phases are recorded once per exchange under the caller's region name.
TEST(HaloStrategies, EveryPhaseIsTimedOncePerExchange) {
  comm::Context ctx(MPI_COMM_WORLD);
  mesh::SurfaceMesh m(ctx, geometry(true), test::process_grids().front());
  for (const std::string& s : test::halo_strategies()) {
    Timers timers;
    exchange_with(s, m, true, true, &timers);
    for (const char* phase : {"pack", "post", "wait", "unpack"}) {
      const auto it = timers.stats().find(std::string("halo.test.") + phase);
      ASSERT_NE(it, timers.stats().end()) << s << " " << phase;
      EXPECT_EQ(it->second.calls, kExchanges) << s << " " << phase;
    }
  }
}

// A strategy must not overwrite a receive buffer its owner has not read yet. Strategy level, on
// a ring of the world's ranks (two messages to each side; on 2 ranks both sides are one rank,
// which repeats): rank 0 dawdles after every finish() before reading its receive buffer, while
// the others hurry on to the next exchange with new data. The ghosts rank 0 reads must still be
// the ones of the exchange it finished.
TEST(HaloStrategies, NoExchangeOverwritesGhostsNotYetRead) {
  const int P = test::world_size(), me = test::world_rank();
  if (P == 1) GTEST_SKIP() << "a lone rank only copies to itself";
  constexpr long kCount = 1000;
  const int right = (me + 1) % P, left = (me + P - 1) % P;
  std::vector<double> send(2 * kCount), recv(2 * kCount);
  comm::halo::Setup setup{MPI_COMM_WORLD, {}, {}, send.data(), recv.data(), 2 * kCount, 2 * kCount, "ring"};
  // Tag: the sender's side (0 right, 1 left); the message from the left was sent rightwards.
  setup.sends = {{right, 0, 0, kCount}, {left, 1, kCount, kCount}};
  setup.recvs = {{left, 0, 0, kCount}, {right, 1, kCount, kCount}};
  auto sent = [](int k, int from, int side, long e) { return 1e6 * k + 1e3 * from + 10.0 * side + 1e-4 * e; };
  for (const std::string& name : test::halo_strategies()) {
    auto strategy = comm::halo::find_strategy(name).make(setup);
    bool ok = true;
    for (int k = 0; k < 4; ++k) {
      for (int side = 0; side < 2; ++side)
        for (long e = 0; e < kCount; ++e) send[side * kCount + e] = sent(k, me, side, e);
      strategy->start();
      strategy->finish();
      if (me == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      for (long e = 0; e < kCount; ++e)
        ok = ok && recv[e] == sent(k, left, 0, e) && recv[kCount + e] == sent(k, right, 1, e);
    }
    EXPECT_TRUE(test::all_ranks(ok)) << name << ": ghosts changed before they were read";
  }
}
