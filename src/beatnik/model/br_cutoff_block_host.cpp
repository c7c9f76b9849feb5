// Host version of the cutoff Birkhoff–Rott sum: threads over chunks of sorted positions
// (dynamic: the neighbour counts vary), and for each target a branch-free SIMD loop over each
// contiguous range of candidate sources, rejected candidates masked to 0. Compiled with
// -ffp-contract=off (CMakeLists.txt): the float32 test must not fuse its multiply-adds, and
// the double test then gives the same r² as the device, which also rounds every step, so
// both accept the same pairs; -fno-math-errno lets the square roots vectorise.
#include <immintrin.h>

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

// The same sum with AVX2 + FMA intrinsics, 4 candidates per step and no compaction: the
// distance test gives a lane mask, and the pair arithmetic runs on every candidate with the
// rejected lanes' factor masked to 0 (cheaper, with the reciprocal square root below, than
// compacting the accepted ones). 1/d^{3/2} comes from the float32 reciprocal square root
// estimate (relative error <= 1.5·2⁻¹²) refined in double by one Newton step (error ~2⁻²³) and
// one third-order (Halley) step (error ~2⁻⁶⁹, i.e. rounding only), instead of a square root and
// a division. d outside the float range of the estimate (d < 2⁻¹²⁰ or d > 2¹²⁰, e.g. eps = 0
// and two points 1e-18 apart) takes the exact sqrt + division for that step of 4.
// The sum of a target has a fixed order (4 lane sums over its ranges in source order, then
// added lane 0..3), so it is the same for any thread count.
__attribute__((target("avx2,fma")))
inline __m256d inv_d32_avx2(__m256d d) {
  const __m128 e = _mm_rsqrt_ps(_mm256_cvtpd_ps(d));
  __m256d y = _mm256_cvtps_pd(e);
  // Newton: y += y·(1/2 − (d/2)·y²)
  const __m256d hd = _mm256_mul_pd(_mm256_set1_pd(0.5), d);
  y = _mm256_fmadd_pd(y, _mm256_fnmadd_pd(_mm256_mul_pd(hd, y), y, _mm256_set1_pd(0.5)), y);
  // Halley: r = 1 − d·y², y += y·r·(1/2 + 3/8·r)
  const __m256d r = _mm256_fnmadd_pd(_mm256_mul_pd(d, y), y, _mm256_set1_pd(1.0));
  const __m256d c = _mm256_mul_pd(r, _mm256_fmadd_pd(r, _mm256_set1_pd(0.375), _mm256_set1_pd(0.5)));
  y = _mm256_fmadd_pd(y, c, y);
  return _mm256_mul_pd(_mm256_mul_pd(y, y), y);
}

template <bool F32>
__attribute__((target("avx2,fma")))
inline void target_sum_avx2_t(const Sources& s, long p, const long* begin, const long* end, int m, double c2,
                              float cf, double eps, double* u) {
  const double tx = s.x[p], ty = s.y[p], tz = s.z[p];
  const __m256d TX = _mm256_set1_pd(tx), TY = _mm256_set1_pd(ty), TZ = _mm256_set1_pd(tz);
  const __m256d C2 = _mm256_set1_pd(c2), EPS = _mm256_set1_pd(eps), ZERO = _mm256_setzero_pd();
  const __m256d DLO = _mm256_set1_pd(0x1p-120), DHI = _mm256_set1_pd(0x1p120);
  const __m128 FTX = _mm_set1_ps(static_cast<float>(tx)), FTY = _mm_set1_ps(static_cast<float>(ty)),
               FTZ = _mm_set1_ps(static_cast<float>(tz)), CF = _mm_set1_ps(cf);
  const __m256i LANE = _mm256_set_epi64x(3, 2, 1, 0);
  __m256d UX = ZERO, UY = ZERO, UZ = ZERO;
  long count = 0;
  for (int q = 0; q < m; ++q) {
    const long k1 = end[q];
    for (long k = begin[q]; k < k1; k += 4) {
      __m256d sx, sy, sz, ax, ay, az, tail;
      if (k + 4 <= k1) {
        sx = _mm256_loadu_pd(s.x + k), sy = _mm256_loadu_pd(s.y + k), sz = _mm256_loadu_pd(s.z + k);
        ax = _mm256_loadu_pd(s.qx + k), ay = _mm256_loadu_pd(s.qy + k), az = _mm256_loadu_pd(s.qz + k);
        tail = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
      } else {
        const __m256i t = _mm256_cmpgt_epi64(_mm256_set1_epi64x(k1 - k), LANE);
        sx = _mm256_maskload_pd(s.x + k, t), sy = _mm256_maskload_pd(s.y + k, t), sz = _mm256_maskload_pd(s.z + k, t);
        ax = _mm256_maskload_pd(s.qx + k, t), ay = _mm256_maskload_pd(s.qy + k, t), az = _mm256_maskload_pd(s.qz + k, t);
        tail = _mm256_castsi256_pd(t);
      }
      const __m256d rx = _mm256_sub_pd(TX, sx), ry = _mm256_sub_pd(TY, sy), rz = _mm256_sub_pd(TZ, sz);
      const __m256d r2 = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(rx, rx), _mm256_mul_pd(ry, ry)), _mm256_mul_pd(rz, rz));
      __m256d in;
      if constexpr (F32) {
        const __m128 fx = _mm_sub_ps(FTX, _mm256_cvtpd_ps(sx)), fy = _mm_sub_ps(FTY, _mm256_cvtpd_ps(sy)),
                     fz = _mm_sub_ps(FTZ, _mm256_cvtpd_ps(sz));
        const __m128 f2 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(fx, fx), _mm_mul_ps(fy, fy)), _mm_mul_ps(fz, fz));
        const __m128 fin = _mm_cmp_ps(_mm_sqrt_ps(f2), CF, _CMP_LE_OQ);
        in = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_castps_si128(fin)));
      } else {
        in = _mm256_cmp_pd(r2, C2, _CMP_LE_OQ);
      }
      in = _mm256_and_pd(in, tail);
      const int bits = _mm256_movemask_pd(in);
      if (bits == 0) continue;
      count += __builtin_popcount(bits);
      const __m256d d = _mm256_add_pd(r2, EPS);
      // Lanes taking the factor: accepted and d > 0 (a pair at distance 0 adds nothing).
      const __m256d take = _mm256_and_pd(in, _mm256_cmp_pd(d, ZERO, _CMP_GT_OQ));
      __m256d f = inv_d32_avx2(d);
      const __m256d odd = _mm256_or_pd(_mm256_cmp_pd(d, DLO, _CMP_LT_OQ), _mm256_cmp_pd(d, DHI, _CMP_GT_OQ));
      if (_mm256_movemask_pd(_mm256_and_pd(odd, take)) != 0) {
        const __m256d ex = _mm256_div_pd(_mm256_set1_pd(1.0), _mm256_mul_pd(d, _mm256_sqrt_pd(d)));
        f = _mm256_blendv_pd(f, ex, odd);
      }
      f = _mm256_and_pd(f, take);
      UX = _mm256_fmadd_pd(_mm256_fmsub_pd(ay, rz, _mm256_mul_pd(az, ry)), f, UX);
      UY = _mm256_fmadd_pd(_mm256_fmsub_pd(az, rx, _mm256_mul_pd(ax, rz)), f, UY);
      UZ = _mm256_fmadd_pd(_mm256_fmsub_pd(ax, ry, _mm256_mul_pd(ay, rx)), f, UZ);
    }
  }
  alignas(32) double lx[4], ly[4], lz[4];
  _mm256_store_pd(lx, UX);
  _mm256_store_pd(ly, UY);
  _mm256_store_pd(lz, UZ);
  u[0] += ((lx[0] + lx[1]) + lx[2]) + lx[3];
  u[1] += ((ly[0] + ly[1]) + ly[2]) + ly[3];
  u[2] += ((lz[0] + lz[1]) + lz[2]) + lz[3];
  u[3] += static_cast<double>(count);
}

void target_sum_avx2(const Sources& s, long p, const long* begin, const long* end, int m, double c2, float cf,
                     double eps, bool f32, double* u) {
  if (f32) target_sum_avx2_t<true>(s, p, begin, end, m, c2, cf, eps, u);
  else target_sum_avx2_t<false>(s, p, begin, end, m, c2, cf, eps, u);
}


using TargetFn = void (*)(const Sources&, long, const long*, const long*, int, double, float, double, bool, double*);

TargetFn pick_target_sum() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? target_sum_avx2 : target_sum;
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
  static const TargetFn sum = pick_target_sum();
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
      sum(s, p, begin, end, m, c2, cf, a.eps, a.float32_test, u);
      a.acc[i] = u[0];
      a.acc[nt + i] = u[1];
      a.acc[2 * nt + i] = u[2];
      total += static_cast<unsigned long long>(u[3]);
    }
  }
  if (a.pairs) *a.pairs += total;
}

}  // namespace beatnik::model
