#pragma once
// The lower-degree proxy sets' strengths written once for host and device
// (exec::parallel_for; docs/tree.md "On the GPU"): -x cuda computes them on the device straight
// into the sums' far pool, from the sources and degree-p proxies already there; the host solver
// keeps low_strengths (tree_low.hpp), which this equals to round-off
// (tests/unit/test_tree_low.cpp, on the host and on the device).
//
// Set k of a cluster may be made from set k − 1 (tree::low_from), so the sets go by their
// position in their cluster's chain, one pass per position over the sets of every cluster of
// every tree, an item per output proxy: its point and its three strengths, either the
// coarsening Σ M_a(a')·M_b(b')·M_e(e')·q̂(a'b'e') from a Chebyshev grid (M: the set's 1-D
// Lagrange basis at the grid's points), contracted one dimension at a time (e', then b', then a':
// (P+1)³(D+1) + … products a set instead of (P+1)³(D+1)³; the host's low_strengths sums the
// triple product, so the two agree to round-off, not bitwise) or Σ_k L_a(x_k)L_b(y_k)L_e(z_k)·q_k
// over point sources
// (the cluster's sources, or its proxies when their grid does not fit), in source order.
// The basis values come from tables made first in the same pass, a row per (set, dimension,
// grid point or source) holding every L_j there: each value is computed once per set instead
// of once per output proxy, with tree::lagrange's formula and order, so the sums are the same bits.
#include <memory>
#include <vector>

#include "beatnik/base/timers.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/model/tree_let.hpp"
#include "beatnik/model/tree_low.hpp"

namespace beatnik::model {

class TreeLowPass {
 public:
  explicit TreeLowPass(exec::Space space);
  struct Tree {  // one tree as the pass reads it
    const tree::SourceTree* t;
    const tree::LowSets* l;  // its layout (tree::low_layout)
    long near;  // offset of its sources (t->pts) in the near pool
    long far;   // offset of its degree-p proxies (t->proxies) in the far pool
    long low;   // offset of its sets (l->pts) in the far pool
  };
  // Pools in the pass's space: near holds every tree's sources, far its proxies (read) and its
  // sets (written: points and strengths). p, theta: the degree-p grids' parameters.
  // wait = false (device): returns once the descriptors' upload (page-locked, asynchronous) and
  // the passes are queued on the work stream, without waiting for them: the sums, queued after
  // them (TreeSumsDevice::begin's event), follow them anyway, and the host goes on to the lists
  // meanwhile. finish() then reads the passes' time from two CUDA events.
  void run(const std::vector<Tree>& trees, int p, double theta, const double* near, double* far, bool wait = true);
  // Waits for a run queued with wait = false (nothing otherwise); kernel_s: its passes' device
  // seconds, between events (as TreeUpward::finish).
  void finish();
  bool pending() const { return pending_; }
  // Seconds of the last run: the descriptors made on the host, their upload (fenced when
  // waiting), the passes (wall time, fenced; a run that did not wait: 0 until finish()).
  double setup_s = 0, upload_s = 0, kernel_s = 0;
  long sets = 0;  // sets made in the last run

  struct Set {  // one set as its pass reads it
    double lo[3], hi[3];  // the cluster's box
    long out;             // far-pool offset of the set ([x|y|z|qx|qy|qz], m apart)
    long src;             // pool offset of the first source, `stride` apart per component
    long stride;
    long item;            // its first item among its pass's (one per output proxy)
    long item_a;          // its first basis row among its pass's (tables: one per row)
    // A grid source is coarsened one dimension at a time (separable): its first item among its
    // pass's in the first step (q̂ contracted over e: (P0+1)(P1+1)(D2+1) items) and in the
    // second (then over b: (P0+1)(D1+1)(D2+1)); 0 items for point sources. Each step's values
    // (three strengths, the set's items apart) at 3·item1 / 3·item2 of its scratch.
    long item1, item2;
    long tab;             // its basis tables' offset in the pass's table
    int n;                // point sources, or the source grid's proxies
    int m;                // proxies of the set
    signed char D[3], P[3];  // the set's degrees; the source grid's (grid only)
    unsigned char grid;   // the source is a Chebyshev grid of degrees P on the same box
    unsigned char in_near;  // the source is in the near pool
  };

 private:
  exec::Space space_;
  // The sets as the host lays them out, kept across calls (10^5–10^6 of them with the LET parts:
  // a fresh vector was paged in every call) and, for the device, page-locked for the upload.
  comm::PinnedBuffer host_;
  exec::Buffer<Set> sets_;
  exec::Buffer<double> cos_;  // cos(π j / n), n, j ≤ kTreeMaxDegree: the host's Chebyshev points
  exec::Buffer<double> table_;  // one position's basis tables (grown, never shrunk)
  exec::Buffer<double> step1_, step2_;  // one position's separable steps' values (grown, never shrunk)
  std::unique_ptr<DeviceClock> clock_;  // the passes' events (a run that does not wait)
  int ev0_ = 0, ev1_ = 0;
  bool pending_ = false;
};

}  // namespace beatnik::model
