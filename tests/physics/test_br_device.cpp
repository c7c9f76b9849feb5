// GPU against CPU for the exact Birkhoff–Rott solver and full medium/high-order runs: the
// device kernel (shared-memory tiles) and the host kernel (SIMD, rsqrt + Newton) must agree
// to 1e-12 relative per step. Built in the CUDA preset only; needs a visible GPU (the test
// reports itself skipped, with the reason, when there is none).
#include <gtest/gtest.h>

#include "beatnik/exec/space.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

TEST(BRDevice, DeviceRunsEqualHostRunsPerStep) {
  if (exec::device_count() == 0) GTEST_SKIP() << "no GPU visible: this test needs one";
  std::vector<app::Options> setups;
  // Odd n for the consistent periodic cases: with even N, node pairs sit exactly half a period
  // apart, where the centred image window of DECISIONS.md jumps; round-off differences between
  // the two kernels then pick different windows (a known property of that centring, see
  // docs/br.md), which is not what this test is about.
  for (const char* order : {"medium", "high"}) {
    app::Options o = test::small_options(25);
    o.order = order;
    setups.push_back(o);
  }
  app::Options k2 = test::small_options(25);  // 5x5 images: the kernel's generic image loop
  k2.order = "high";
  k2.br_images = 2;
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
    for (const char* strategy : {"overlap", "blocking"}) {
      o.br_strategy = strategy;
      for (long s = 1; s <= 3; ++s) {
        o.exec = "host";
        const auto host = test::run_and_gather(o, s);
        o.exec = "cuda";
        const auto dev = test::run_and_gather(o, s);
        const double d = test::world_rank() == 0 ? test::max_rel_diff(dev, host, 5) : 0.0;
        EXPECT_TRUE(test::all_ranks(d <= 1e-12))
            << o.order << "/" << o.boundary << "/" << o.profile << " " << strategy << " step " << s << ": " << d;
      }
    }
}
