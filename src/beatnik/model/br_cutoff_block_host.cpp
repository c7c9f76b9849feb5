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

constexpr int kBatch = 256;  // candidates compacted per batch (7 × 2 KiB on the stack)

// The accepted pairs of a batch: r = target − source, |r|², and the source strength.
struct Accepted {
  alignas(64) double rx[kBatch], ry[kBatch], rz[kBatch], r2[kBatch], qx[kBatch], qy[kBatch], qz[kBatch];
};

// Pass 1: the distance test over candidates [k0, k1) (at most kBatch), compacting the
// accepted ones into `acc` in source order (stores are unconditional, the count advances by
// the test: no branch). Returns how many.
template <bool F32>
[[gnu::always_inline]] inline int compact(const Sources& s, double tx, double ty, double tz, long k0, long k1,
                                          double c2, float cf, Accepted& acc) {
  const float ftx = static_cast<float>(tx), fty = static_cast<float>(ty), ftz = static_cast<float>(tz);
  int m = 0;
  for (long k = k0; k < k1; ++k) {
    const double rx = tx - s.x[k], ry = ty - s.y[k], rz = tz - s.z[k];
    const double r2 = rx * rx + ry * ry + rz * rz;
    bool in;
    if constexpr (F32) {
      const float fx = ftx - static_cast<float>(s.x[k]), fy = fty - static_cast<float>(s.y[k]),
                  fz = ftz - static_cast<float>(s.z[k]);
      in = std::sqrt(fx * fx + fy * fy + fz * fz) <= cf;
    } else {
      in = r2 <= c2;
    }
    acc.rx[m] = rx, acc.ry[m] = ry, acc.rz[m] = rz, acc.r2[m] = r2;
    acc.qx[m] = s.qx[k], acc.qy[m] = s.qy[k], acc.qz[m] = s.qz[k];
    m += in;
  }
  return m;
}

// Pass 2: br_pair over the m accepted pairs, a SIMD loop without masks; d = 0 (a pair at
// distance 0 with eps = 0) adds nothing.
[[gnu::always_inline]] inline void pair_sum(const Accepted& a, int m, double eps, double* u) {
  double ux = 0.0, uy = 0.0, uz = 0.0;
#pragma omp simd reduction(+ : ux, uy, uz)
  for (int j = 0; j < m; ++j) {
    const double d = a.r2[j] + eps;
    const double f = d > 0.0 ? 1.0 / (d * std::sqrt(d)) : 0.0;
    ux += (a.qy[j] * a.rz[j] - a.qz[j] * a.ry[j]) * f;
    uy += (a.qz[j] * a.rx[j] - a.qx[j] * a.rz[j]) * f;
    uz += (a.qx[j] * a.ry[j] - a.qy[j] * a.rx[j]) * f;
  }
  u[0] += ux;
  u[1] += uy;
  u[2] += uz;
  u[3] += m;
}

template <bool F32>
[[gnu::always_inline]] inline void range_sum(const Sources& s, double tx, double ty, double tz, long k0, long k1,
                                             double c2, float cf, double eps, Accepted& acc, double* u) {
  for (long b = k0; b < k1; b += kBatch) {
    const int m = compact<F32>(s, tx, ty, tz, b, std::min(k1, b + kBatch), c2, cf, acc);
    pair_sum(acc, m, eps, u);
  }
}

// One target against its m ranges. Compiled for AVX-512, AVX2 and baseline, chosen at load time.
__attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
void target_sum(const Sources& s, long p, const long* begin, const long* end, int m, double c2, float cf,
                double eps, bool f32, double* u) {
  const double tx = s.x[p], ty = s.y[p], tz = s.z[p];
  Accepted acc;
  for (int r = 0; r < m; ++r) {
    if (f32) range_sum<true>(s, tx, ty, tz, begin[r], end[r], c2, cf, eps, acc, u);
    else range_sum<false>(s, tx, ty, tz, begin[r], end[r], c2, cf, eps, acc, u);
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
