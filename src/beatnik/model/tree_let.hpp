#pragma once
// The tree solver's rules and its locally essential tree (LET; docs/tree.md), without MPI.
//
// A SourceTree is what the interaction lists walk: this rank's own tree, or the part of another
// rank's tree that this rank's targets need. The owner of a tree builds that part (pack_let)
// from the receiving rank's target boxes — the boxes of the receiver's own clusters at depth
// kLetBoxDepth (or shallower leaves), which cover all its targets — by the one-rank tree's walk
// with each such box T as the batch, for every image (the decisions of all the walks together): a cluster well separated from T (the MAC with θ)
// travels as its box and proxy sources; one that is not is opened, its proxies sent too (a batch
// inside T may be separated from it); a leaf that is not travels
// with its particles (position and strength); an image that straddles the image window's edge
// for T opens the cluster too — unless it is cut in one dimension only and well separated from
// T with rules.edge: then it travels whole (sources and proxies) for the receiver's edge terms
// (tree_edge.hpp). The receiver walks that part per target batch B (⊂ T): a cluster
// is taken through its proxies when it is well separated from B or from T (the owner's
// decision, recomputed from the same doubles), otherwise opened — never below what was sent.
// With --let-strategy rma the receiver runs the owner's walk itself over records it fetches
// (tree_pull.hpp) and reaches the same block.
#include <cmath>
#include <utility>
#include <vector>

#include "beatnik/exec/macros.hpp"
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
  // A LET part's clusters' particle counts in the owner's tree (C.count() is 0 where the
  // sources did not travel); empty for a rank's own tree.
  std::vector<long> owned;
  bool proxies_of(int c) const { return proxy_start[c] >= 0; }
  // Cluster c's particles in its owner's tree: what the dual traversal weighs (the larger of
  // two clusters is split).
  long particles(int c) const { return owned.empty() ? clusters[c].count() : owned[c]; }
};

// The walk's parameters: the images, θ, and the image range a batch can take per dimension.
// An edge term interpolates part of a cluster, cut by a line: the interpolation errors of its
// sources no longer cancel over the cluster as for a whole one (measured: 3–5× the error of the
// same tree without edge terms at ρ < θ), so its cluster is separated at θ / margin and its sets
// valid at margin·ρ. kEdgeMargin is TOL 1e-9's; the table takes less above (tree_parameters).
inline constexpr double kEdgeMargin = 1.5;
struct Rules {
  BRImages images;
  double theta = 0.0;
  int lo[2] = {0, 0}, hi[2] = {0, 0};
  bool edge = false;  // edge terms (tree_edge.hpp) for clusters cut by the window edge in one dimension
  bool dual = false;  // the receivers walk the dual traversal (tree_br_dual.cpp; box_rule below)
  double edge_margin = kEdgeMargin;  // edge terms: separated at θ / margin, sets valid at margin·ρ
};
Rules make_rules(const BRImages& images, double theta, bool edge = false, bool dual = false);

enum class Cover { None, Partial, Full };
// The nearest image of separation x as an integer (−1, 0, 1) along dimension d.
BEATNIK_HOST_DEVICE inline int nearest(double x, const BRImages& img, int d) {
  const double c = image_centre(x, img.period[d], img.centring_half(d));
  return c > 0.0 ? 1 : (c < 0.0 ? -1 : 0);
}
// The nearest images a₀ (−1, 0, 1) of the two extreme separations of boxes b and c per periodic
// dimension (0 on a free one): what cover tests, the same for every image.
struct ImageSpan {
  int lo[2] = {0, 0}, hi[2] = {0, 0};
};
BEATNIK_HOST_DEVICE inline ImageSpan span(const search::Cluster& b, const search::Cluster& c, const BRImages& img) {
  ImageSpan s;
  for (int d = 0; d < 2; ++d)
    if (img.period[d] > 0.0) {
      s.lo[d] = nearest(b.lo[d] - c.hi[d], img, d);
      s.hi[d] = nearest(b.hi[d] - c.lo[d], img, d);
    }
  return s;
}
// Which pairs of the boxes of span s take image (mx, my): every pair, some or none; `cut` (when
// given) gets the dimensions where only some do (bit d), for Partial. Per dimension: pair (t, s)
// takes image m when |m − a₀(t − s)| ≤ K, and a₀ is monotone in t − s, so the two extreme
// separations decide. Inline (as separated below): the interaction lists call it per visit.
BEATNIK_HOST_DEVICE inline Cover cover(const ImageSpan& s, int mx, int my, const BRImages& img, int* cut = nullptr) {
  const int m[2] = {mx, my};
  bool partial = false;
  if (cut) *cut = 0;
  for (int d = 0; d < 2; ++d) {
    if (img.period[d] <= 0.0) continue;  // a single image, m = 0
    if (s.hi[d] < m[d] - img.k || s.lo[d] > m[d] + img.k) return Cover::None;
    if (!(m[d] - img.k <= s.lo[d] && s.hi[d] <= m[d] + img.k)) {
      partial = true;
      if (cut) *cut |= 1 << d;
    }
  }
  return partial ? Cover::Partial : Cover::Full;
}
// Which pairs of batch b and cluster c take image (mx, my).
BEATNIK_HOST_DEVICE inline Cover cover(const search::Cluster& b, const search::Cluster& c, int mx, int my,
                                       const BRImages& img, int* cut = nullptr) {
  return cover(span(b, c, img), mx, my, img, cut);
}
// The one dimension of a Partial cover's `cut` (−1: both, a corner).
BEATNIK_HOST_DEVICE inline int edge_axis(int cut) { return cut == 1 ? 0 : (cut == 2 ? 1 : -1); }
// A cluster's box centre and radius (search::Cluster::centre, radius), computed once per cluster
// for the walks, which test them many times: the same doubles as recomputing them per test.
struct Ball {
  double c[3], r;
};
inline Ball ball(const search::Cluster& k) { return {{k.centre(0), k.centre(1), k.centre(2)}, k.radius()}; }
// |centre_b − centre_c − (mx, my)·L|.
BEATNIK_HOST_DEVICE inline double distance(const Ball& b, const Ball& c, int mx, int my, const BRImages& img) {
  const double ox = mx * img.period[0], oy = my * img.period[1];
  const double dx = b.c[0] - c.c[0] - ox, dy = b.c[1] - c.c[1] - oy, dz = b.c[2] - c.c[2];
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}
// Whether cluster c at image (mx, my) is well separated from box b: (r_b + r_c) < θ·|Δcentre|;
// for an edge term (`edge`) with θ / r.edge_margin.
BEATNIK_HOST_DEVICE inline bool separated(const Ball& b, const Ball& c, int mx, int my, const Rules& r,
                                          bool edge = false) {
  return b.r + c.r < (edge ? r.theta / r.edge_margin : r.theta) * distance(b, c, mx, my, r.images);
}
inline bool separated(const search::Cluster& b, const search::Cluster& c, int mx, int my, const Rules& r,
                      bool edge = false) {
  return separated(ball(b), ball(c), mx, my, r, edge);
}
// Whether a batch may take a cluster whole for being separated from its target box T (the
// owner's test, which then did not open it): only for a LET part's cluster (`remote`); with the
// dual traversal only where it has no children here (`unopened`), an opened one being walked as
// on one rank (docs/tree-log.md "The LET and the dual traversal").
BEATNIK_HOST_DEVICE inline bool box_rule(const Rules& r, bool remote, bool unopened) {
  return remote && (!r.dual || unopened);
}

// Doubles in a box record: lo[3], hi[3], particle count.
inline constexpr int kBoxWidth = 7;
search::Cluster box_from_record(const double* rec);

// A rank's target boxes: its own tree's clusters at depth kLetBoxDepth, or leaves above it, in
// depth-first order (at most kLetBoxes). Each rank allgathers kLetBoxes records (count 0: unused).
inline constexpr int kLetBoxDepth = 6;
inline constexpr int kLetBoxes = 1 << kLetBoxDepth;
// The kLetBoxes records of t's target boxes (kBoxWidth doubles each), unused ones zero. Returns
// which target box each cluster of `t` lies in (−1: above the boxes' depth).
std::vector<int> target_box_records(const SourceTree& t, double* out);
// The target boxes of kLetBoxes records (the used ones, in order).
std::vector<search::Cluster> target_boxes(const double* records);

// The owner's walk for a target box T, one visit at a time: its decisions are sets (opened
// clusters, clusters whose proxies travel, source ranges), so the order of the visits does not
// matter — plan_let walks depth first over the owner's own tree, a pull walks level by level
// over records fetched from the owner (tree_pull.hpp), and both reach the same block.
struct Visit {
  int cluster, mx, my;
  bool full;    // every pair of T takes image (mx, my): the cover need not be tested again
  int box = 0;  // the target box T of this walk
};
struct LetDecisions {
  std::vector<char> opened, proxy;                       // per cluster of the owner's tree
  std::vector<std::pair<long, long>> sources;            // [begin, end) needed (any order, may repeat)
  void reset(int clusters);
  // The owner's decision on visit v of its cluster C (has_proxies: C has a proxy set); appends
  // the visits of C's children it leads to.
  void decide(const Visit& v, const search::Cluster& C, bool has_proxies, const std::vector<search::Cluster>& targets,
              const Rules& r, std::vector<Visit>& next);
};
// The walks' first visits: the root at every image, for each of `boxes` target boxes.
std::vector<Visit> root_visits(const Rules& r, int boxes = 1);

// Where decisions put things in the block: the clusters sent (root first, then the children of
// every opened cluster), the sources sent (sorted disjoint ranges, tree order).
struct LetBlockPlan {
  std::vector<int> sent;                    // block node -> owner's cluster
  std::vector<std::pair<long, long>> runs;  // sources sent
  long particles = 0, proxy_doubles = 0;
  long size() const;                        // doubles in the block
};
// proxy_count: the owner's, per cluster; clusters: the owner's (only the visited ones are read).
LetBlockPlan plan_let_block(const LetDecisions& d, const std::vector<search::Cluster>& clusters,
                            const std::vector<int>& proxy_count);
// The block's header and node records (the first kHeader + kNodeWidth·sent doubles of `block`);
// the particles (6 sections of `plan.particles`, the runs in order) and then the proxies (the
// sent clusters' with d.proxy, in node order) follow, left to the caller.
void write_let_nodes(const LetBlockPlan& plan, const LetDecisions& d, const std::vector<search::Cluster>& clusters,
                     const std::vector<int>& proxy_count, double* block);

// What the targets in the boxes `targets` need of `tree` as one block, in two steps so that the
// caller can place every destination's block before any is written: plan_let walks the tree
// (size: the block's doubles, 0 when there is no target or no source), write_let writes the
// block to `out` (size doubles).
struct LetBlock {
  LetDecisions d;
  LetBlockPlan plan;
  long size = 0;
};
LetBlock plan_let(const SourceTree& tree, const std::vector<search::Cluster>& targets, const Rules& rules);
void write_let(const SourceTree& tree, const LetBlock& block, double* out);
// A copy of n doubles; the bulk of writing or reading blocks, cut into pieces of at most
// kLetPiece doubles so that a few large blocks spread over every thread (copy_pieces).
struct LetCopy {
  const double* src;
  double* dst;
  long n;
};
constexpr long kLetPiece = 1L << 16;
void add_copy(const double* src, double* dst, long n, std::vector<LetCopy>& copies);
void copy_pieces(const std::vector<LetCopy>& copies);  // in parallel
// write_let in two parts: the header and nodes written here, the particles' and proxies' copies
// appended to `copies` for the caller to make (with every other block's: copy_pieces).
void write_let_nodes(const SourceTree& tree, const LetBlock& block, double* out, std::vector<LetCopy>& copies);
// Both, the block appended to `out`; returns its size in doubles.
long pack_let(const SourceTree& tree, const std::vector<search::Cluster>& targets, const Rules& rules,
              std::vector<double>& out);
// One block back as a remote SourceTree.
SourceTree unpack_let(const double* block, long size);
// The same into `t`, whose arrays keep their capacity: a tree unpacked into every call is not
// allocated and first touched again. Without `arrays` the particles and proxies are only sized,
// for the caller to copy (let_arrays: in parallel over every block's parts at once).
void unpack_let(const double* block, long size, SourceTree& t, bool arrays = true);
// Where block `b`'s particles ([0]) and proxies ([1]) lie in it: offsets in doubles.
std::pair<long, long> let_arrays(const double* block);
// What of a block its receiver reads on the host when the particles and proxies stay on the
// device (unpack_let without arrays): the header, kLetHeader doubles, and the nodes after it;
// let_host_doubles(block) counts both from the header.
inline constexpr long kLetHeader = 3;
long let_host_doubles(const double* block);

}  // namespace beatnik::model::tree
