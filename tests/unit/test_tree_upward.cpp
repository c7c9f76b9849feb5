// The tree solver's upward pass (model/tree_upward.hpp) against proxy strengths summed in the
// test with the Lagrange basis in product form, L_j(x) = Π_{i≠j} (x − s_i)/(s_j − s_i), on
// Chebyshev points of the second kind computed here: independent of the pass's barycentric
// formula, its depth grouping and its chunked sums. Sources on a wavy sheet, so clusters span
// several depths and chunks and the thin side gets a lower degree. Built twice: host
// (test_tree_upward) and, in the CUDA build, device (test_tree_upward_device, needs a GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>
#include <random>
#include <vector>

#include "beatnik/exec/space.hpp"
#include "beatnik/model/tree_interp.hpp"
#include "beatnik/model/tree_upward.hpp"
#include "beatnik/search/cluster_tree.hpp"
#include "support/test_support.hpp"
#include "unit/tree_product_basis.hpp"
#include "unit/tree_test_points.hpp"

using namespace beatnik;

namespace {

#if defined(TREE_UPWARD_ON_DEVICE)
const exec::Space kSpace = exec::Space::Device;
#else
const exec::Space kSpace = exec::Space::Host;
#endif

// Which clusters have grids (those with more points than proxies), their degrees (set by
// degrees_of(c, dg), which returns the grid's size) and where their proxies go.
struct Layout {
  std::vector<int> deg, count;
  std::vector<long> start;
  long total = 0;
};
template <class F>
Layout grid_layout(const std::vector<search::Cluster>& cl, F degrees_of) {
  const int nc = static_cast<int>(cl.size());
  Layout g{std::vector<int>(3 * size_t(nc)), std::vector<int>(nc, 0), std::vector<long>(nc, -1), 0};
  for (int c = 0; c < nc; ++c) {
    const int m = degrees_of(c, &g.deg[3 * size_t(c)]);
    if (cl[c].count() > m) g.start[c] = g.total, g.count[c] = m, g.total += 6L * m;
  }
  return g;
}

// The largest difference of got's proxies (points to 1e-14, checked here) from the product-form
// sums over each cluster's points, and the largest strength (err, scale).
std::pair<double, double> product_form_error(const std::vector<search::Cluster>& cl, const std::vector<long>& start,
                                             const std::vector<int>& count, const std::vector<int>& deg,
                                             const std::vector<double>& sorted, long n, const std::vector<double>& got) {
  const int nc = static_cast<int>(cl.size());
  double err = 0.0, scale = 0.0;
  for (int c = 0; c < nc; ++c) {
    if (start[c] < 0) continue;
    const int m = count[c], n1 = deg[3 * c + 1] + 1, n2 = deg[3 * c + 2] + 1;
    for (int idx = 0; idx < m; ++idx) {
      const int ab[3] = {idx / (n1 * n2), (idx / n2) % n1, idx % n2};
      const double* o = &got[start[c]];
      for (int d = 0; d < 3; ++d) {  // the proxy's point
        const double lo = cl[c].lo[d], hi = cl[c].hi[d];
        const int nd = deg[3 * c + d];
        const double want = test::cheb_node(lo, hi, nd, ab[d]);
        EXPECT_NEAR(o[d * m + idx], want, 1e-14 * (1 + std::abs(want)));
      }
      double want[3] = {0, 0, 0};
      for (long k = cl[c].begin; k < cl[c].end; ++k) {
        double f = 1.0;
        for (int d = 0; d < 3; ++d)
          f *= test::product_basis(sorted[d * n + k], deg[3 * c + d], cl[c].lo[d], cl[c].hi[d], ab[d]);
        for (int r = 0; r < 3; ++r) want[r] += f * sorted[(3 + r) * n + k];
      }
      for (int r = 0; r < 3; ++r) {
        err = std::max(err, std::abs(o[(3 + r) * m + idx] - want[r]));
        scale = std::max(scale, std::abs(want[r]));
      }
    }
  }
  return {err, scale};
}

}  // namespace

TEST(TreeUpward, EqualsProductFormSums) {
#if defined(TREE_UPWARD_ON_DEVICE)
  ASSERT_TRUE(exec::device_count() > 0) << "the CUDA build's device tests need a visible GPU";
  exec::set_device(0);
#endif
  const long n = 5000;
  const int p = 6;
  search::ClusterTree tree;
  const std::vector<double> sorted = test::in_tree_order(tree, test::wavy_sheet(n, 7), n, 40);
  const auto& cl = tree.clusters();
  const int nc = static_cast<int>(cl.size());
  // Degrees: p on x, p − 1 on y, 1 on z (thin); a grid where it has fewer proxies than sources.
  const auto [deg, count, start, total] = grid_layout(cl, [&](int, int* dg) {
    dg[0] = p, dg[1] = p - 1, dg[2] = 1;
    return (p + 1) * p * 2;
  });
  int grids = 0, chunked = 0;
  for (int c = 0; c < nc; ++c)
    if (start[c] >= 0) ++grids, chunked += cl[c].count() > 256;
  ASSERT_GT(grids, 10);
  ASSERT_GT(chunked, 2);
  std::vector<double> got(total, 0.0);
  model::TreeUpward up(kSpace);
  for (int rep = 0; rep < 2; ++rep)  // twice: the second run reuses the grown buffers
    up.run(sorted.data(), n, cl, start, count, deg, p, got.data(), total);
  const auto [err, scale] = product_form_error(cl, start, count, deg, sorted, n, got);
  EXPECT_GT(scale, 0.0);
  EXPECT_LT(err, 1e-12 * scale) << "max error " << err << " of max " << scale;
  // Queued without waiting (the solver walks the LET meanwhile), then finished: the same bits,
  // the download made by finish().
  std::vector<double> queued(total, 0.0);
  up.run(sorted.data(), n, cl, start, count, deg, p, queued.data(), total, true, false, false);
  if (kSpace != exec::Space::Host) EXPECT_TRUE(up.pending());
  up.finish();
  EXPECT_FALSE(up.pending());
  EXPECT_EQ(std::memcmp(queued.data(), got.data(), sizeof(double) * size_t(total)), 0) << "queued run differs";
}

// A run that does not wait (the solver's overlapped call on one rank, docs/tree-log.md "The call's
// phases overlapped") queues the same passes: its proxies, read from its device buffer after the
// run returns, are the waiting run's bits, and its passes' time comes from its events. On the
// host the flag is ignored (the passes run at once).
TEST(TreeUpward, RunWithoutWaitingGivesTheSameBits) {
#if defined(TREE_UPWARD_ON_DEVICE)
  ASSERT_TRUE(exec::device_count() > 0) << "the CUDA build's device tests need a visible GPU";
  exec::set_device(0);
#endif
  const long n = 20000;
  const int p = 8;
  search::ClusterTree tree;
  const std::vector<double> sorted = test::in_tree_order(tree, test::wavy_sheet(n, 3), n, 32);
  const auto& cl = tree.clusters();
  const auto [deg, count, start, total] = grid_layout(cl, [&](int, int* dg) {
    dg[0] = p, dg[1] = p, dg[2] = 2;
    return (p + 1) * (p + 1) * 3;
  });
  ASSERT_GT(total, 0);
  std::vector<double> want(total, 0.0), got(total, std::nan("")), none(total, std::nan(""));
  model::TreeUpward up(kSpace);
  up.run(sorted.data(), n, cl, start, count, deg, p, want.data(), total);
  exec::Buffer<double> dev(kSpace, 6 * size_t(n));
  exec::copy(dev.data(), kSpace, sorted.data(), exec::Space::Host, 6 * size_t(n));
  for (int rep = 0; rep < 2; ++rep) {
    // The sources already in the pass's space (as the device build's), not downloaded, not waited for.
    up.run(dev.data(), n, cl, start, count, deg, p, kSpace == exec::Space::Host ? got.data() : none.data(), total,
           false, true, false);
    if (kSpace != exec::Space::Host) {
      ASSERT_NE(up.device_proxies(), nullptr);
      EXPECT_EQ(up.device_sources(), dev.data());
      exec::copy(got.data(), exec::Space::Host, up.device_proxies(), kSpace, size_t(total));  // (behind the passes)
      up.finish();
      EXPECT_GT(up.kernel_s, 0.0);
      for (long i = 0; i < total; ++i) ASSERT_TRUE(std::isnan(none[i])) << "the host array was written";
    }
    for (long i = 0; i < total; ++i) ASSERT_EQ(got[i], want[i]) << "proxy value " << i << ", run " << rep;
  }
}

// With the solver's degrees (tree::grid_degrees: fewer on a cluster's thin sides), some children
// have a lower degree than their parent on some side, so the parent cannot take their proxies
// (the interpolation would not be exact) and takes their children's, or their points, instead;
// others have at least its degrees and give their proxies. Both kinds are counted here, and every
// cluster's proxies still equal the product-form sums over its points.
TEST(TreeUpward, DeeperProxiesOnlyWhereExact) {
#if defined(TREE_UPWARD_ON_DEVICE)
  ASSERT_TRUE(exec::device_count() > 0) << "the CUDA build's device tests need a visible GPU";
  exec::set_device(0);
#endif
  const long n = 12000;
  const int p = 8;
  const double theta = 0.4;
  search::ClusterTree tree;
  const std::vector<double> sorted = test::in_tree_order(tree, test::wavy_sheet(n, 11), n, 32);
  const auto& cl = tree.clusters();
  const int nc = static_cast<int>(cl.size());
  const auto [deg, count, start, total] =
      grid_layout(cl, [&](int c, int* dg) { return model::tree::grid_degrees(cl[c], p, theta, dg); });
  int exact = 0, lower = 0;  // children with grids whose parent has a grid: at least its degrees, or not
  for (int c = 0; c < nc; ++c)
    for (int k : cl[c].child)
      if (k >= 0 && start[c] >= 0 && start[k] >= 0) {
        bool ok = true;
        for (int d = 0; d < 3; ++d) ok = ok && deg[3 * k + d] >= deg[3 * c + d];
        (ok ? exact : lower) += 1;
      }
  EXPECT_GT(exact, 10);
  EXPECT_GT(lower, 10);
  std::vector<double> got(total, 0.0);
  model::TreeUpward up(kSpace);
  up.run(sorted.data(), n, cl, start, count, deg, p, got.data(), total);
  const auto [err, scale] = product_form_error(cl, start, count, deg, sorted, n, got);
  EXPECT_GT(scale, 0.0);
  EXPECT_LT(err, 1e-12 * scale) << "max error " << err << " of max " << scale;
  std::printf("children at least their parent's degrees: %d, lower on a side: %d; max error %.3g of %.3g\n", exact,
              lower, err, scale);
}
