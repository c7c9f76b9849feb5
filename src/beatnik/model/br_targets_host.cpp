// The tree solver's host pair kernel (br_targets_host.hpp): targets in the SIMD lanes, one
// source broadcast per step, ranges in list order. Scalar (the reference), portable `omp simd`
// (compiled for AVX-512, AVX2 and baseline), AVX2 + FMA and AVX-512 intrinsics.
// GCC 12's AVX-512 headers trip -Wuninitialized in the masked loads (a known false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "beatnik/model/br_targets_host.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

#include "beatnik/base/error.hpp"
#include "beatnik/model/br_avx2_math.hpp"
#include "beatnik/model/br_avx512_math.hpp"

namespace beatnik::model {
namespace {

// The window of a range: which nearest images a₀ ∈ {−1, 0, 1} a pair may have, per dimension
// (|m − a₀| ≤ K), and the period and centring half that give a₀.
struct Window {
  bool ok[2][3];  // [dimension][a₀ + 1]
  double L[2], h[2];
};

Window window_of(const BRSourceRange& r, const BRImages& img) {
  Window w;
  const int m[2] = {r.mx, r.my};
  for (int d = 0; d < 2; ++d) {
    w.L[d] = img.period[d];
    w.h[d] = img.centring_half(d);
    for (int a = -1; a <= 1; ++a) w.ok[d][a + 1] = m[d] - a <= img.k && a - m[d] <= img.k;
  }
  return w;
}

// A range's source arrays ([x|y|z|qx|qy|qz], `stride` apart) and its image's offset.
struct RangeSources {
  const double *x, *y, *z, *qx, *qy, *qz;
  double ox, oy;
};

inline RangeSources sources_of(const BRSourceRange& r, const BRImages& img) {
  const double* p = r.p;
  const long n = r.stride;
  return {p, p + n, p + 2 * n, p + 3 * n, p + 4 * n, p + 5 * n, r.mx * img.period[0], r.my * img.period[1]};
}

inline int nearest(double sep, double L, double h) {
  const double c = image_centre(sep, L, h);
  return c > 0.0 ? 1 : (c < 0.0 ? -1 : 0);
}

// The reference loop: br_pair one pair at a time, each target's sum in list order.
#if defined(__clang__)
long targets_scalar(const double* tx, const double* ty, const double* tz, long nt, const BRSourceRange* rg, int nr,
                    const BRImages& img, double eps, double* ux, double* uy, double* uz) {
#pragma clang loop vectorize(disable)
#else
__attribute__((optimize("no-tree-vectorize"))) long targets_scalar(const double* tx, const double* ty,
                                                                    const double* tz, long nt,
                                                                    const BRSourceRange* rg, int nr,
                                                                    const BRImages& img, double eps, double* ux,
                                                                    double* uy, double* uz) {
#endif
  long pairs = 0;
  for (int r = 0; r < nr; ++r) {
    const BRSourceRange& R = rg[r];
    const auto [xs, ys, zs, qx, qy, qz, ox, oy] = sources_of(R, img);
    const Window w = window_of(R, img);
    for (long s = R.k0; s < R.k1; ++s)
      for (long t = 0; t < nt; ++t) {
        if (R.window && !(w.ok[0][nearest(tx[t] - xs[s], w.L[0], w.h[0]) + 1] &&
                          w.ok[1][nearest(ty[t] - ys[s], w.L[1], w.h[1]) + 1]))
          continue;
        br_pair(tx[t], ty[t], tz[t], xs[s] + ox, ys[s] + oy, zs[s], qx[s], qy[s], qz[s], eps, ux[t], uy[t], uz[t]);
        ++pairs;
      }
  }
  return pairs;
}

// The same loop vectorised over the targets (an exact skip outside the window).
__attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
long targets_portable(const double* __restrict tx, const double* __restrict ty, const double* __restrict tz, long nt,
                      const BRSourceRange* rg, int nr, const BRImages& img, double eps, double* __restrict ux,
                      double* __restrict uy, double* __restrict uz) {
  long pairs = 0;
  for (int r = 0; r < nr; ++r) {
    const BRSourceRange& R = rg[r];
    const auto [xs, ys, zs, qx, qy, qz, ox, oy] = sources_of(R, img);
    const Window w = window_of(R, img);
    for (long s = R.k0; s < R.k1; ++s) {
      const double sx = xs[s] + ox, sy = ys[s] + oy, sz = zs[s], ax = qx[s], ay = qy[s], az = qz[s];
      const double x0 = xs[s], y0 = ys[s];
      if (!R.window) {
#pragma omp simd
        for (long t = 0; t < nt; ++t) br_pair(tx[t], ty[t], tz[t], sx, sy, sz, ax, ay, az, eps, ux[t], uy[t], uz[t]);
        pairs += nt;
        continue;
      }
      long taken = 0;
#pragma omp simd reduction(+ : taken)
      for (long t = 0; t < nt; ++t) {
        const bool ok = w.ok[0][nearest(tx[t] - x0, w.L[0], w.h[0]) + 1] && w.ok[1][nearest(ty[t] - y0, w.L[1], w.h[1]) + 1];
        double vx = 0.0, vy = 0.0, vz = 0.0;
        br_pair(tx[t], ty[t], tz[t], sx, sy, sz, ax, ay, az, eps, vx, vy, vz);
        ux[t] = ok ? ux[t] + vx : ux[t];
        uy[t] = ok ? uy[t] + vy : uy[t];
        uz[t] = ok ? uz[t] + vz : uz[t];
        taken += ok ? 1 : 0;
      }
      pairs += taken;
    }
  }
  return pairs;
}

// AVX-512: 8 targets per vector, V vectors per source broadcast; 1/d^{3/2} from rsqrt14 and two
// Newton steps (as image_avx512 in br_block_host.cpp).
template <int V, bool Win>
__attribute__((target("avx512f"), always_inline)) inline long sweep_avx512(
    const __m512d* TX, const __m512d* TY, const __m512d* TZ, const __mmask8* lanes, __m512d* UX, __m512d* UY,
    __m512d* UZ, const BRSourceRange& R, const BRImages& img, const Window& w, double eps) {
  const auto [xs, ys, zs, qx, qy, qz, ox, oy] = sources_of(R, img);
  const __m512d EPS = _mm512_set1_pd(eps);
  long pairs = 0;
  for (long s = R.k0; s < R.k1; ++s) {
    const __m512d SX = _mm512_set1_pd(xs[s] + ox), SY = _mm512_set1_pd(ys[s] + oy), SZ = _mm512_set1_pd(zs[s]);
    const __m512d AX = _mm512_set1_pd(qx[s]), AY = _mm512_set1_pd(qy[s]), AZ = _mm512_set1_pd(qz[s]);
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) {
      const __m512d rx = _mm512_sub_pd(TX[v], SX), ry = _mm512_sub_pd(TY[v], SY), rz = _mm512_sub_pd(TZ[v], SZ);
      const __m512d d = _mm512_add_pd(
          _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(rx, rx), _mm512_mul_pd(ry, ry)), _mm512_mul_pd(rz, rz)), EPS);
      const __m512d f = inv_pow_three_halves_avx512(d);
      const __m512d cx = _mm512_sub_pd(_mm512_mul_pd(AY, rz), _mm512_mul_pd(AZ, ry));
      const __m512d cy = _mm512_sub_pd(_mm512_mul_pd(AZ, rx), _mm512_mul_pd(AX, rz));
      const __m512d cz = _mm512_sub_pd(_mm512_mul_pd(AX, ry), _mm512_mul_pd(AY, rx));
      if constexpr (!Win) {
        UX[v] = _mm512_fmadd_pd(cx, f, UX[v]);
        UY[v] = _mm512_fmadd_pd(cy, f, UY[v]);
        UZ[v] = _mm512_fmadd_pd(cz, f, UZ[v]);
      } else {
        // Lanes whose pair's nearest image a₀ is inside the window, per dimension.
        __mmask8 k = lanes[v];
        const __m512d S0[2] = {_mm512_set1_pd(xs[s]), _mm512_set1_pd(ys[s])};
        const __m512d T0[2] = {TX[v], TY[v]};
        for (int dim = 0; dim < 2; ++dim) {
          const double L = w.L[dim], h = w.h[dim];
          const bool* ok = w.ok[dim];
          __mmask8 up = 0, dn = 0;
          if (h > 0.0) {
            const __m512d sep = _mm512_add_pd(_mm512_sub_pd(T0[dim], S0[dim]), _mm512_set1_pd(kCentringShift * L));
            up = _mm512_cmp_pd_mask(sep, _mm512_set1_pd(h), _CMP_GE_OQ);
            dn = _mm512_cmp_pd_mask(sep, _mm512_set1_pd(-h), _CMP_LT_OQ);
          }
          const __mmask8 mid = static_cast<__mmask8>(~(up | dn));
          k &= static_cast<__mmask8>((ok[2] ? up : 0) | (ok[0] ? dn : 0) | (ok[1] ? mid : 0));
        }
        UX[v] = _mm512_mask3_fmadd_pd(cx, f, UX[v], k);
        UY[v] = _mm512_mask3_fmadd_pd(cy, f, UY[v], k);
        UZ[v] = _mm512_mask3_fmadd_pd(cz, f, UZ[v], k);
        pairs += __builtin_popcount(k);
      }
    }
  }
  return pairs;
}

template <int V>
__attribute__((target("avx512f"), always_inline)) inline long block_avx512(const double* tx, const double* ty,
                                                                          const double* tz, long t0, long nt,
                                                                          const BRSourceRange& R, const BRImages& img,
                                                                          double eps, double* ux, double* uy,
                                                                          double* uz) {
  __m512d TX[V], TY[V], TZ[V], UX[V], UY[V], UZ[V];
  __mmask8 lanes[V];
  for (int v = 0; v < V; ++v) {
    const long t = t0 + 8 * v, left = nt - t;
    lanes[v] = left >= 8 ? __mmask8(0xff) : __mmask8((1u << left) - 1);
    TX[v] = _mm512_maskz_loadu_pd(lanes[v], tx + t);
    TY[v] = _mm512_maskz_loadu_pd(lanes[v], ty + t);
    TZ[v] = _mm512_maskz_loadu_pd(lanes[v], tz + t);
    UX[v] = _mm512_maskz_loadu_pd(lanes[v], ux + t);
    UY[v] = _mm512_maskz_loadu_pd(lanes[v], uy + t);
    UZ[v] = _mm512_maskz_loadu_pd(lanes[v], uz + t);
  }
  long pairs = 0;
  if (R.window) pairs = sweep_avx512<V, true>(TX, TY, TZ, lanes, UX, UY, UZ, R, img, window_of(R, img), eps);
  else sweep_avx512<V, false>(TX, TY, TZ, lanes, UX, UY, UZ, R, img, Window{}, eps);
  for (int v = 0; v < V; ++v) {
    const long t = t0 + 8 * v;
    _mm512_mask_storeu_pd(ux + t, lanes[v], UX[v]);
    _mm512_mask_storeu_pd(uy + t, lanes[v], UY[v]);
    _mm512_mask_storeu_pd(uz + t, lanes[v], UZ[v]);
  }
  return pairs;
}

__attribute__((target("avx512f"))) long targets_avx512(const double* tx, const double* ty, const double* tz, long nt,
                                                       const BRSourceRange* rg, int nr, const BRImages& img,
                                                       double eps, double* ux, double* uy, double* uz) {
  long pairs = 0;
  for (int r = 0; r < nr; ++r) {
    const BRSourceRange& R = rg[r];
    if (!R.window) pairs += (R.k1 - R.k0) * nt;
    // 16 targets per pass while more than 8 are left, so that each source is loaded once for two
    // vectors of targets; the range's sources stay in L1 between passes.
    long t0 = 0;
    for (; nt - t0 > 8; t0 += 16) pairs += block_avx512<2>(tx, ty, tz, t0, nt, R, img, eps, ux, uy, uz);
    if (t0 < nt) pairs += block_avx512<1>(tx, ty, tz, t0, nt, R, img, eps, ux, uy, uz);
  }
  return pairs;
}

// AVX2 + FMA: 4 targets per vector, V vectors per source broadcast (kAvx2Vectors); d^{-3/2}
// from the float rsqrt estimate and corrections in double (br_avx2_math.hpp, as the exact
// solver's AVX2 tile). The window test as in the AVX-512 loop, on all-ones/zero lane masks. The estimate needs d in the
// float range: d ≥ ε, so with ε ≥ FLT_MIN only d > FLT_MAX can leave it. Where the range's and the
// targets' largest coordinates rule that out (pairs_in_float_range: one pass over each) the sweep
// tracks nothing; otherwise a running max does, and a block that saw one, and every block when
// ε < FLT_MIN, is swept Safe: each lane outside the range takes sqrt and a division. Each pair's
// term is thus a function of the pair alone, whichever path ran.
struct WindowAvx2 {
  __m256d ok_up[2], ok_dn[2], ok_mid[2];  // all-ones where a₀ = +1, −1, 0 is inside the window
  __m256d shift[2], h[2], nh[2];
  bool centred[2];
};

__attribute__((target("avx2,fma"))) WindowAvx2 window_avx2(const Window& w) {
  WindowAvx2 a;
  const __m256d ALL = _mm256_castsi256_pd(_mm256_set1_epi64x(-1)), NONE = _mm256_setzero_pd();
  for (int d = 0; d < 2; ++d) {
    a.ok_dn[d] = w.ok[d][0] ? ALL : NONE;
    a.ok_mid[d] = w.ok[d][1] ? ALL : NONE;
    a.ok_up[d] = w.ok[d][2] ? ALL : NONE;
    a.shift[d] = _mm256_set1_pd(kCentringShift * w.L[d]);
    a.h[d] = _mm256_set1_pd(w.h[d]);
    a.nh[d] = _mm256_set1_pd(-w.h[d]);
    a.centred[d] = w.h[d] > 0.0;
  }
  return a;
}

// All-ones in the lanes of v (of targets T, unshifted source coordinate S) that the window takes.
__attribute__((target("avx2,fma"), always_inline)) inline __m256d window_lanes(const WindowAvx2& w, __m256d TX,
                                                                               __m256d TY, __m256d SX0,
                                                                               __m256d SY0) {
  const __m256d T[2] = {TX, TY}, S[2] = {SX0, SY0};
  __m256d k = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
  for (int d = 0; d < 2; ++d) {
    if (!w.centred[d]) {  // a₀ = 0 for every pair
      k = _mm256_and_pd(k, w.ok_mid[d]);
      continue;
    }
    const __m256d sep = _mm256_add_pd(_mm256_sub_pd(T[d], S[d]), w.shift[d]);
    const __m256d up = _mm256_cmp_pd(sep, w.h[d], _CMP_GE_OQ), dn = _mm256_cmp_pd(sep, w.nh[d], _CMP_LT_OQ);
    const __m256d mid = _mm256_andnot_pd(_mm256_or_pd(up, dn), _mm256_castsi256_pd(_mm256_set1_epi64x(-1)));
    k = _mm256_and_pd(k, _mm256_or_pd(_mm256_or_pd(_mm256_and_pd(up, w.ok_up[d]), _mm256_and_pd(dn, w.ok_dn[d])),
                                      _mm256_and_pd(mid, w.ok_mid[d])));
  }
  return k;
}

// One vector of targets (T, accumulators U) against the broadcast source S (moved by its image)
// with strength A; S0: the source unmoved (the window test). Returns the pairs taken when Win.
struct Vec3 {
  __m256d x, y, z;
};

template <bool Win, bool Safe, bool Track>
__attribute__((target("avx2,fma"), always_inline)) inline int pair_step_avx2(const Vec3& T, __m256d lanes, Vec3& U,
                                                                             const Vec3& S, const Vec3& A,
                                                                             __m256d SX0, __m256d SY0, __m256d EPS,
                                                                             const WindowAvx2& w, __m256d& DMAX) {
  const __m256d rx = _mm256_sub_pd(T.x, S.x), ry = _mm256_sub_pd(T.y, S.y), rz = _mm256_sub_pd(T.z, S.z);
  const __m256d d = _mm256_fmadd_pd(rx, rx, _mm256_fmadd_pd(ry, ry, _mm256_fmadd_pd(rz, rz, EPS)));
  __m256d f;
  if constexpr (Safe) {
    f = _mm256_blendv_pd(inv_pow_three_halves_exact_avx2(d), inv_pow_three_halves_avx2(d), d_in_float_range(d));
  } else {
    if constexpr (Track) DMAX = _mm256_max_pd(DMAX, d);
    f = inv_pow_three_halves_avx2(d);
  }
  const __m256d cx = _mm256_fmsub_pd(A.y, rz, _mm256_mul_pd(A.z, ry));  // qy·rz − qz·ry
  const __m256d cy = _mm256_fmsub_pd(A.z, rx, _mm256_mul_pd(A.x, rz));  // qz·rx − qx·rz
  const __m256d cz = _mm256_fmsub_pd(A.x, ry, _mm256_mul_pd(A.y, rx));  // qx·ry − qy·rx
  if constexpr (!Win) {
    U.x = _mm256_fmadd_pd(cx, f, U.x);
    U.y = _mm256_fmadd_pd(cy, f, U.y);
    U.z = _mm256_fmadd_pd(cz, f, U.z);
    return 0;
  } else {
    const __m256d k = _mm256_and_pd(lanes, window_lanes(w, T.x, T.y, SX0, SY0));
    U.x = _mm256_blendv_pd(U.x, _mm256_fmadd_pd(cx, f, U.x), k);
    U.y = _mm256_blendv_pd(U.y, _mm256_fmadd_pd(cy, f, U.y), k);
    U.z = _mm256_blendv_pd(U.z, _mm256_fmadd_pd(cz, f, U.z), k);
    return __builtin_popcount(_mm256_movemask_pd(k));
  }
}

// V (1–4) vectors of targets against every source of R. The accumulators are named variables,
// not an array (GCC 12 kept an array of vectors in memory, loaded and stored every step), and the
// sweep is a function of its own (inlined into the block, its registers were spilled more).
template <int V, bool Win, bool Safe, bool Track = true>
__attribute__((target("avx2,fma"), noinline)) long sweep_avx2(const Vec3* T, const __m256d* lanes,
                                                                         Vec3* U, const BRSourceRange& R,
                                                                         const BRImages& img, const WindowAvx2& w,
                                                                         double eps, __m256d& dmax) {
  const auto [xs, ys, zs, qx, qy, qz, ox, oy] = sources_of(R, img);
  const __m256d EPS = _mm256_set1_pd(eps);
  __m256d DMAX = dmax;
  Vec3 u0 = U[0], u1, u2, u3;
  if constexpr (V > 1) u1 = U[1];
  if constexpr (V > 2) u2 = U[2];
  if constexpr (V > 3) u3 = U[3];
  long pairs = 0;
  for (long s = R.k0; s < R.k1; ++s) {
    const Vec3 S{_mm256_set1_pd(xs[s] + ox), _mm256_set1_pd(ys[s] + oy), _mm256_set1_pd(zs[s])};
    const Vec3 A{_mm256_set1_pd(qx[s]), _mm256_set1_pd(qy[s]), _mm256_set1_pd(qz[s])};
    __m256d SX0 = S.x, SY0 = S.y;
    if constexpr (Win) SX0 = _mm256_set1_pd(xs[s]), SY0 = _mm256_set1_pd(ys[s]);
    pairs += pair_step_avx2<Win, Safe, Track>(T[0], lanes[0], u0, S, A, SX0, SY0, EPS, w, DMAX);
    if constexpr (V > 1) pairs += pair_step_avx2<Win, Safe, Track>(T[1], lanes[1], u1, S, A, SX0, SY0, EPS, w, DMAX);
    if constexpr (V > 2) pairs += pair_step_avx2<Win, Safe, Track>(T[2], lanes[2], u2, S, A, SX0, SY0, EPS, w, DMAX);
    if constexpr (V > 3) pairs += pair_step_avx2<Win, Safe, Track>(T[3], lanes[3], u3, S, A, SX0, SY0, EPS, w, DMAX);
  }
  U[0] = u0;
  if constexpr (V > 1) U[1] = u1;
  if constexpr (V > 2) U[2] = u2;
  if constexpr (V > 3) U[3] = u3;
  dmax = DMAX;
  return pairs;
}

// Targets [t0, t0 + 4V) ∩ [0, nt) against range R; the lanes past nt are loaded as zeros and never
// stored (nor counted). in_range: every pair's d is known to lie in the float estimate's range
// (pairs_in_float_range), so the sweep tracks no running max.
template <int V>
__attribute__((target("avx2,fma"))) long block_avx2(const double* tx, const double* ty, const double* tz, long t0,
                                                    long nt, const BRSourceRange& R, const BRImages& img,
                                                    const WindowAvx2& w, double eps, bool in_range, double* ux,
                                                    double* uy, double* uz) {
  static_assert(V >= 1 && V <= 4);
  Vec3 T[V], U[V];
  __m256d lanes[V];
  __m256i mask[V];
  const __m256i IOTA = _mm256_setr_epi64x(0, 1, 2, 3);
  for (int v = 0; v < V; ++v) {
    const long t = t0 + 4 * v;
    mask[v] = _mm256_cmpgt_epi64(_mm256_set1_epi64x(nt - t), IOTA);
    lanes[v] = _mm256_castsi256_pd(mask[v]);
    T[v] = {_mm256_maskload_pd(tx + t, mask[v]), _mm256_maskload_pd(ty + t, mask[v]),
            _mm256_maskload_pd(tz + t, mask[v])};
    U[v] = {_mm256_maskload_pd(ux + t, mask[v]), _mm256_maskload_pd(uy + t, mask[v]),
            _mm256_maskload_pd(uz + t, mask[v])};
  }
  __m256d dmax = _mm256_setzero_pd();
  const bool fast = eps >= FLT_MIN;
  long pairs = 0;
  if (in_range)
    pairs = R.window ? sweep_avx2<V, true, false, false>(T, lanes, U, R, img, w, eps, dmax)
                     : sweep_avx2<V, false, false, false>(T, lanes, U, R, img, w, eps, dmax);
  else if (fast)
    pairs = R.window ? sweep_avx2<V, true, false>(T, lanes, U, R, img, w, eps, dmax)
                     : sweep_avx2<V, false, false>(T, lanes, U, R, img, w, eps, dmax);
  if (!in_range && (!fast || _mm256_movemask_pd(_mm256_cmp_pd(dmax, _mm256_set1_pd(FLT_MAX), _CMP_GT_OQ)) != 0)) {
    for (int v = 0; v < V; ++v) {  // memory still holds the sums before this block
      const long t = t0 + 4 * v;
      U[v] = {_mm256_maskload_pd(ux + t, mask[v]), _mm256_maskload_pd(uy + t, mask[v]),
              _mm256_maskload_pd(uz + t, mask[v])};
    }
    pairs = R.window ? sweep_avx2<V, true, true>(T, lanes, U, R, img, w, eps, dmax)
                     : sweep_avx2<V, false, true>(T, lanes, U, R, img, w, eps, dmax);
  }
  for (int v = 0; v < V; ++v) {
    const long t = t0 + 4 * v;
    _mm256_maskstore_pd(ux + t, mask[v], U[v].x);
    _mm256_maskstore_pd(uy + t, mask[v], U[v].y);
    _mm256_maskstore_pd(uz + t, mask[v], U[v].z);
  }
  return pairs;
}

// Targets per source broadcast: 3 vectors (12). With 16 registers, 2–4 vectors all keep part of
// the accumulators in L1; 3 measured ~5–10 % faster than 2 or 4 on this AMD EPYC (Zen 2/3 class,
// 2026-11-26, br_kernel_bench --targets-only).
inline constexpr int kAvx2Vectors = 3;

// The largest |coordinate| of points [k0, k1) of (x, y, z), x moved by ox and y by oy: a bound for
// pairs_in_float_range. A NaN coordinate is passed over (NaN propagates through either path of the
// sweep alike); an infinite one is returned.
__attribute__((target("avx2,fma"))) double max_abs_avx2(const double* x, const double* y, const double* z, long k0,
                                                        long k1, double ox, double oy) {
  const __m256d SIGN = _mm256_set1_pd(-0.0), OX = _mm256_set1_pd(ox), OY = _mm256_set1_pd(oy);
  __m256d m = _mm256_setzero_pd();  // _mm256_max_pd(v, m) keeps m where v is NaN
  long k = k0;
  for (; k + 4 <= k1; k += 4) {
    m = _mm256_max_pd(_mm256_andnot_pd(SIGN, _mm256_add_pd(_mm256_loadu_pd(x + k), OX)), m);
    m = _mm256_max_pd(_mm256_andnot_pd(SIGN, _mm256_add_pd(_mm256_loadu_pd(y + k), OY)), m);
    m = _mm256_max_pd(_mm256_andnot_pd(SIGN, _mm256_loadu_pd(z + k)), m);
  }
  alignas(32) double l[4];
  _mm256_store_pd(l, m);
  double a = std::max(std::max(l[0], l[1]), std::max(l[2], l[3]));
  for (; k < k1; ++k)
    for (const double v : {std::fabs(x[k] + ox), std::fabs(y[k] + oy), std::fabs(z[k])}) a = v > a ? v : a;
  return a;
}

__attribute__((target("avx2,fma"))) long targets_avx2(const double* tx, const double* ty, const double* tz, long nt,
                                                      const BRSourceRange* rg, int nr, const BRImages& img,
                                                      double eps, double* ux, double* uy, double* uz) {
  long pairs = 0;
  const double tmax = max_abs_avx2(tx, ty, tz, 0, nt, 0.0, 0.0);
  for (int r = 0; r < nr; ++r) {
    const BRSourceRange& R = rg[r];
    const WindowAvx2 w = R.window ? window_avx2(window_of(R, img)) : WindowAvx2{};
    const auto [xs, ys, zs, qx, qy, qz, ox, oy] = sources_of(R, img);
    const bool in = pairs_in_float_range(tmax, max_abs_avx2(xs, ys, zs, R.k0, R.k1, ox, oy), eps);
    if (!R.window) pairs += (R.k1 - R.k0) * nt;
    // Full passes of kAvx2Vectors vectors, then one pass with as many vectors as the rest needs;
    // the range's sources stay in L1 between passes.
    long t0 = 0;
    for (; nt - t0 > 4 * (kAvx2Vectors - 1); t0 += 4 * kAvx2Vectors)
      pairs += block_avx2<kAvx2Vectors>(tx, ty, tz, t0, nt, R, img, w, eps, in, ux, uy, uz);
    const long rest = (nt - t0 + 3) / 4;
    if (rest == 3) pairs += block_avx2<3>(tx, ty, tz, t0, nt, R, img, w, eps, in, ux, uy, uz);
    else if (rest == 2) pairs += block_avx2<2>(tx, ty, tz, t0, nt, R, img, w, eps, in, ux, uy, uz);
    else if (rest == 1) pairs += block_avx2<1>(tx, ty, tz, t0, nt, R, img, w, eps, in, ux, uy, uz);
  }
  return pairs;
}

}  // namespace

long br_targets_host(const double* tx, const double* ty, const double* tz, long nt, const BRSourceRange* ranges,
                     int nranges, const BRImages& img, double eps, double* ux, double* uy, double* uz,
                     BRHostKernel kernel) {
  if (!br_host_kernel_supported(kernel))
    throw NotAvailable(std::string("BR host kernel ") + to_string(kernel) + " is not supported by this CPU");
  switch (kernel) {
    case BRHostKernel::Scalar: return targets_scalar(tx, ty, tz, nt, ranges, nranges, img, eps, ux, uy, uz);
    case BRHostKernel::Avx512: return targets_avx512(tx, ty, tz, nt, ranges, nranges, img, eps, ux, uy, uz);
    case BRHostKernel::Avx2: return targets_avx2(tx, ty, tz, nt, ranges, nranges, img, eps, ux, uy, uz);
    case BRHostKernel::Portable: break;
  }
  return targets_portable(tx, ty, tz, nt, ranges, nranges, img, eps, ux, uy, uz);
}

long br_targets_host(const double* tx, const double* ty, const double* tz, long nt, const BRSourceRange* ranges,
                     int nranges, const BRImages& img, double eps, double* ux, double* uy, double* uz) {
  static const BRHostKernel k = br_host_kernel_default();
  return br_targets_host(tx, ty, tz, nt, ranges, nranges, img, eps, ux, uy, uz, k);
}

}  // namespace beatnik::model
