// Decomposition invariance (VALIDATION O11, MODEL §16 item 4): the same run on every process
// grid of the rank count (uneven splits included) agrees with the serial run after every step,
// to 1e-12 relative per state component.
#include <gtest/gtest.h>

#include <memory>

#include "beatnik/base/error.hpp"
#include "physics/physics_support.hpp"

using namespace beatnik;

namespace {

// "" (MPI_Dims_create's choice) and every factorisation p x q of the world size.
std::vector<std::string> grids() {
  std::vector<std::string> g{""};
  const int p = test::world_size();
  for (int a = 1; a <= p; ++a)
    if (p % a == 0) g.push_back(std::to_string(a) + "x" + std::to_string(p / a));
  return g;
}

// Steps the distributed and the serial run in lockstep and returns the worst per-step
// relative difference (world rank 0; 0 elsewhere).
double worst_step_difference(const app::Options& o, int steps) {
  app::Simulation dist(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
  std::unique_ptr<app::Simulation> serial;
  if (test::world_rank() == 0) {
    app::Options so = o;
    so.ranks_grid.clear();
    serial = std::make_unique<app::Simulation>(MPI_COMM_SELF, test::config_for(so, MPI_COMM_SELF));
  }
  double worst = 0;
  for (int s = 1; s <= steps; ++s) {
    dist.step();
    const test::Snapshot d = test::snapshot(dist);
    if (!serial) continue;
    serial->step();
    const test::Snapshot r = test::snapshot(*serial);
    worst = std::max(worst, test::max_rel_diff(d.v, r.v, 5));
  }
  return worst;
}

struct Case {
  const char* what;
  std::string profile, boundary, initial;
  int nodes;
  double magnitude;
};

void check_all_grids(const Case& c, int steps = 10) {
  for (const auto& grid : grids()) {
    app::Options o = test::small_options(c.nodes);
    o.profile = c.profile;
    o.boundary = c.boundary;
    o.initial_condition = c.initial;
    o.magnitude = c.magnitude;
    o.ranks_grid = grid;
    const double worst = worst_step_difference(o, steps);
    if (test::world_rank() == 0)
      std::printf("%s, grid %s on %d ranks: worst per-step relative difference %.2e\n", c.what,
                  grid.empty() ? "auto" : grid.c_str(), test::world_size(), worst);
    EXPECT_TRUE(test::all_ranks(worst <= 1e-12)) << c.what << " grid '" << grid << "': " << worst;
  }
}

}  // namespace

// Consistent profile, periodic: 22 nodes split unevenly over 3 (8, 7, 7) and 4 (6, 6, 5, 5).
TEST(DecompositionInvariance, ConsistentPeriodicCosine) {
  check_all_grids({"consistent periodic cos", "consistent", "periodic", "cos", 22, 0.05});
}

// Random heights have no symmetry, so a transposed or misplaced block cannot hide.
TEST(DecompositionInvariance, ConsistentPeriodicRandom) {
  check_all_grids({"consistent periodic random", "consistent", "periodic", "random", 22, 1e-3});
}

// Beatnik profile, periodic: n = 20 gives N = 19 nodes (odd, Δ = L/20 ≠ node spacing).
TEST(DecompositionInvariance, BeatnikPeriodicCosine) {
  check_all_grids({"beatnik periodic cos", "beatnik", "periodic", "cos", 20, 0.05});
}

// Beatnik profile, free boundaries at low order (the reference's periodic Riesz transform on
// free data, with a warning). Our free ghost fill is decomposition-independent (DECISIONS.md),
// unlike the reference's.
TEST(DecompositionInvariance, BeatnikFreeLowOrder) {
  app::Options o = test::small_options(20);
  o.profile = "beatnik";
  o.boundary = "free";
  const auto c = test::config_for(o, MPI_COMM_WORLD);
  EXPECT_FALSE(c.warnings.empty());
  check_all_grids({"beatnik free cos", "beatnik", "free", "cos", 20, 0.05});
  check_all_grids({"beatnik free sech2", "beatnik", "free", "sech2", 20, 0.05});
}

// The consistent profile refuses low order with free boundaries (DECISIONS.md).
TEST(DecompositionInvariance, ConsistentProfileRefusesFreeLowOrder) {
  app::Options o = test::small_options(20);
  o.boundary = "free";
  EXPECT_THROW(test::config_for(o, MPI_COMM_WORLD), InputError);
}
