#pragma once
// The local sum of the cutoff Birkhoff–Rott solver (MODEL.md §9.2 steps 5–6): every owned
// particle (target) against the particles, owned and ghost, within the cutoff of it, found
// through a cell list. Host (OpenMP + SIMD) and device (CUDA, FP64) versions of the same sum.
//
// Cost per candidate pair (a source in the 27 cells around a target): the distance test is
// 8 flops (3 sub, 3 mul, 2 add) in double; the float32 test adds 6 conversions and 8 float
// flops plus a float sqrt. A pair within the cutoff then costs the 27 flops of br_pair (sqrt
// and division counted as one each; the device uses one FP64 rsqrt instead). The host computes
// every candidate and masks the rejected ones (a branch-free SIMD loop), so its cost is per
// candidate; with cells of the cutoff size a flat surface has about 9/π ≈ 2.9 candidates per
// pair within the cutoff.
#include "beatnik/model/br_kernel.hpp"
#include "beatnik/search/cell_list.hpp"

namespace beatnik::model {

struct BRCutoffArgs {
  // SoA [x|y|z|qx|qy|qz], ns entries each, in CELL ORDER (sorted position p); q as br_kernel.hpp.
  const double* sources = nullptr;
  long ns = 0;
  const long* order = nullptr;  // sorted position -> original index (CellList::order)
  long nt = 0;  // original indices < nt are targets (owned particles); the rest are ghosts (sources only)
  search::CellGrid grid;
  const long* cell_start = nullptr;  // CellList::cell_start (grid.count() + 1 entries)
  double cutoff = 0;
  // Distance test, inclusive either way. false: rx² + ry² + rz² <= cutoff² in double. true (the
  // reference's, `beatnik` profile): each coordinate rounded to float, the differences, squares
  // and sums in float in that order without fused multiply-adds, sqrtf(...) <= (float)cutoff.
  bool float32_test = false;
  double eps = 0;
  double* acc = nullptr;  // [ux|uy|uz], nt entries each, indexed by ORIGINAL index, overwritten
  // Optional single counter in the same space: += the (target, source) pairs within the cutoff
  // (the self pair included).
  unsigned long long* pairs = nullptr;
};

// Sources of a target are visited cell column by cell column ((x, y) neighbours in index
// order, z-cells contiguous), each in sorted order, so the sum of a target has a fixed order
// and the host and device differ only by round-off. The self pair adds exactly 0 (also with
// eps = 0: a pair at distance 0 is skipped).
void br_cutoff_host(const BRCutoffArgs& a);
// Queued on the device (asynchronous); throws NotAvailable without the CUDA build.
void br_cutoff_device(const BRCutoffArgs& a);

namespace detail {
// The up to 9 ranges of sorted positions (cell columns) around cell (cx, cy, cz), adjacent
// ranges merged; returns how many.
BEATNIK_HOST_DEVICE inline int br_cutoff_ranges(const search::CellGrid& g, const long* cell_start, int cx, int cy,
                                                int cz, long* begin, long* end) {
  const int z0 = cz > 0 ? cz - 1 : 0, z1 = cz + 1 < g.n[2] ? cz + 1 : g.n[2] - 1;
  int m = 0;
  for (int x = cx - 1; x <= cx + 1; ++x) {
    if (x < 0 || x >= g.n[0]) continue;
    for (int y = cy - 1; y <= cy + 1; ++y) {
      if (y < 0 || y >= g.n[1]) continue;
      const long b = cell_start[g.index(x, y, z0)], e = cell_start[g.index(x, y, z1) + 1];
      if (b == e) continue;
      if (m > 0 && end[m - 1] == b) {
        end[m - 1] = e;
      } else {
        begin[m] = b;
        end[m] = e;
        ++m;
      }
    }
  }
  return m;
}

// The cell holding sorted position p: the last c with cell_start[c] <= p (cells: grid.count()).
BEATNIK_HOST_DEVICE inline long br_cutoff_cell_of(const long* cell_start, long cells, long p) {
  long lo = 0, hi = cells;  // answer in [lo, hi)
  while (hi - lo > 1) {
    const long mid = (lo + hi) / 2;
    if (cell_start[mid] <= p) lo = mid;
    else hi = mid;
  }
  return lo;
}
}  // namespace detail

}  // namespace beatnik::model
