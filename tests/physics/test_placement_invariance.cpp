// Placement invariance: the same run with every --placement (and nodes made by
// --ranks-per-node) reaches the state of the linear placement and of the serial run to 1e-12,
// at low order (FFT), medium order (exact Birkhoff-Rott ring) and high order with the cutoff
// solver (spatial migration). A rank that took the wrong cell, or a pattern numbering ranks
// in the wrong communicator, shows up as a misplaced block.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "beatnik/io/state_csv.hpp"
#include "physics/physics_support.hpp"

using namespace beatnik;

namespace {

// The gathered state on world rank 0 (gather_state leaves it on grid rank 0, which a
// placement may give to any rank); empty elsewhere.
std::vector<double> state_on_world_rank0(const app::Simulation& sim) {
  std::vector<double> v = io::gather_state(sim.mesh(), sim.state());
  const int holder = sim.mesh().grid().parent_rank_of_grid()[0];
  if (holder == 0) return v;
  const auto& g = sim.config().geometry;
  const int n = g.nodes[0] * g.nodes[1] * 5;
  if (test::world_rank() == holder) MPI_Send(v.data(), n, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
  if (test::world_rank() != 0) return {};
  v.resize(n);
  MPI_Recv(v.data(), n, MPI_DOUBLE, holder, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return v;
}

std::vector<double> run(app::Options o, const std::string& placement, int steps) {
  o.placement = placement;
  app::Simulation sim(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
  for (int s = 0; s < steps; ++s) sim.step();
  return state_on_world_rank0(sim);
}

// rank r -> cell P-1-r: every rank away from its linear cell (for P > 1).
std::string reversed_map_file() {
  const std::string path = "placement_reversed_" + std::to_string(test::world_size()) + ".txt";
  if (test::world_rank() == 0) {
    app::RunConfig c = test::config_for(test::small_options(22), MPI_COMM_WORLD);
    std::ofstream f(path);
    const int p = test::world_size(), py = c.procs[1];
    for (int r = 0; r < p; ++r) f << r << " " << (p - 1 - r) / py << " " << (p - 1 - r) % py << "\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

void check_every_placement(const char* what, app::Options o, int steps) {
  const std::string file = "file:" + reversed_map_file();
  std::vector<std::string> placements = {"cart", "node-blocks", "random", file};
  const std::vector<double> linear = run(o, "linear", steps);
  const std::vector<double> serial = test::serial_reference(o, steps);
  if (test::world_rank() == 0) {
    const double d = test::max_rel_diff(linear, serial, 5);
    std::printf("%s, linear on %d ranks vs serial: %.2e\n", what, test::world_size(), d);
    EXPECT_LE(d, 1e-12) << what;
  }
  for (int k : {0, 1, 2}) {
    o.ranks_per_node = k > 0 ? std::optional<int>(k) : std::nullopt;
    for (const auto& p : placements) {
      const std::vector<double> v = run(o, p, steps);
      double worst = 0;
      if (test::world_rank() == 0) {
        worst = std::max(test::max_rel_diff(v, linear, 5), test::max_rel_diff(v, serial, 5));
        std::printf("%s, --placement %s --ranks-per-node %d on %d ranks: %.2e\n", what, p.c_str(), k,
                    test::world_size(), worst);
      }
      EXPECT_TRUE(test::all_ranks(worst <= 1e-12)) << what << " --placement " << p << " K=" << k << ": " << worst;
    }
  }
  if (test::world_rank() == 0) std::remove(file.substr(5).c_str());
}

}  // namespace

// 22 nodes: uneven blocks on 3 and 4 ranks, so a rank on the wrong cell has the wrong shape.
TEST(PlacementInvariance, LowOrderRandomHeights) {
  app::Options o = test::small_options(22);
  o.initial_condition = "random";
  o.magnitude = 1e-3;
  check_every_placement("low order", o, 5);
}

TEST(PlacementInvariance, MediumOrderExactBR) {
  app::Options o = test::small_options(12);
  o.order = "medium";
  o.initial_condition = "random";
  o.magnitude = 1e-3;
  check_every_placement("medium order, exact BR", o, 2);
}

TEST(PlacementInvariance, HighOrderCutoffBR) {
  app::Options o = test::small_options(12);
  o.order = "high";
  o.solver = "cutoff";
  o.cutoff = 0.4;
  o.initial_condition = "random";
  o.magnitude = 1e-3;
  check_every_placement("high order, cutoff BR", o, 2);
}
