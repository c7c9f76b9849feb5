#pragma once
// A binary tree of clusters over a set of points (host): each cluster is a contiguous range of
// the points in tree order and its tight bounding box; a cluster with more than `leaf` points
// is cut in two at the median of its box's longest side. The treecode's source tree and its
// target batches (its leaves) are the same tree. Deterministic: the same points give the same
// tree on every run. Inside a leaf (other than the root) the points are in (coordinate, index)
// order along its parent's cut, the order model/tree_build_device.hpp gives on the device.
#include <vector>

namespace beatnik::search {

struct Cluster {
  long begin = 0, end = 0;  // points [begin, end) in tree order
  int child[2] = {-1, -1};  // -1: a leaf
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};  // tight bounding box
  bool leaf() const { return child[0] < 0; }
  long count() const { return end - begin; }
  double centre(int d) const { return 0.5 * (lo[d] + hi[d]); }
  // Half the box's diagonal: every point lies within this of the centre.
  double radius() const;
};

class ClusterTree {
 public:
  // Points x[k], y[k], z[k], k < n; leaf ≥ 1 points at most per leaf.
  void build(const double* x, const double* y, const double* z, long n, int leaf);
  const std::vector<Cluster>& clusters() const { return nodes_; }  // the root is clusters()[0]
  const std::vector<int>& leaves() const { return leaves_; }      // in tree order
  // Tree position -> original index.
  const std::vector<long>& order() const { return order_; }
  // The clusters of a tree over n points (leaf as build): begin, end and children, boxes zero.
  // The shape depends on the counts alone, so a build elsewhere (model/tree_build_device.hpp)
  // lays its clusters out by it.
  static std::vector<Cluster> shape(long n, int leaf);
  // A tree built elsewhere: its clusters (shape's, with their boxes) and order.
  void assign(std::vector<Cluster> nodes, std::vector<long> order);
  // The clusters' storage handed back (the tree left empty), so that a caller that assigns a
  // tree every call reuses it instead of paging in fresh memory.
  std::vector<Cluster> release_clusters() { return std::move(nodes_); }

 private:
  void split(int node, const double* const* xyz, int leaf);
  void find_leaves();
  std::vector<Cluster> nodes_;
  std::vector<int> leaves_;
  std::vector<long> order_;
};

}  // namespace beatnik::search
