// README example 2 at full size in the beatnik profile against the reference's own output
// (MODEL.md §16 item 10, VALIDATION O16): -O high -n 64 -I sech2 -m 0.1 -p 9 -b free -a 0.15
// -M 2 -e 2. Centre-node height at steps 0, 50, 100 (the reference runs 101 steps; we compare
// at 50 and 100) and max|ϖ1| at step 100. Label "long": about 50 million pair interactions per
// step, 100 steps.
#include <gtest/gtest.h>

#include <cmath>

#include "beatnik/io/state_csv.hpp"
#include "beatnik/model/state.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

TEST(ReadmeExample2, CentreHeightMatchesTheReferenceAtSteps50And100) {
  app::Options o = test::readme_example2_options(64);
  app::Simulation sim(MPI_COMM_WORLD, test::config_for(o, MPI_COMM_WORLD));
  const int n = 64;
  const long centre = 5 * (long(n / 2) * n + n / 2) + model::kZ3;
  const double expect[3] = {0.0999979433, 0.1682163849, 0.4071024647};  // steps 0, 50, 100
  for (int k = 0; k < 3; ++k) {
    while (sim.steps_done() < 50 * k) sim.step();
    const auto s = io::gather_state(sim.mesh(), sim.state());
    if (test::world_rank() == 0) {
      // The reference values carry 10 digits.
      EXPECT_NEAR(s[centre], expect[k], 2e-10) << "step " << 50 * k;
      if (k == 2) {
        double w1 = 0;
        for (size_t i = model::kW1; i < s.size(); i += 5) w1 = std::max(w1, std::fabs(s[i]));
        EXPECT_NEAR(w1, 9.89154, 1e-5) << "max |w1| at step 100";
      }
    }
  }
}
