#pragma once
// Sources for the tree units (test_tree_upward, test_tree_low, test_tree_edge_tables): n points on
// a wavy sheet z = 0.05 sin 2x cos y over [−3, 3]², strengths uniform in [−1, 1], as
// [x|y|z|qx|qy|qz] (n each); and their copy in a cluster tree's order.
#include <cmath>
#include <random>
#include <vector>

#include "beatnik/search/cluster_tree.hpp"

namespace beatnik::test {

// snap > 0: x and y on a grid of 1/snap (many equal coordinates; y = −0 for odd k, +0 for even),
// the edge tables' ties.
inline std::vector<double> wavy_sheet(long n, unsigned seed, double snap = 0.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> pts(6 * n);
  for (long k = 0; k < n; ++k) {
    double x = 3 * u(rng), y = 3 * u(rng);
    if (snap > 0) {
      x = std::round(snap * x) / snap;
      y = std::round(snap * y) / snap;
      if (y == 0.0 && k % 2) y = -0.0;
    }
    pts[k] = x;
    pts[n + k] = y;
    pts[2 * n + k] = 0.05 * std::sin(2 * x) * std::cos(y);
    for (int c = 3; c < 6; ++c) pts[c * n + k] = u(rng);
  }
  return pts;
}

// pts (6 components, n each) in the order of `tree`, built over them with leaves of `leaf`.
inline std::vector<double> in_tree_order(search::ClusterTree& tree, const std::vector<double>& pts, long n, int leaf) {
  tree.build(pts.data(), pts.data() + n, pts.data() + 2 * n, n, leaf);
  const std::vector<long>& order = tree.order();
  std::vector<double> sorted(6 * n);
  for (long q = 0; q < n; ++q)
    for (int c = 0; c < 6; ++c) sorted[c * n + q] = pts[c * n + order[q]];
  return sorted;
}

}  // namespace beatnik::test
