#pragma once
// The image window's edge in the tree solver (docs/tree.md "The window's edge"). Pair (t, s)
// takes image m along a periodic dimension d when |m − a₀(t_d − s_d)| ≤ K (a₀: the nearest
// image, image_centre). For a cluster C that a batch's pairs take at image m in one dimension
// d for some targets only (the edge, (K + ½)·L from the target), a₀ is non-increasing in s_d,
// so the sources a target takes are an interval [lo, hi) of C's sources sorted by s_d. The
// table holds them sorted and the proxy strengths of every prefix of `block` sources; a target
// finds lo and hi by binary search with the kernel's own window predicate (the same sets as the
// direct window test, ties included) and adds the interval through the proxies, as
// prefix[hi] − prefix[lo] with the part beyond the nearest prefix row summed directly (added
// or taken off). Per target O(proxies + block + log |C|), whatever the size of C.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "beatnik/model/br_kernel.hpp"
#include "beatnik/search/cluster_tree.hpp"

namespace beatnik::model::tree {

struct EdgeTable {
  int axis = 0;    // the dimension whose window edge cuts the cluster (0: x, 1: y)
  int m = 0;       // proxies of the set
  long n = 0;      // sources
  long block = 1;  // a prefix row every `block` sources
  std::vector<double> src;     // the cluster's sources sorted by coordinate `axis`, [x|y|z|qx|qy|qz], n each
  std::vector<double> prefix;  // rows j = 0..⌊n/block⌋: [q̂x|q̂y|q̂z] (3m) of the first j·block sources
  const double* proxies = nullptr;  // the set's proxy positions [x|y|z] (m apart)
  size_t bytes() const { return (src.size() + prefix.size()) * sizeof(double); }
};

// Sources between prefix rows for a set of m proxies: about m/2 (clamped to 8 … 128), so per
// target at most block/2 direct pairs per cut beside the m proxy pairs, and 3m/block ≈ 6 doubles
// of prefix per source (a row per source would be 3m). m/4 until 2026-12-02: twice the tables'
// rows and memory for a quarter fewer pairs per edge term, 5 % slower at 1024² on one H200
// (docs/tree-log.md "The edge terms' margin"). The host and device tables use the same rule.
// BEATNIK_TREE_EDGE_BLOCK=k (a measurement knob): about m/k, clamped to 8 … 256/k.
long edge_block(int m);

// The table of cluster C (its sources [C.begin, C.end) of pts, SoA with `stride` entries each)
// along `axis` for the proxy set with grid degrees dg at positions `proxies` (m of them); a row
// every `block` sources (0: edge_block(m), the solver's choice; 1: every prefix, no direct pairs).
void build_edge_table(const search::Cluster& C, const double* pts, long stride, int axis, const int* dg,
                      const double* proxies, int m, EdgeTable& t, long block = 0);

// The nearest image a₀ ∈ {−1, 0, 1} of separation `sep` (period L, centring half h): the direct
// kernel's window predicate on the same doubles; the edge sums' cuts on host and device use it.
BEATNIK_HOST_DEVICE inline int nearest_image(double sep, double L, double h) {
  const double c = image_centre(sep, L, h);
  return c > 0.0 ? 1 : (c < 0.0 ? -1 : 0);
}

struct EdgeCounts {
  long proxy_pairs = 0, direct_pairs = 0;
};
// Adds to (ux, uy, uz)[t], t < nt, the velocity of the sources of t's interval at image (mx, my)
// (offsets mx·L0, my·L1; the other dimension's image is taken by every pair, as the caller's
// cover test found). by_r: the targets' indices in order of their coordinate t.axis (ties in
// any order; the caller sorts a batch once for all its terms with order_by_coordinate), or null
// to sort them here.
// The indices 0 … n−1 in order of r[i] (ties by index): edge_sum's by_r.
void order_by_coordinate(const double* r, long n, std::vector<long>& order);
void edge_sum(const EdgeTable& t, int mx, int my, const double* tx, const double* ty, const double* tz, long nt,
              const BRImages& img, double eps, double* ux, double* uy, double* uz, EdgeCounts& counts,
              const long* by_r = nullptr);

}  // namespace beatnik::model::tree
