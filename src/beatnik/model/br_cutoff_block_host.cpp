// Host version of the cutoff Birkhoff–Rott sum: threads over chunks of sorted positions
// (dynamic: the neighbour counts vary), and for each target a branch-free SIMD loop over each
// contiguous range of candidate sources, rejected candidates masked to 0. Compiled with
// -ffp-contract=off (CMakeLists.txt): the float32 test must not fuse its multiply-adds, and
// the double test then gives the same r² as the device, which also rounds every step, so
// both accept the same pairs; -fno-math-errno lets the square roots vectorise.
#include <algorithm>
#include <cmath>

#include "beatnik/model/br_cutoff_block.hpp"

namespace beatnik::model {
namespace {

constexpr long kChunk = 64;  // sorted positions per thread task

struct Sources {
  const double *x, *y, *z, *qx, *qy, *qz;
};

// Sum over sources [k0, k1) for the target (tx, ty, tz) into u[0..2], accepted pairs into u[3].
template <bool F32>
[[gnu::always_inline]] inline void range_sum(const Sources& s, double tx, double ty, double tz, long k0, long k1,
                                             double c2, float cf, double eps, double* u) {
  const double* __restrict xs = s.x;
  const double* __restrict ys = s.y;
  const double* __restrict zs = s.z;
  const double* __restrict qx = s.qx;
  const double* __restrict qy = s.qy;
  const double* __restrict qz = s.qz;
  const float ftx = static_cast<float>(tx), fty = static_cast<float>(ty), ftz = static_cast<float>(tz);
  double ux = 0.0, uy = 0.0, uz = 0.0, cnt = 0.0;
#pragma omp simd reduction(+ : ux, uy, uz, cnt)
  for (long k = k0; k < k1; ++k) {
    const double rx = tx - xs[k], ry = ty - ys[k], rz = tz - zs[k];
    const double r2 = rx * rx + ry * ry + rz * rz;
    bool in;
    if constexpr (F32) {
      const float fx = ftx - static_cast<float>(xs[k]), fy = fty - static_cast<float>(ys[k]),
                  fz = ftz - static_cast<float>(zs[k]);
      in = std::sqrt(fx * fx + fy * fy + fz * fz) <= cf;
    } else {
      in = r2 <= c2;
    }
    // br_pair's arithmetic; d = 0 (a pair at distance 0 with eps = 0) adds nothing.
    const double d = r2 + eps;
    const double f = (in && d > 0.0) ? 1.0 / (d * std::sqrt(d)) : 0.0;
    ux += (qy[k] * rz - qz[k] * ry) * f;
    uy += (qz[k] * rx - qx[k] * rz) * f;
    uz += (qx[k] * ry - qy[k] * rx) * f;
    cnt += in ? 1.0 : 0.0;
  }
  u[0] += ux;
  u[1] += uy;
  u[2] += uz;
  u[3] += cnt;
}

// One target against its m ranges. Compiled for AVX-512, AVX2 and baseline, chosen at load time.
__attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
void target_sum(const Sources& s, long p, const long* begin, const long* end, int m, double c2, float cf,
                double eps, bool f32, double* u) {
  const double tx = s.x[p], ty = s.y[p], tz = s.z[p];
  for (int r = 0; r < m; ++r) {
    if (f32) range_sum<true>(s, tx, ty, tz, begin[r], end[r], c2, cf, eps, u);
    else range_sum<false>(s, tx, ty, tz, begin[r], end[r], c2, cf, eps, u);
  }
}

}  // namespace

void br_cutoff_host(const BRCutoffArgs& a) {
  const long ns = a.ns, nt = a.nt, cells = a.grid.count();
  const Sources s{a.sources, a.sources + ns, a.sources + 2 * ns, a.sources + 3 * ns, a.sources + 4 * ns,
                  a.sources + 5 * ns};
  const long* order = a.order;
  const long* start = a.cell_start;
  const search::CellGrid g = a.grid;
  const double c2 = a.cutoff * a.cutoff;
  const float cf = static_cast<float>(a.cutoff);
  const long chunks = (ns + kChunk - 1) / kChunk;
  unsigned long long total = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : total)
  for (long c = 0; c < chunks; ++c) {
    const long p0 = c * kChunk, p1 = std::min(ns, p0 + kChunk);
    long cell = detail::br_cutoff_cell_of(start, cells, p0), ranges_of = -1;
    long begin[9], end[9];
    int m = 0;
    for (long p = p0; p < p1; ++p) {
      const long i = order[p];
      if (i >= nt) continue;  // a ghost: a source only
      while (start[cell + 1] <= p) ++cell;
      if (cell != ranges_of) {  // the targets of a cell share its ranges
        const int cz = static_cast<int>(cell % g.n[2]), cy = static_cast<int>(cell / g.n[2] % g.n[1]),
                  cx = static_cast<int>(cell / (long(g.n[2]) * g.n[1]));
        m = detail::br_cutoff_ranges(g, start, cx, cy, cz, begin, end);
        ranges_of = cell;
      }
      double u[4] = {0.0, 0.0, 0.0, 0.0};
      target_sum(s, p, begin, end, m, c2, cf, a.eps, a.float32_test, u);
      a.acc[i] = u[0];
      a.acc[nt + i] = u[1];
      a.acc[2 * nt + i] = u[2];
      total += static_cast<unsigned long long>(u[3]);
    }
  }
  if (a.pairs) *a.pairs += total;
}

}  // namespace beatnik::model
