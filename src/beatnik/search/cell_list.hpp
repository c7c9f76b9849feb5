#pragma once
// A uniform cell list over the bounding box of a set of points: the points sorted by cell
// (z-cells fastest, so each (x, y) column of cells is contiguous in sorted order), and where
// each cell's points start. Built on the host or the device, rebuilt every call without
// allocating once its sizes have settled.
#include "beatnik/exec/bounding_box.hpp"
#include "beatnik/exec/counting_sort.hpp"
#include "beatnik/exec/macros.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/space.hpp"

namespace beatnik::search {

struct CellGrid {  // trivially copyable into kernels
  double lo[3] = {0, 0, 0};   // origin
  double inv[3] = {0, 0, 0};  // 1 / cell size (0 where the box is flat: one cell)
  int n[3] = {1, 1, 1};       // cells per dimension

  // Cell coordinate of v along d, clamped to [0, n[d]-1] (NaN goes to 0).
  BEATNIK_HOST_DEVICE int coord(int d, double v) const {
    const double t = (v - lo[d]) * inv[d];
    if (!(t >= 0.0)) return 0;  // below the box, or NaN
    return t < double(n[d]) ? static_cast<int>(t) : n[d] - 1;
  }
  BEATNIK_HOST_DEVICE int index(int cx, int cy, int cz) const { return (cx * n[1] + cy) * n[2] + cz; }
  long count() const { return long(n[0]) * n[1] * n[2]; }
};

class CellList {
 public:
  explicit CellList(exec::Space s);

  // Bins n points (x, y, z arrays of n doubles in space s) into a uniform grid over their
  // bounding box (computed here) with cells no smaller than `radius` in every dimension, so
  // every point within `radius` of a point lies in its cell or one of the 26 around it. The
  // cells are in fact at least radius + 1e-6·(radius + max |coordinate|) wide: that margin
  // covers rounding in the cell coordinates and a float32 distance test (coordinates rounded
  // to float, MODEL.md §9.2) that accepts pairs a few float ulps beyond `radius`. At most
  // max_cells cells in all (cells grow beyond radius when the box is large, e.g. a surface
  // that blew up in z). Throws InputError for radius <= 0 and SimulationError for an infinite
  // coordinate (NaN coordinates are left out of the box and binned into cell 0). Device:
  // waits for the bounding box, the rest is queued.
  void build(const double* x, const double* y, const double* z, long n, double radius,
             long max_cells = 1 << 22);

  const CellGrid& grid() const { return grid_; }
  long size() const { return n_; }
  const long* order() const { return sort_.order(); }        // sorted position -> point index (space s)
  const long* cell_start() const { return sort_.offsets(); }  // cell c: cell_start[c] .. cell_start[c+1]-1
  const exec::CountingSort& sort() const { return sort_; }

 private:
  exec::Space space_;
  long n_ = 0;
  CellGrid grid_;
  exec::BoundingBox box_;
  exec::CountingSort sort_;
  exec::Buffer<int> keys_;
};

// The grid build() uses for a bounding box [lo, hi] (exposed for tests and diagnostics).
CellGrid make_cell_grid(const double lo[3], const double hi[3], double radius, long max_cells);

}  // namespace beatnik::search
