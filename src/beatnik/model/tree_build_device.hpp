#pragma once
// The tree solver's source tree built where the particles are (-x cuda: on the device; docs/tree.md
// "On the GPU", 2026-11-27): the same clusters as search::ClusterTree::build — the shape from the
// counts alone (ClusterTree::shape), the same point set in every cluster (the lower half of a
// cluster by (coordinate, original index) along its box's widest side), hence the same boxes —
// and the particles left on the device in tree order for the upward pass and the sums' pools.
// Inside a leaf the order is canonical but not the host's nth_element order: the points sorted by
// (coordinate, index) along the parent's widest side (a leaf root: by index), so the velocities
// differ from the host build's at round-off only.
//
// Level by level, written once for host and device (exec::parallel_for; the host path is the
// unit test's reference for the logic): once per call, every point's rank along x, y and z by
// (coordinate, index) (three stable radix sorts of an order-preserving 64-bit key); then per
// depth (1) each cluster's box, min/max over chunks of its points with atomics on the same
// order-preserving keys (exact, order-independent), (2) each point of a cluster to be cut a key
// (its cluster's first position, its rank along the cluster's widest side), the other points
// their position, (3) one radix sort of those keys: every cut cluster's points in (coordinate,
// index) order in place, so its children's ranges hold the host's point sets.
#include <vector>

#include "beatnik/exec/memory.hpp"
#include "beatnik/search/cluster_tree.hpp"

namespace beatnik::model {

class TreeBuildDevice {
 public:
  explicit TreeBuildDevice(exec::Space space);
  // The tree over n points pts ([x|y|z|qx|qy|qz], n each, in this space) with leaves of at most
  // `leaf` points, assigned to `tree` (clusters with their boxes, order: tree position -> index;
  // without host_order the tree's order() is left empty and only order() below holds it: its
  // download, n ints, and the conversion were a third of the build's host time at 2^20 points).
  void run(const double* pts, long n, int leaf, search::ClusterTree& tree, bool host_order = true);
  // After run: the points in tree order ([x|y|z|qx|qy|qz], n each, in this space), and a copy of
  // them into host memory.
  const double* sources() const { return out_.data(); }
  // After run: tree position -> index into run's points (n ints, in this space; the device copy
  // of the tree's order(), valid until the next run).
  const int* order() const { return idx_.data(); }
  void download(double* host) const;
  // Whether the first n values of p (in this space) are all finite.
  bool finite(const double* p, long n);
  // Seconds of the last run: the passes (fenced), the copies (the shape's upload when n or leaf
  // changed, the boxes' and the order's download).
  double kernel_s = 0, copy_s = 0;

  struct Seg {  // a cluster of one depth, as the passes read it
    long begin, end;
    long chunk0;  // its first chunk among the depth's (box pass)
    int node;
    int cut;  // 1: more than leaf points (its points are sorted at this depth)
  };

 private:
  struct Level {
    int s0, s1;   // its clusters in segs_
    long chunks;  // box pass items
    bool cuts;    // any cluster cut
  };
  void layout(long n, int leaf);
  exec::Space space_;
  long n_ = -1;
  int leaf_ = -1;
  std::vector<search::Cluster> shape_;
  std::vector<Level> levels_;
  exec::Buffer<Seg> segs_;
  exec::Buffer<int> rank_, idx_, idx2_, perm_, perm2_, flag_;
  exec::Buffer<unsigned long long> keys_, keys2_, box_;
  exec::Buffer<double> out_, boxd_;
  exec::Buffer<char> temp_;
  std::vector<int> order_h_;
  std::vector<double> box_h_;
};

}  // namespace beatnik::model
