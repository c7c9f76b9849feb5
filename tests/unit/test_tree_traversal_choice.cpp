// --tree-traversal auto: dual on the host at any size; with -x cuda dual for a periodic surface
// from 2^18 nodes a rank and a free one from a million, where it was measured faster than single
// with single's own degrees (docs/tree-log.md "The single traversal's degrees"); single and dual as
// asked. No GPU needed: the rule is app::tree_dual_traversal, which make_run_config applies to
// the mesh it derives (checked on the host, where this build refuses -x cuda unless it has the
// CUDA backend).
#include <gtest/gtest.h>

#include <string>

#include "beatnik/app/problem.hpp"

using namespace beatnik;

namespace {

constexpr auto kHost = exec::Space::Host, kDevice = exec::Space::Device;

// n² nodes on `ranks` ranks.
bool dual(const std::string& traversal, exec::Space space, bool periodic, long n, long ranks = 1) {
  return app::tree_dual_traversal(traversal, space, periodic, n * n / ranks);
}

TEST(TreeTraversalChoice, AutoIsDualOnTheHostAtAnySize) {
  for (bool periodic : {true, false}) {
    EXPECT_TRUE(dual("auto", kHost, periodic, 16));
    EXPECT_TRUE(dual("auto", kHost, periodic, 4096, 4));
  }
}

TEST(TreeTraversalChoice, AutoOnTheDeviceIsDualFrom2To18NodesARankPeriodicAndAMillionFree) {
  EXPECT_FALSE(dual("auto", kDevice, true, 256));
  EXPECT_FALSE(dual("auto", kDevice, true, 511));
  EXPECT_TRUE(dual("auto", kDevice, true, 512));
  EXPECT_TRUE(dual("auto", kDevice, true, 1024));
  EXPECT_TRUE(dual("auto", kDevice, true, 1024, 4));   // 2^18 a rank
  EXPECT_FALSE(dual("auto", kDevice, true, 1024, 5));  // fewer
  EXPECT_TRUE(dual("auto", kDevice, true, 2048));
  EXPECT_FALSE(dual("auto", kDevice, false, 512));  // the paper's single-mode case
  EXPECT_FALSE(dual("auto", kDevice, false, 999));
  EXPECT_TRUE(dual("auto", kDevice, false, 1000));
  EXPECT_TRUE(dual("auto", kDevice, false, 1024));
  EXPECT_FALSE(dual("auto", kDevice, false, 1024, 2));  // 2^19 a rank
  EXPECT_TRUE(dual("auto", kDevice, false, 4096, 4));
}

TEST(TreeTraversalChoice, SingleAndDualAsAsked) {
  for (exec::Space s : {kHost, kDevice})
    for (bool periodic : {true, false}) {
      EXPECT_FALSE(dual("single", s, periodic, 2048));
      EXPECT_TRUE(dual("dual", s, periodic, 16));
    }
}

// make_run_config applies the rule to the surface after weak scaling, on each rank count.
bool config_dual(int n, int ranks, int w, const std::string& traversal, const std::string& boundary = "periodic",
                 const std::string& exec = "host") {
  app::Options o;
  o.exec = exec;
  o.order = "high";
  o.solver = "tree";
  o.nodes = n;
  o.weak_scale = w;
  o.boundary = boundary;
  o.tree_traversal = traversal;
  return app::make_run_config(o, ranks).model.br.tree_dual;
}

TEST(TreeTraversalChoice, RunConfigTakesTheRule) {
  for (int ranks : {1, 2, 3, 4}) {
    EXPECT_TRUE(config_dual(32, ranks, 1, "auto"));
    EXPECT_TRUE(config_dual(32, ranks, 1, "auto", "free"));
    EXPECT_FALSE(config_dual(32, ranks, 1, "single"));
    EXPECT_TRUE(config_dual(16, ranks, 4, "dual"));
  }
  EXPECT_THROW(config_dual(32, 1, 1, "triple"), InputError);
}

// With -x cuda, a rank's share of the surface after weak scaling decides (the CUDA build; a
// host-only build refuses -x cuda).
TEST(TreeTraversalChoice, RunConfigOnTheDeviceTakesARanksShare) {
  const auto on_device = [](int n, int ranks, int w, const std::string& boundary = "periodic") {
    return config_dual(n, ranks, w, "auto", boundary, "cuda");
  };
#if defined(BEATNIK_WITH_CUDA)
  EXPECT_TRUE(on_device(1024, 1, 1));
  EXPECT_TRUE(on_device(512, 1, 1));
  EXPECT_FALSE(on_device(256, 1, 1));
  EXPECT_TRUE(on_device(1024, 4, 1));   // 2^18 a rank
  EXPECT_TRUE(on_device(1024, 3, 1));   // an uneven split: 349 525 a rank
  EXPECT_FALSE(on_device(640, 2, 1));   // 204 800 a rank
  EXPECT_TRUE(on_device(1024, 2, 2));   // -w 2: 1448² over 2 ranks, 1 048 352 a rank
  EXPECT_TRUE(on_device(1024, 4, 4));   // -w 4: 2048² over 4
  EXPECT_TRUE(on_device(1024, 1, 1, "free"));
  EXPECT_FALSE(on_device(1024, 2, 1, "free"));  // 2^19 a rank
  EXPECT_TRUE(on_device(1024, 2, 2, "free"));
  EXPECT_FALSE(on_device(512, 1, 1, "free"));
#else
  EXPECT_THROW(on_device(1024, 1, 1), NotAvailable);
#endif
}

}  // namespace
