#pragma once
// The spatial decomposition of the cutoff Birkhoff–Rott solver (MODEL.md §9.3, DECISIONS.md):
// the x/y extent split into Px columns, each column into Py rows, over the same Px × Py
// process grid as the surface mesh (any rank count, 1 included); z is never split and never
// bounded. Rank (a, b) of the grid owns spatial cell (a, b), so on a nearly flat surface most
// particles stay on the rank that owns them on the surface.
//
// Partitions (--spatial-partition):
//   uniform   equal boxes of the surface's [−B, B]² box (as the reference);
//   balanced  cuts recomputed from the particles on every update: column cuts at the quantiles
//             of x over all particles, then in each column row cuts at the quantiles of y of the
//             particles in that column, so that every rank owns about the same number. The
//             quantiles come from global histograms (one all-reduce each for x and y) and sit on
//             bin edges: deterministic, identical on every rank.
//
// Positions outside the box go to the edge ranks: the outer cuts are the global extent of the
// particles (and of the box), refreshed on every update.
#include <mpi.h>

#include <array>
#include <cmath>

#include <string>
#include <vector>

#include "beatnik/exec/bounding_box.hpp"
#include "beatnik/exec/macros.hpp"
#include "beatnik/exec/memory.hpp"

namespace beatnik::mesh {

enum class SpatialPartition { Uniform, Balanced };
const char* to_string(SpatialPartition p);
// "uniform" or "balanced"; false for anything else.
bool parse_spatial_partition(const std::string& name, SpatialPartition& out);

// What kernels capture: the cuts of the current partition (pointers into host or device memory).
struct SpatialView {
  int px = 1, py = 1;
  const double* xcut = nullptr;  // px + 1: column a spans [xcut[a], xcut[a+1])
  const double* ycut = nullptr;  // px·(py + 1): row b of column a spans [ycut[a(py+1)+b], ycut[a(py+1)+b+1])
  const int* rank_of = nullptr;  // px·py: rank owning cell (a, b), at a·py + b

  // Column holding x; values beyond the outer cuts go to the edge columns.
  BEATNIK_HOST_DEVICE int column(double x) const { return find(xcut, px, x); }
  BEATNIK_HOST_DEVICE int row(int a, double y) const { return find(ycut + a * (py + 1), py, y); }
  BEATNIK_HOST_DEVICE int owner(double x, double y) const {
    const int a = column(x);
    return rank_of[a * py + row(a, y)];
  }
  BEATNIK_HOST_DEVICE double x_lo() const { return xcut[0]; }
  BEATNIK_HOST_DEVICE double x_hi() const { return xcut[px]; }
  BEATNIK_HOST_DEVICE double y_lo() const { return ycut[0]; }
  BEATNIK_HOST_DEVICE double y_hi() const { return ycut[py]; }

  // The part k of n (0..n−1) whose interval [c[k], c[k+1]) holds v, by binary search over the
  // interior cuts c[1..n−1].
  BEATNIK_HOST_DEVICE static int find(const double* c, int n, double v) {
    int lo = 0, hi = n - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (v >= c[mid]) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
};

// Calls f(rank, shift_x, shift_y) for every rank whose cell, widened by `reach` on every side,
// holds the point (x + shift_x, y + shift_y), over every periodic image of the point inside the
// widened global extent (period[d] = 0: dimension d is not periodic, no images) — except the
// point itself on its own rank `self`. These are the ghost copies a particle owned by `self`
// makes: widening by the cutoff keeps every pair within the cutoff, whatever the cell widths
// (cells thinner than the cutoff included) and whatever the rank count (1 included: the
// periodic images then come back to the owner itself).
template <class F>
BEATNIK_HOST_DEVICE void visit_ghost_targets(const SpatialView& v, const double period[2], double reach, int self,
                                             double x, double y, F&& f) {
  if (!(x - x == 0.0) || !(y - y == 0.0)) return;  // NaN or infinite: the health check reports it
  int a0 = 0, a1 = 0, b0 = 0, b1 = 0;
  if (period[0] > 0) {
    a0 = static_cast<int>(std::ceil((v.x_lo() - reach - x) / period[0]));
    a1 = static_cast<int>(std::floor((v.x_hi() + reach - x) / period[0]));
  }
  if (period[1] > 0) {
    b0 = static_cast<int>(std::ceil((v.y_lo() - reach - y) / period[1]));
    b1 = static_cast<int>(std::floor((v.y_hi() + reach - y) / period[1]));
  }
  for (int a = a0; a <= a1; ++a) {
    const double sx = a * period[0], xs = x + sx;
    const int c0 = v.column(xs - reach), c1 = v.column(xs + reach);
    for (int b = b0; b <= b1; ++b) {
      const double sy = b * period[1], ys = y + sy;
      for (int c = c0; c <= c1; ++c) {
        const int r0 = v.row(c, ys - reach), r1 = v.row(c, ys + reach);
        for (int r = r0; r <= r1; ++r) {
          const int rank = v.rank_of[c * v.py + r];
          if (a == 0 && b == 0 && rank == self) continue;
          f(rank, sx, sy);
        }
      }
    }
  }
}

class SpatialDecomposition {
 public:
  // grid_comm: the surface mesh's Cartesian communicator, dims its Px × Py. box_lo/box_hi: the
  // surface box in x and y (the uniform cuts and the least outer extent).
  SpatialDecomposition(MPI_Comm grid_comm, std::array<int, 2> dims, std::array<double, 2> box_lo,
                       std::array<double, 2> box_hi, SpatialPartition partition, exec::Space space);
  // Serial (the dry run's estimate, app/dry_run_cutoff.hpp): one process holds every particle,
  // so update() reduces nothing; cell (a, b) belongs to rank a·Py + b (MPI_Cart_rank's order).
  SpatialDecomposition(std::array<int, 2> dims, std::array<double, 2> box_lo, std::array<double, 2> box_hi,
                       SpatialPartition partition);

  // New cuts for particles at (x[k], y[k]), k < n (this rank's; arrays in `space`). Collective
  // over the grid communicator: the global extent (and, balanced, the histograms) are reduced.
  // False (on every rank alike, cuts unchanged) when a position is not finite.
  bool update(const double* x, const double* y, long n);

  SpatialView view() const;       // in `space`
  SpatialView host_view() const;  // the same cuts in host memory
  SpatialPartition partition() const { return partition_; }
  std::array<int, 2> dims() const { return {px_, py_}; }
  // This rank's cell: [x0, x1) × [y0, y1) of the current cuts (outer cuts: the global extent).
  std::array<double, 4> cell_of(int rank) const;

  // Balanced cuts from the particles (public only because nvcc's device lambdas cannot live in
  // private member functions).
  void balance(const double* x, const double* y, long n);

 private:
  void publish();  // host cuts -> device copy
  // MPI_Allreduce in place over the grid communicator; nothing when serial (no communicator).
  void reduce(void* buf, int count, MPI_Datatype type, MPI_Op op, const char* what) const;

  MPI_Comm comm_;
  int px_, py_;
  std::array<double, 2> box_lo_, box_hi_;
  SpatialPartition partition_;
  exec::Space space_;
  exec::BoundingBox extent_;
  std::vector<double> xcut_, ycut_;
  std::vector<int> rank_of_;
  exec::Buffer<double> dev_cuts_;  // [xcut | ycut] in `space`
  exec::Buffer<int> dev_rank_of_;
  exec::Buffer<int> bins_;          // histogram scratch in `space`
  std::vector<long> hist_;
};

}  // namespace beatnik::mesh
