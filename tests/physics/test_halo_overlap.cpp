// --halo-overlap (docs/overlap.md): the interior of the stencil kernels and the Riesz transform
// run while the halo exchanges are in flight, the border strips after. Every node is computed
// by the same code in both orders, so the final state must be BITWISE equal to the run
// without overlap: low, medium and high order, periodic and free, uneven splits (22 nodes on
// 3 or 4 ranks), blocks too thin to have an interior, every process grid of the rank count.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "beatnik/io/state_csv.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {

constexpr long kSteps = 3;

// "" (MPI_Dims_create's choice) and every factorisation p x q of the world size.
std::vector<std::string> grids() {
  std::vector<std::string> g{""};
  for (const auto& pq : test::process_grids()) g.push_back(std::to_string(pq[0]) + "x" + std::to_string(pq[1]));
  return g;
}

// Runs with and without overlap; returns true on every rank if rank 0's gathered states
// are bitwise equal (and not empty). Also checks that the overlapped path did run: it times
// each exchange's start and finish apart, so the halo regions count twice the calls.
bool bitwise_equal(const app::Options& base, const std::string& what) {
  app::Options with = base;
  with.halo_overlap = true;
  app::Simulation plain(MPI_COMM_WORLD, test::config_for(base, MPI_COMM_WORLD));
  app::Simulation over(MPI_COMM_WORLD, test::config_for(with, MPI_COMM_WORLD));
  for (long s = 0; s < kSteps; ++s) {
    plain.step();
    over.step();
  }
  for (const char* region : {"halo.state", "halo.V"}) {
    const long a = plain.timers().stats().at(region).calls, b = over.timers().stats().at(region).calls;
    EXPECT_EQ(b, 2 * a) << what << ": " << region << " calls";
  }
  const auto a = io::gather_state(plain.mesh(), plain.state());
  const auto b = io::gather_state(over.mesh(), over.state());
  bool same = true;
  if (test::world_rank() == 0) {
    same = !a.empty() && a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
    std::printf("%s on %d ranks: %s (max rel diff %.3e)\n", what.c_str(), test::world_size(),
                same ? "bitwise equal" : "DIFFERENT", test::max_rel_diff(b, a, 5));
  }
  return test::all_ranks(same);
}

struct Case {
  const char* what;
  const char* profile;
  const char* order;
  const char* boundary;
  const char* initial;
  int nodes;
  const char* solver = "exact";
};

void check_all_grids(const Case& c, void (*adjust)(app::Options&) = nullptr) {
  for (const auto& grid : grids()) {
    app::Options o = test::small_options(c.nodes);
    o.profile = c.profile;
    o.order = c.order;
    o.boundary = c.boundary;
    o.initial_condition = c.initial;
    o.solver = c.solver;
    o.seed = 5;
    o.magnitude = std::string(c.initial) == "random" ? 1e-3 : 0.05;
    o.ranks_grid = grid;
    if (adjust) adjust(o);
    const std::string what = std::string(c.what) + ", grid " + (grid.empty() ? "auto" : grid);
    EXPECT_TRUE(bitwise_equal(o, what)) << what;
  }
}

}  // namespace

TEST(HaloOverlap, LowOrderPeriodic) {
  check_all_grids({"low consistent periodic random n=22", "consistent", "low", "periodic", "random", 22});
}

// The slab FFT's point-to-point reshape runs on the halo's communicator while the state halo
// is in flight: the messages must not cross.
TEST(HaloOverlap, LowOrderPeriodicSlabPointToPointFft) {
  check_all_grids({"low periodic, slab p2p FFT, n=22", "consistent", "low", "periodic", "random", 22},
                  [](app::Options& o) {
                    o.fft_intermediate = "slab";
                    o.fft_exchange = "p2p";
                  });
}

TEST(HaloOverlap, LowOrderFree) {
  check_all_grids({"low beatnik free cos n=20", "beatnik", "low", "free", "cos", 20});
}

TEST(HaloOverlap, MediumOrder) {
  check_all_grids({"medium consistent periodic random n=22", "consistent", "medium", "periodic", "random", 22});
  check_all_grids({"medium beatnik free cos n=22", "beatnik", "medium", "free", "cos", 22});
  check_all_grids({"medium cutoff periodic random n=22", "consistent", "medium", "periodic", "random", 22, "cutoff"});
}

TEST(HaloOverlap, HighOrder) {
  check_all_grids({"high consistent periodic random n=22", "consistent", "high", "periodic", "random", 22});
  check_all_grids({"high beatnik free sech2 n=22", "beatnik", "high", "free", "sech2", 22});
}

// 12 nodes over P ranks in one dimension: 3 nodes per block on 4 ranks, fewer than 2·2 + 1,
// so no interior (all border); 4 or 6 on 3 or 2 ranks.
TEST(HaloOverlap, ThinBlocks) {
  for (const char* order : {"low", "high"}) {
    app::Options o = test::small_options(12);
    o.order = order;
    o.initial_condition = "random";
    o.magnitude = 1e-3;
    o.ranks_grid = "1x" + std::to_string(test::world_size());
    EXPECT_TRUE(bitwise_equal(o, std::string(order) + " n=12 grid " + o.ranks_grid));
  }
}

// The comparison has teeth: a run whose initial amplitude differs by a relative 1e-12 is not
// bitwise equal.
TEST(HaloOverlap, ComparisonDetectsADifferentRun) {
  app::Options o = test::small_options(22);
  o.initial_condition = "random";
  o.magnitude = 1e-3;
  const auto a = test::run_and_gather(o, kSteps);
  o.magnitude *= 1.0 + 1e-12;
  o.halo_overlap = true;
  const auto b = test::run_and_gather(o, kSteps);
  bool differ = true;
  if (test::world_rank() == 0) differ = a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) != 0;
  EXPECT_TRUE(test::all_ranks(differ));
}
