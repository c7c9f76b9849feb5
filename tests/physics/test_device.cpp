// Device invariance (VALIDATION O11): the CUDA run agrees with the host run after every step,
// to 1e-12 relative per state component, in both profiles. Built only with the CUDA backend.
#include <gtest/gtest.h>

#include "physics/physics_support.hpp"

using namespace beatnik;

namespace {

double worst_step_difference(app::Options o, int steps) {
  o.exec = "host";
  app::Simulation host(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
  o.exec = "cuda";
  app::Simulation device(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
  double worst = 0;
  for (int s = 1; s <= steps; ++s) {
    host.step();
    device.step();
    const test::Snapshot h = test::snapshot(host), d = test::snapshot(device);
    if (!h.empty()) worst = std::max(worst, test::max_rel_diff(d.v, h.v, 5));
  }
  return worst;
}

}  // namespace

TEST(DeviceInvariance, CudaMatchesHostPerStep) {
  struct Case {
    std::string profile, boundary, initial;
    int nodes;
  };
  for (const Case& c : {Case{"consistent", "periodic", "cos", 32}, Case{"consistent", "periodic", "random", 30},
                        Case{"beatnik", "periodic", "cos", 32}, Case{"beatnik", "free", "sech2", 24}}) {
    app::Options o = test::small_options(c.nodes);
    o.profile = c.profile;
    o.boundary = c.boundary;
    o.initial_condition = c.initial;
    if (c.initial == "random") o.magnitude = 1e-3;
    const double worst = worst_step_difference(o, 10);
    if (test::world_rank() == 0)
      std::printf("device vs host, %s %s %s n=%d: worst per-step relative difference %.2e\n", c.profile.c_str(),
                  c.boundary.c_str(), c.initial.c_str(), c.nodes, worst);
    EXPECT_TRUE(test::all_ranks(worst <= 1e-12)) << c.profile << " " << c.boundary << " " << c.initial << ": " << worst;
  }
}
