// Whole runs with every halo strategy of the registry: the state after a few steps must equal
// isend's bit for bit (the strategies move the same bytes into the same ghosts; only the MPI
// calls differ). Low order on every process grid the rank count allows (1xP and Px1 included),
// medium order (exact Birkhoff-Rott) on the default grid; periodic and free; uneven splits.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "support/test_support.hpp"

using namespace beatnik;

namespace {

constexpr long kSteps = 3;

struct Case {
  const char* order;
  const char* profile;   // free boundaries below high order need the beatnik profile
  const char* boundary;
  int nodes;             // not a multiple of the rank counts: uneven splits
  bool every_grid;
};

const Case kCases[] = {
    {"low", "consistent", "periodic", 19, true},
    {"low", "beatnik", "free", 18, true},
    {"medium", "consistent", "periodic", 13, false},
    {"medium", "beatnik", "free", 14, false},
};

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST(HaloRuns, EveryStrategyGivesIsendsStateBitForBit) {
  for (const Case& c : kCases) {
    std::vector<std::string> grids = {""};
    if (c.every_grid)
      for (auto g : test::process_grids()) grids.push_back(std::to_string(g[0]) + "x" + std::to_string(g[1]));
    for (const std::string& grid : grids) {
      app::Options o = test::small_options(c.nodes);
      o.order = c.order;
      o.profile = c.profile;
      o.boundary = c.boundary;
      o.initial_condition = "random";  // no symmetry that could hide a misplaced ghost
      o.magnitude = 0.02;
      o.seed = 5;
      o.ranks_grid = grid;
      o.halo_strategy = "isend";
      const std::vector<double> ref = test::run_and_gather(o, kSteps);
      for (const std::string& s : test::halo_strategies()) {
        o.halo_strategy = s;
        const std::vector<double> got = test::run_and_gather(o, kSteps);
        const bool same = test::world_rank() != 0 || (!ref.empty() && bitwise_equal(got, ref));
        EXPECT_TRUE(test::all_ranks(same)) << s << ": " << c.order << " " << c.profile << " " << c.boundary << " n=" << c.nodes
                                           << " grid " << (grid.empty() ? "default" : grid)
                                           << ": state differs from isend's (max rel diff "
                                           << (test::world_rank() == 0 ? test::max_rel_diff(got, ref, 5) : 0.0) << ")";
      }
    }
  }
}
