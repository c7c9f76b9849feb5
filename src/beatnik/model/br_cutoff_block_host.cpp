// Host version of the cutoff Birkhoff–Rott sum: threads over chunks of sorted positions
// (dynamic: the neighbour counts vary), and for each target the cell ranges its sphere touches
// (detail::br_cutoff_visit), each a contiguous range of candidate sources: an AVX2 loop with
// rejected candidates masked (chosen at load time), else a portable SIMD loop that compacts
// the accepted candidates first. Compiled with
// -ffp-contract=off (CMakeLists.txt): the float32 test must not fuse its multiply-adds, and
// the double test then gives the same r² as the device, which also rounds every step, so
// both accept the same pairs; -fno-math-errno lets the square roots vectorise.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

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
void target_sum(const Sources& s, long p, const long* begin, const long* end, int m, double c2, float cf, float,
                double eps, bool f32, double* u) {
  const double tx = s.x[p], ty = s.y[p], tz = s.z[p];
  Accepted acc;
  for (int r = 0; r < m; ++r) {
    if (f32) range_sum<true>(s, tx, ty, tz, begin[r], end[r], c2, cf, eps, acc, u);
    else range_sum<false>(s, tx, ty, tz, begin[r], end[r], c2, cf, eps, acc, u);
  }
}

// The same sum with AVX2 + FMA intrinsics, 4 candidates per step and no compaction: the
// distance test gives a lane mask, a step with no accepted lane is skipped, and otherwise the
// pair arithmetic runs on all 4 lanes with the rejected lanes' factor masked to 0. With cells
// of half the cutoff (kBRCutoffCell) about 58% of the candidates are accepted, so this beats
// compacting the accepted ones (measured: the 7 packed stores per step cost more). The factor
// 1/d^{3/2} is a square root and a division: on the AVX2 machine measured (AMD Zen 3) the
// float reciprocal square root estimate refined by Newton/Halley steps in double to full
// accuracy was slower (its long dependency chain), also when mixed half and half.
// The sum of a target has a fixed order (4 lane sums over its ranges in source order, then
// added lane 0..3), so it is the same for any thread count.

// The largest float x with sqrtf(x) <= cf: sqrtf is correctly rounded, hence monotone, so
// sqrtf(x) <= cf exactly when x <= this bound, and the float32 test needs no square root.
inline float sqrtf_bound(float cf) {
  if (!(cf < std::numeric_limits<float>::infinity())) return cf;  // inf (everything passes) or NaN
  if (!(cf >= 0.0f)) return -1.0f;                                  // nothing passes
  float x = static_cast<float>(double(cf) * double(cf));
  const float inf = std::numeric_limits<float>::infinity();
  while (x > 0.0f && std::sqrt(x) > cf) x = std::nextafter(x, 0.0f);
  while (x < inf && std::sqrt(std::nextafter(x, inf)) <= cf) x = std::nextafter(x, inf);
  return x;
}

// The distance-test constants of one target (cf: sqrtf_bound of the float cutoff).
struct TargetAvx2 {
  __m256d tx, ty, tz, c2, eps;
  __m128 ftx, fty, ftz, cf;
};

// One step of 4 candidates k .. k+3 (FULL: all below the range end k1; else the lanes from
// k1 on are masked).
template <bool F32, bool FULL>
__attribute__((target("avx2,fma"), always_inline))
inline void step_avx2(const Sources& s, const TargetAvx2& t, long k, long k1, __m256d& UX, __m256d& UY, __m256d& UZ,
                      long& count) {
  __m256d sx, sy, sz, tail;
  __m256i lanes;
  if constexpr (FULL) {
    sx = _mm256_loadu_pd(s.x + k), sy = _mm256_loadu_pd(s.y + k), sz = _mm256_loadu_pd(s.z + k);
  } else {
    lanes = _mm256_cmpgt_epi64(_mm256_set1_epi64x(k1 - k), _mm256_set_epi64x(3, 2, 1, 0));
    sx = _mm256_maskload_pd(s.x + k, lanes), sy = _mm256_maskload_pd(s.y + k, lanes),
    sz = _mm256_maskload_pd(s.z + k, lanes);
    tail = _mm256_castsi256_pd(lanes);
  }
  const __m256d rx = _mm256_sub_pd(t.tx, sx), ry = _mm256_sub_pd(t.ty, sy), rz = _mm256_sub_pd(t.tz, sz);
  const __m256d r2 = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(rx, rx), _mm256_mul_pd(ry, ry)), _mm256_mul_pd(rz, rz));
  __m256d in;
  if constexpr (F32) {
    const __m128 fx = _mm_sub_ps(t.ftx, _mm256_cvtpd_ps(sx)), fy = _mm_sub_ps(t.fty, _mm256_cvtpd_ps(sy)),
                 fz = _mm_sub_ps(t.ftz, _mm256_cvtpd_ps(sz));
    const __m128 f2 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(fx, fx), _mm_mul_ps(fy, fy)), _mm_mul_ps(fz, fz));
    const __m128 fin = _mm_cmp_ps(f2, t.cf, _CMP_LE_OQ);  // t.cf: the largest x with sqrtf(x) <= cf
    in = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_castps_si128(fin)));
  } else {
    in = _mm256_cmp_pd(r2, t.c2, _CMP_LE_OQ);
  }
  if constexpr (!FULL) in = _mm256_and_pd(in, tail);
  const int bits = _mm256_movemask_pd(in);
  if (bits == 0) return;
  count += __builtin_popcount(bits);
  __m256d ax, ay, az;
  if constexpr (FULL) {
    ax = _mm256_loadu_pd(s.qx + k), ay = _mm256_loadu_pd(s.qy + k), az = _mm256_loadu_pd(s.qz + k);
  } else {
    ax = _mm256_maskload_pd(s.qx + k, lanes), ay = _mm256_maskload_pd(s.qy + k, lanes),
    az = _mm256_maskload_pd(s.qz + k, lanes);
  }
  const __m256d d = _mm256_add_pd(r2, t.eps);
  // Lanes taking the factor: accepted and d > 0 (a pair at distance 0 adds nothing).
  const __m256d take = _mm256_and_pd(in, _mm256_cmp_pd(d, _mm256_setzero_pd(), _CMP_GT_OQ));
  const __m256d f =
      _mm256_and_pd(_mm256_div_pd(_mm256_set1_pd(1.0), _mm256_mul_pd(d, _mm256_sqrt_pd(d))), take);
  UX = _mm256_fmadd_pd(_mm256_fmsub_pd(ay, rz, _mm256_mul_pd(az, ry)), f, UX);
  UY = _mm256_fmadd_pd(_mm256_fmsub_pd(az, rx, _mm256_mul_pd(ax, rz)), f, UY);
  UZ = _mm256_fmadd_pd(_mm256_fmsub_pd(ax, ry, _mm256_mul_pd(ay, rx)), f, UZ);
}

template <bool F32>
__attribute__((target("avx2,fma")))
inline void target_sum_avx2_t(const Sources& s, long p, const long* begin, const long* end, int m, double c2,
                              float cf, double eps, double* u) {
  const double tx = s.x[p], ty = s.y[p], tz = s.z[p];
  TargetAvx2 t;
  t.tx = _mm256_set1_pd(tx), t.ty = _mm256_set1_pd(ty), t.tz = _mm256_set1_pd(tz);
  t.c2 = _mm256_set1_pd(c2), t.eps = _mm256_set1_pd(eps);
  t.ftx = _mm_set1_ps(static_cast<float>(tx)), t.fty = _mm_set1_ps(static_cast<float>(ty)),
  t.ftz = _mm_set1_ps(static_cast<float>(tz)), t.cf = _mm_set1_ps(cf);
  __m256d UX = _mm256_setzero_pd(), UY = UX, UZ = UX;
  long count = 0;
  for (int q = 0; q < m; ++q) {
    const long k1 = end[q];
    long k = begin[q];
    for (; k + 8 <= k1; k += 8) {
      step_avx2<F32, true>(s, t, k, k1, UX, UY, UZ, count);
      step_avx2<F32, true>(s, t, k + 4, k1, UX, UY, UZ, count);
    }
    if (k + 4 <= k1) {
      step_avx2<F32, true>(s, t, k, k1, UX, UY, UZ, count);
      k += 4;
    }
    if (k < k1) step_avx2<F32, false>(s, t, k, k1, UX, UY, UZ, count);
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

void target_sum_avx2(const Sources& s, long p, const long* begin, const long* end, int m, double c2, float,
                     float cf2, double eps, bool f32, double* u) {
  if (f32) target_sum_avx2_t<true>(s, p, begin, end, m, c2, cf2, eps, u);
  else target_sum_avx2_t<false>(s, p, begin, end, m, c2, cf2, eps, u);
}


using TargetFn = void (*)(const Sources&, long, const long*, const long*, int, double, float, float, double, bool,
                          double*);

TargetFn pick_target_sum() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? target_sum_avx2 : target_sum;
}

}  // namespace

void br_cutoff_host(const BRCutoffArgs& a) {
  const long ns = a.ns, nt = a.nt;
  const Sources s{a.sources, a.sources + ns, a.sources + 2 * ns, a.sources + 3 * ns, a.sources + 4 * ns,
                  a.sources + 5 * ns};
  const long* order = a.order;
  const long* start = a.cell_start;
  const search::CellGrid g = a.grid;
  const double c2 = a.cutoff * a.cutoff;
  const float cf = static_cast<float>(a.cutoff), cf2 = sqrtf_bound(cf);
  const long chunks = (ns + kChunk - 1) / kChunk;
  static const TargetFn sum = pick_target_sum();
  unsigned long long total = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : total)
  for (long c = 0; c < chunks; ++c) {
    const long p0 = c * kChunk, p1 = std::min(ns, p0 + kChunk);
    constexpr int kRanges = 32;  // ranges handed to the sum at a time
    long begin[kRanges], end[kRanges];
    for (long p = p0; p < p1; ++p) {
      const long i = order[p];
      if (i >= nt) continue;  // a ghost: a source only
      double u[4] = {0.0, 0.0, 0.0, 0.0};
      int m = 0;
      const double tx = s.x[p], ty = s.y[p], tz = s.z[p];
      detail::br_cutoff_visit(g, start, tx, ty, tz, detail::br_cutoff_reach(a.cutoff, tx, ty, tz),
                              [&](long b, long e) {
                                if (m == kRanges) {
                                  sum(s, p, begin, end, m, c2, cf, cf2, a.eps, a.float32_test, u);
                                  m = 0;
                                }
                                begin[m] = b;
                                end[m] = e;
                                ++m;
                              });
      sum(s, p, begin, end, m, c2, cf, cf2, a.eps, a.float32_test, u);
      a.acc[i] = u[0];
      a.acc[nt + i] = u[1];
      a.acc[2 * nt + i] = u[2];
      total += static_cast<unsigned long long>(u[3]);
    }
  }
  if (a.pairs) *a.pairs += total;
}

}  // namespace beatnik::model
