#include "beatnik/search/cluster_tree.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace beatnik::search {

double Cluster::radius() const {
  double r2 = 0.0;
  for (int d = 0; d < 3; ++d) r2 += 0.25 * (hi[d] - lo[d]) * (hi[d] - lo[d]);
  return std::sqrt(r2);
}

namespace {

// Clusters in the subtree of a cluster of c points: the tree's shape depends on the counts
// alone (cut at the middle position, a leaf at ≤ leaf points), so every cluster's index in the
// depth-first numbering is known before any point is looked at.
long subtree_size(long c, long leaf) { return c <= leaf ? 1 : 1 + subtree_size(c / 2, leaf) + subtree_size(c - c / 2, leaf); }

// Subtrees of at least this many points are split as tasks of their own.
constexpr long kTaskPoints = 16384;

// Cluster c (more than `leaf` points) cut at its middle position: its two children's indices in
// the depth-first numbering (the lower half at the next index) and ranges. Returns the middle.
long cut(std::vector<Cluster>& nodes, int c, long leaf) {
  const long b = nodes[c].begin, e = nodes[c].end, mid = b + (e - b) / 2;
  const int c0 = c + 1, c1 = c + 1 + static_cast<int>(subtree_size(mid - b, leaf));
  nodes[c].child[0] = c0;
  nodes[c].child[1] = c1;
  nodes[c0].begin = b;
  nodes[c0].end = mid;
  nodes[c1].begin = mid;
  nodes[c1].end = e;
  return mid;
}

}  // namespace

void ClusterTree::build(const double* x, const double* y, const double* z, long n, int leaf) {
  const long lf = std::max(leaf, 1);
  order_.resize(n);
  for (long k = 0; k < n; ++k) order_[k] = k;
  nodes_.assign(subtree_size(n, lf), Cluster{});
  nodes_[0].end = n;
  const double* xyz[3] = {x, y, z};
  // The subtrees are disjoint ranges of order_ and of nodes_: tasks for the large ones.
#pragma omp parallel if (n >= kTaskPoints)
#pragma omp single
  split(0, xyz, static_cast<int>(lf));
  find_leaves();
}

void ClusterTree::find_leaves() {
  leaves_.clear();
  for (int c = 0; c < static_cast<int>(nodes_.size()); ++c)
    if (nodes_[c].leaf()) leaves_.push_back(c);  // depth-first order: tree order
}

std::vector<Cluster> ClusterTree::shape(long n, int leaf) {
  const long lf = std::max(leaf, 1);
  std::vector<Cluster> nodes(subtree_size(n, lf), Cluster{});
  nodes[0].end = n;
  // Depth first: a cluster's children come after it, so its range is set before it is met.
  for (int c = 0; c < static_cast<int>(nodes.size()); ++c)
    if (nodes[c].count() > lf) cut(nodes, c, lf);
  return nodes;
}

void ClusterTree::assign(std::vector<Cluster> nodes, std::vector<long> order) {
  nodes_ = std::move(nodes);
  order_ = std::move(order);
  find_leaves();
}

// Box of `node`, then (above the leaf size) its two halves at the indices the depth-first
// numbering gives them.
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
  if (e - b <= leaf) return;
  int dim = 0;
  for (int d = 1; d < 3; ++d)
    if (hi[d] - lo[d] > hi[dim] - lo[dim]) dim = d;
  const long mid = cut(nodes_, node, leaf);
  const double* v = xyz[dim];
  // Ties broken by the original index: the order is a function of the points alone.
  const auto less = [v](long p, long q) { return v[p] < v[q] || (v[p] == v[q] && p < q); };
  std::nth_element(order_.begin() + b, order_.begin() + mid, order_.begin() + e, less);
  // A half that is a leaf in that order too (a leaf's order is the tree order's only freedom):
  // the order the device build gives (model/tree_build_device.hpp), so both give the same bits.
  if (mid - b <= leaf) std::sort(order_.begin() + b, order_.begin() + mid, less);
  if (e - mid <= leaf) std::sort(order_.begin() + mid, order_.begin() + e, less);
  const int c0 = nodes_[node].child[0], c1 = nodes_[node].child[1];
#pragma omp task default(shared) if (mid - b >= kTaskPoints)
  split(c0, xyz, leaf);
  split(c1, xyz, leaf);
#pragma omp taskwait
}

}  // namespace beatnik::search
