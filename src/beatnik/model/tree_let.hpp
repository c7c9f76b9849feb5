#pragma once
// The tree solver's rules and its locally essential tree (LET; docs/tree.md), without MPI.
//
// A SourceTree is what the interaction lists walk: this rank's own tree, or the part of another
// rank's tree that this rank's targets need. The owner of a tree builds that part (pack_let)
// from the receiving rank's box T — the tight box of all its targets — by the one-rank tree's
// walk with T as the batch, for every image: a cluster well separated from T (the MAC with θ)
// travels as its box and proxy sources; one that is not is opened, its proxies sent too (a batch
// inside T may be separated from it); a leaf that is not travels
// with its particles (position and strength); an image that straddles the image window's edge
// for T opens the cluster too. The receiver walks that part per target batch B (⊂ T): a cluster
// is taken through its proxies when it is well separated from B or from T (the owner's
// decision, recomputed from the same doubles), otherwise opened — never below what was sent.
#include <vector>

#include "beatnik/model/br_kernel.hpp"
#include "beatnik/search/cluster_tree.hpp"

namespace beatnik::model::tree {

struct SourceTree {
  std::vector<search::Cluster> clusters;  // root first; child −1: a leaf, or (remote) not opened
  std::vector<char> full;                 // every source of the cluster present, at [begin, end)
  std::vector<long> proxy_start;          // offset into proxies (−1: none)
  std::vector<int> proxy_count;           // m proxy sources: 6·m doubles [x|y|z|qx|qy|qz]
  std::vector<double> proxies;
  std::vector<double> pts;  // sources [x|y|z|qx|qy|qz], n each
  long n = 0;
  bool remote = false;
  bool proxies_of(int c) const { return proxy_start[c] >= 0; }
};

// The walk's parameters: the images, θ, and the image range a batch can take per dimension.
struct Rules {
  BRImages images;
  double theta = 0.0;
  int lo[2] = {0, 0}, hi[2] = {0, 0};
};
Rules make_rules(const BRImages& images, double theta);

enum class Cover { None, Partial, Full };
// Which pairs of batch b and cluster c take image (mx, my): every pair, some or none.
Cover cover(const search::Cluster& b, const search::Cluster& c, int mx, int my, const BRImages& img);
// Whether cluster c at image (mx, my) is well separated from box b: (r_b + r_c) < θ·|Δcentre|.
bool separated(const search::Cluster& b, const search::Cluster& c, int mx, int my, const Rules& r);
// The nearest image of separation x as an integer (−1, 0, 1) along dimension d.
int nearest(double x, const BRImages& img, int d);

// Doubles in a box record: lo[3], hi[3], particle count.
inline constexpr int kBoxWidth = 7;
// The box record of a tree (its root; count 0: no particles).
void box_record(const SourceTree& t, double* out);
search::Cluster box_from_record(const double* rec);

// What the targets in box `target` need of `tree`, appended to `out` as one block. Returns the
// block's size in doubles.
long pack_let(const SourceTree& tree, const search::Cluster& target, const Rules& rules, std::vector<double>& out);
// One block back as a remote SourceTree.
SourceTree unpack_let(const double* block, long size);

}  // namespace beatnik::model::tree
