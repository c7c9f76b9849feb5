// The tree solver's level-by-level build (model/tree_build_device.hpp) against the host's
// search::ClusterTree::build: the same clusters (begin, end, children), the same boxes, the same
// point set in every cluster and the same order (the host sorts its leaves as the device build
// does), the particles in its tree order; on random points, on snapped ones
// (ties in x and y, −0 beside +0), on a grid in surface order (every coordinate tied many times,
// z all equal), n not a power of two, a root that is a leaf, one point and none. Built twice:
// host (test_tree_build) and, in the CUDA build, device (test_tree_build_device, needs a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/space.hpp"
#include "beatnik/model/tree_build_device.hpp"
#include "beatnik/search/cluster_tree.hpp"
#include "support/test_support.hpp"
#include "unit/tree_test_points.hpp"

using namespace beatnik;

namespace {

#if defined(TREE_BUILD_ON_DEVICE)
const exec::Space kSpace = exec::Space::Device;
#else
const exec::Space kSpace = exec::Space::Host;
#endif

// ni × nj surface nodes in surface order (k = i·nj + j) on a grid of spacing 0.1, z = 0.
std::vector<double> grid_sheet(int ni, int nj) {
  const long n = long(ni) * nj;
  std::vector<double> pts(6 * n, 0.0);
  for (int i = 0; i < ni; ++i)
    for (int j = 0; j < nj; ++j) {
      const long k = long(i) * nj + j;
      pts[k] = 0.1 * i - 1.0;
      pts[n + k] = 0.1 * j - 1.0;
      for (int c = 3; c < 6; ++c) pts[c * n + k] = std::sin(0.37 * k + c);
    }
  return pts;
}

void check(const std::vector<double>& pts, long n, int leaf) {
  SCOPED_TRACE("n " + std::to_string(n) + " leaf " + std::to_string(leaf));
  search::ClusterTree host;
  host.build(pts.data(), pts.data() + n, pts.data() + 2 * n, n, leaf);
  exec::Buffer<double> in(kSpace, std::max<size_t>(6 * n, 1));
  if (n > 0) exec::copy(in.data(), kSpace, pts.data(), exec::Space::Host, 6 * n);
  model::TreeBuildDevice dev(kSpace);
  search::ClusterTree got;
  dev.run(in.data(), n, leaf, got);
  const auto &a = host.clusters(), &b = got.clusters();
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(host.leaves(), got.leaves());
  ASSERT_EQ(static_cast<long>(got.order().size()), n);
  // The host's leaves are in the device build's order too (cluster_tree.hpp): the same order.
  EXPECT_EQ(host.order(), got.order());
  for (size_t c = 0; c < a.size(); ++c) {
    SCOPED_TRACE("cluster " + std::to_string(c));
    ASSERT_EQ(a[c].begin, b[c].begin);
    ASSERT_EQ(a[c].end, b[c].end);
    ASSERT_EQ(a[c].child[0], b[c].child[0]);
    ASSERT_EQ(a[c].child[1], b[c].child[1]);
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(a[c].lo[d], b[c].lo[d]);
      EXPECT_EQ(a[c].hi[d], b[c].hi[d]);
    }
    std::vector<long> sa(host.order().begin() + a[c].begin, host.order().begin() + a[c].end);
    std::vector<long> sb(got.order().begin() + b[c].begin, got.order().begin() + b[c].end);
    std::sort(sa.begin(), sa.end());
    std::sort(sb.begin(), sb.end());
    ASSERT_EQ(sa, sb) << "the cluster's point set";
  }
  // The particles in the build's tree order.
  std::vector<double> sorted(6 * n);
  dev.download(sorted.data());
  for (long q = 0; q < n; ++q)
    for (int c = 0; c < 6; ++c) ASSERT_EQ(sorted[c * n + q], pts[c * n + got.order()[q]]);
  // The same tree again: the same order, bit for bit.
  search::ClusterTree again;
  dev.run(in.data(), n, leaf, again);
  EXPECT_EQ(again.order(), got.order());
}

}  // namespace

TEST(TreeBuild, RandomPointsGiveTheHostClusters) {
#if defined(TREE_BUILD_ON_DEVICE)
  ASSERT_TRUE(exec::device_count() > 0) << "the CUDA build's device tests need a visible GPU";
  exec::set_device(0);
#endif
  for (long n : {5000L, 4096L, 777L}) check(test::wavy_sheet(n, 11), n, 40);
  check(test::wavy_sheet(3001, 5), 3001, 1);
  check(test::wavy_sheet(30, 5), 30, 64);  // the root is a leaf
  check(test::wavy_sheet(1, 5), 1, 64);
  check(test::wavy_sheet(0, 5), 0, 64);
}

TEST(TreeBuild, TiesGiveTheHostClusters) {
#if defined(TREE_BUILD_ON_DEVICE)
  ASSERT_TRUE(exec::device_count() > 0) << "the CUDA build's device tests need a visible GPU";
  exec::set_device(0);
#endif
  check(test::wavy_sheet(6007, 3, 4.0), 6007, 40);  // x, y on a grid of 1/4, −0 beside +0
  check(test::wavy_sheet(2000, 9, 1.0), 2000, 7);
  check(grid_sheet(64, 48), 64 * 48, 64);
  check(grid_sheet(37, 53), 37 * 53, 40);
  check(grid_sheet(1, 300), 300, 16);
}
