#include "beatnik/search/cluster_tree.hpp"

#include <algorithm>
#include <cmath>

namespace beatnik::search {

double Cluster::radius() const {
  double r2 = 0.0;
  for (int d = 0; d < 3; ++d) r2 += 0.25 * (hi[d] - lo[d]) * (hi[d] - lo[d]);
  return std::sqrt(r2);
}

void ClusterTree::build(const double* x, const double* y, const double* z, long n, int leaf) {
  nodes_.clear();
  leaves_.clear();
  order_.resize(n);
  for (long k = 0; k < n; ++k) order_[k] = k;
  Cluster root;
  root.end = n;
  nodes_.push_back(root);
  const double* xyz[3] = {x, y, z};
  split(0, xyz, std::max(leaf, 1));
}

// Box of `node`, then (above the leaf size) its two halves, depth first: leaves come out in
// tree order.
void ClusterTree::split(int node, const double* const* xyz, int leaf) {
  const long b = nodes_[node].begin, e = nodes_[node].end;
  double lo[3], hi[3];
  for (int d = 0; d < 3; ++d) {
    lo[d] = HUGE_VAL;
    hi[d] = -HUGE_VAL;
  }
  for (long q = b; q < e; ++q)
    for (int d = 0; d < 3; ++d) {
      const double v = xyz[d][order_[q]];
      lo[d] = std::min(lo[d], v);
      hi[d] = std::max(hi[d], v);
    }
  for (int d = 0; d < 3; ++d) {
    nodes_[node].lo[d] = e > b ? lo[d] : 0.0;
    nodes_[node].hi[d] = e > b ? hi[d] : 0.0;
  }
  if (e - b <= leaf) {
    leaves_.push_back(node);
    return;
  }
  int dim = 0;
  for (int d = 1; d < 3; ++d)
    if (hi[d] - lo[d] > hi[dim] - lo[dim]) dim = d;
  const long mid = b + (e - b) / 2;
  const double* v = xyz[dim];
  // Ties broken by the original index: the order is a function of the points alone.
  std::nth_element(order_.begin() + b, order_.begin() + mid, order_.begin() + e,
                   [v](long p, long q) { return v[p] < v[q] || (v[p] == v[q] && p < q); });
  for (int c = 0; c < 2; ++c) {
    Cluster k;
    k.begin = c == 0 ? b : mid;
    k.end = c == 0 ? mid : e;
    nodes_[node].child[c] = static_cast<int>(nodes_.size());
    nodes_.push_back(k);
    split(nodes_[node].child[c], xyz, leaf);
  }
}

}  // namespace beatnik::search
