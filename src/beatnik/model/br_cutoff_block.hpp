#pragma once
// The local sum of the cutoff Birkhoff–Rott solver (MODEL.md §9.2 steps 5–6): every owned
// particle (target) against the particles, owned and ghost, within the cutoff of it, found
// through a cell list. Host (OpenMP + SIMD) and device (CUDA, FP64) versions of the same sum.
//
// Cost per candidate pair (a source in a cell that the sphere of the cutoff around a target
// touches, detail::br_cutoff_visit): the distance test is 8 flops (3 sub, 3 mul, 2 add) in
// double; the float32 test adds 6 conversions and 8 float flops plus a float sqrt. A pair
// within the cutoff then costs the 27 flops of br_pair (sqrt and division counted as one each;
// the device uses one FP64 rsqrt instead). The host's AVX2 loop computes the pair arithmetic on
// every candidate of a group of 4 with at least one accepted, masking the rejected ones, so its
// cost is nearly per candidate; with cells of half the cutoff (kBRCutoffCell) a flat surface has
// about 1.7 candidates per pair within the cutoff (cells of the cutoff size: about 2.7).
#include <cmath>

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
  const long* cell_start = nullptr;  // CellList::cell_start (grid.count() + 1 entries); any cell size
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

// The cell size, as a fraction of the cutoff, that the kernels run fastest with (CellList::build
// with kBRCutoffCell × the cutoff; any cell size gives the same sums): smaller cells fit the
// sphere around a target more tightly (fewer candidates per pair) but cut the candidates into
// more, shorter ranges.
inline constexpr double kBRCutoffCell = 0.5;

// Sources of a target are visited cell column by cell column ((x, y) neighbours in index
// order, z-cells contiguous), each in sorted order, so the sum of a target has a fixed order
// and the host and device differ only by round-off. The self pair adds exactly 0 (also with
// eps = 0: a pair at distance 0 is skipped).
void br_cutoff_host(const BRCutoffArgs& a);
// Queued on the device (asynchronous); throws NotAvailable without the CUDA build.
void br_cutoff_device(const BRCutoffArgs& a);

namespace detail {
// How far from target t a source the distance test accepts can lie, per dimension and in all:
// the cutoff plus a margin (4e-6 of cutoff + max |t|) for the float32 test, whose rounding of
// each coordinate to 24 bits accepts pairs a few float ulps beyond the cutoff, and for the
// rounding of the cell geometry below.
BEATNIK_HOST_DEVICE inline double br_cutoff_reach(double cutoff, double tx, double ty, double tz) {
  const double ax = tx < 0 ? -tx : tx, ay = ty < 0 ? -ty : ty, az = tz < 0 ? -tz : tz;
  const double big = ax > ay ? (ax > az ? ax : az) : (ay > az ? ay : az);
  return cutoff + 4e-6 * (cutoff + big);
}

// Distance along d from v to the slab of cell column i (0 when v lies in it).
BEATNIK_HOST_DEVICE inline double br_cutoff_gap(const search::CellGrid& g, int d, int i, double v) {
  if (g.inv[d] == 0.0) return 0.0;
  const double w = 1.0 / g.inv[d], a = g.lo[d] + i * w, b = a + w;
  return v < a ? a - v : (v > b ? v - b : 0.0);
}

// Calls f(begin, end) for the ranges of sorted positions a target at (tx, ty, tz) must test:
// the cells that hold points within `reach` of it (br_cutoff_reach). Columns (x, y) in index
// order, each pruned to the cells the sphere of radius `reach` touches (x columns by |dx|,
// then y cells by the rest of the radius, then the contiguous z cells), adjacent ranges merged.
// Any cell size works (e.g. CellList::build with the cutoff or a fraction of it); cells of
// about half the cutoff test the fewest candidates per pair. The coordinate of every point
// within reach lies in the range coord(t − h) .. coord(t + h) (coord is monotone).
template <class F>
BEATNIK_HOST_DEVICE inline void br_cutoff_visit(const search::CellGrid& g, const long* cell_start, double tx, double ty,
                                                double tz, double reach, F&& f) {
  const double r2 = reach * reach;
  const int x0 = g.coord(0, tx - reach), x1 = g.coord(0, tx + reach);
  long pb = 0, pe = 0;  // the pending range
  for (int x = x0; x <= x1; ++x) {
    const double gx = br_cutoff_gap(g, 0, x, tx), hy2 = r2 - gx * gx;
    if (!(hy2 >= 0.0)) continue;
    const double hy = sqrt(hy2);
    const int y0 = g.coord(1, ty - hy), y1 = g.coord(1, ty + hy);
    for (int y = y0; y <= y1; ++y) {
      const double gy = br_cutoff_gap(g, 1, y, ty), hz2 = hy2 - gy * gy;
      if (!(hz2 >= 0.0)) continue;
      const double hz = sqrt(hz2);
      const long b = cell_start[g.index(x, y, g.coord(2, tz - hz))], e = cell_start[g.index(x, y, g.coord(2, tz + hz)) + 1];
      if (b == e) continue;
      if (pe > pb && pe == b) {
        pe = e;
      } else {
        if (pe > pb) f(pb, pe);
        pb = b;
        pe = e;
      }
    }
  }
  if (pe > pb) f(pb, pe);
}
}  // namespace detail

}  // namespace beatnik::model
