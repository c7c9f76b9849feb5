// The tree solver's upward pass (model/tree_upward.hpp) against proxy strengths summed in the
// test with the Lagrange basis in product form, L_j(x) = Π_{i≠j} (x − s_i)/(s_j − s_i), on
// Chebyshev points of the second kind computed here: independent of the pass's barycentric
// formula, its depth grouping and its chunked sums. Sources on a wavy sheet, so clusters span
// several depths and chunks and the thin side gets a lower degree. Built twice: host
// (test_tree_upward) and, in the CUDA build, device (test_tree_upward_device, needs a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "beatnik/exec/space.hpp"
#include "beatnik/model/tree_upward.hpp"
#include "beatnik/search/cluster_tree.hpp"
#include "support/test_support.hpp"
#include "unit/tree_test_points.hpp"

using namespace beatnik;

namespace {

#if defined(TREE_UPWARD_ON_DEVICE)
const exec::Space kSpace = exec::Space::Device;
#else
const exec::Space kSpace = exec::Space::Host;
#endif

double basis(double x, int n, double lo, double hi, int j) {
  if (n == 0) return 1.0;
  auto node = [&](int i) { return 0.5 * (lo + hi) + 0.5 * (hi - lo) * std::cos(M_PI * i / n); };
  double v = 1.0;
  for (int i = 0; i <= n; ++i)
    if (i != j) v *= (x - node(i)) / (node(j) - node(i));
  return v;
}

// The pass's proxies for degrees (dx, dy, dz) on every cluster with more sources than proxies,
// checked against the product-form sums; returns them for the bitwise comparison below.
std::vector<double> check_upward(const int dx, const int dy, const int dz) {
  const long n = 5000;
  const int p = std::max({dx, dy, dz});
  search::ClusterTree tree;
  const std::vector<double> sorted = test::in_tree_order(tree, test::wavy_sheet(n, 7), n, 40);
  const auto& cl = tree.clusters();
  const int nc = static_cast<int>(cl.size());
  std::vector<int> deg(3 * size_t(nc)), count(nc, 0);
  std::vector<long> start(nc, -1);
  long total = 0;
  int grids = 0, chunked = 0;
  const int m = (dx + 1) * (dy + 1) * (dz + 1);
  for (int c = 0; c < nc; ++c) {
    deg[3 * c] = dx, deg[3 * c + 1] = dy, deg[3 * c + 2] = dz;
    if (cl[c].count() > m) {
      start[c] = total, count[c] = m, total += 6L * m, ++grids;
      chunked += cl[c].count() > 256;
    }
  }
  EXPECT_GT(grids, 10);
  EXPECT_GT(chunked, 2);
  std::vector<double> got(total, 0.0);
  model::TreeUpward up(kSpace);
  for (int rep = 0; rep < 2; ++rep)  // twice: the second run reuses the grown buffers
    up.run(sorted.data(), n, cl, start, count, deg, p, got.data(), total);
  double err = 0.0, scale = 0.0;
  for (int c = 0; c < nc; ++c) {
    if (start[c] < 0) continue;
    const int n1 = deg[3 * c + 1] + 1, n2 = deg[3 * c + 2] + 1;
    for (int idx = 0; idx < m; ++idx) {
      const int ab[3] = {idx / (n1 * n2), (idx / n2) % n1, idx % n2};
      const double* o = &got[start[c]];
      for (int d = 0; d < 3; ++d) {  // the proxy's point
        const double lo = cl[c].lo[d], hi = cl[c].hi[d];
        const int nd = deg[3 * c + d];
        const double want = nd == 0 ? 0.5 * (lo + hi) : 0.5 * (lo + hi) + 0.5 * (hi - lo) * std::cos(M_PI * ab[d] / nd);
        EXPECT_NEAR(o[d * m + idx], want, 1e-14 * (1 + std::abs(want)));
      }
      double want[3] = {0, 0, 0};
      for (long k = cl[c].begin; k < cl[c].end; ++k) {
        double f = 1.0;
        for (int d = 0; d < 3; ++d) f *= basis(sorted[d * n + k], deg[3 * c + d], cl[c].lo[d], cl[c].hi[d], ab[d]);
        for (int r = 0; r < 3; ++r) want[r] += f * sorted[(3 + r) * n + k];
      }
      for (int r = 0; r < 3; ++r) {
        err = std::max(err, std::abs(o[(3 + r) * m + idx] - want[r]));
        scale = std::max(scale, std::abs(want[r]));
      }
    }
  }
  EXPECT_GT(scale, 0.0);
  EXPECT_LT(err, 1e-12 * scale) << "max error " << err << " of max " << scale;
  return got;
}

void set_device() {
#if defined(TREE_UPWARD_ON_DEVICE)
  ASSERT_TRUE(exec::device_count() > 0) << "the CUDA build's device tests need a visible GPU";
  exec::set_device(0);
#endif
}

}  // namespace

// Degrees p, p − 1 on x and y, 1 on z (a thin side); and a long z side of 15 points, more than
// one of pass 2's rows (two row blocks per (a, b)).
TEST(TreeUpward, EqualsProductFormSums) {
  set_device();
  check_upward(6, 5, 1);
  check_upward(2, 1, 14);
}

// Pass 2 by rows of proxies (the default) and by single proxies (BEATNIK_TREE_UPWARD=proxy): the
// same sums in the same order, so the same bits.
TEST(TreeUpward, RowAndProxyItemsGiveTheSameBits) {
  set_device();
  for (const auto& d : std::vector<std::array<int, 3>>{{6, 5, 1}, {2, 1, 14}}) {
    unsetenv("BEATNIK_TREE_UPWARD");
    const std::vector<double> rows = check_upward(d[0], d[1], d[2]);
    setenv("BEATNIK_TREE_UPWARD", "proxy", 1);
    const std::vector<double> proxies = check_upward(d[0], d[1], d[2]);
    unsetenv("BEATNIK_TREE_UPWARD");
    ASSERT_EQ(rows.size(), proxies.size());
    long differ = 0;
    for (size_t i = 0; i < rows.size(); ++i) differ += rows[i] != proxies[i];
    EXPECT_EQ(differ, 0) << "degrees " << d[0] << " " << d[1] << " " << d[2];
  }
}
