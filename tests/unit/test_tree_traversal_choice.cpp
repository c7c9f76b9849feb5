// --tree-traversal auto: dual on the host at any size; with -x cuda dual only where the surface
// has at least 2^19 nodes (below that the dual's host lists cost more than its pairs save:
// docs/tree.md "The dual traversal as the device's default"), whatever the rank count, so that
// one problem takes one traversal; single and dual as asked. No GPU needed: the rule is
// app::tree_dual_traversal, which make_run_config applies to the mesh it derives (checked on
// the host, where -x cuda is refused by this build unless it has the CUDA backend).
#include <gtest/gtest.h>

#include <string>

#include "beatnik/app/problem.hpp"

using namespace beatnik;

namespace {

constexpr auto kHost = exec::Space::Host, kDevice = exec::Space::Device;

bool dual(const std::string& traversal, exec::Space space, long n) {
  return app::tree_dual_traversal(traversal, space, n * n);
}

TEST(TreeTraversalChoice, AutoIsDualOnTheHostAtAnySize) {
  EXPECT_TRUE(dual("auto", kHost, 16));
  EXPECT_TRUE(dual("auto", kHost, 4096));
}

TEST(TreeTraversalChoice, AutoOnTheDeviceIsDualFromHalfAMillionNodes) {
  EXPECT_FALSE(dual("auto", kDevice, 512));  // 2^18 nodes
  EXPECT_FALSE(dual("auto", kDevice, 724));  // 524 176 < 2^19
  EXPECT_TRUE(dual("auto", kDevice, 725));   // 525 625
  EXPECT_TRUE(dual("auto", kDevice, 1024));
  EXPECT_TRUE(dual("auto", kDevice, 2048));
}

TEST(TreeTraversalChoice, SingleAndDualAsAsked) {
  for (exec::Space s : {kHost, kDevice}) {
    EXPECT_FALSE(dual("single", s, 2048));
    EXPECT_TRUE(dual("dual", s, 16));
  }
}

// make_run_config applies the rule to the surface after weak scaling, whatever the rank count.
bool config_dual(int n, int ranks, int w, const std::string& traversal) {
  app::Options o;
  o.order = "high";
  o.solver = "tree";
  o.nodes = n;
  o.weak_scale = w;
  o.tree_traversal = traversal;
  return app::make_run_config(o, ranks).model.br.tree_dual;
}

TEST(TreeTraversalChoice, RunConfigTakesTheRule) {
  for (int ranks : {1, 2, 3, 4}) {
    EXPECT_TRUE(config_dual(32, ranks, 1, "auto"));
    EXPECT_FALSE(config_dual(32, ranks, 1, "single"));
    EXPECT_TRUE(config_dual(16, ranks, 4, "dual"));
  }
  EXPECT_THROW(config_dual(32, 1, 1, "triple"), InputError);
}

}  // namespace
