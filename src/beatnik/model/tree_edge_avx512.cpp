// The edge sum's pair loop with AVX-512F intrinsics (tree_edge_pairs.hpp): 8 points per vector
// against one target, summed per lane in index order and added across the lanes at the end in a
// fixed order (bitwise reproducible). The arithmetic per pair is the AVX-512 targets kernel's
// (br_targets_host.cpp: d^{-3/2} from rsqrt14 and two Newton steps, br_avx512_math.hpp) plus
// the strengths' difference. rsqrt14 takes every positive double, so
// there is no range check (the AVX2 loop's float estimate needs one). The tail is a masked
// vector: its lanes load nothing and add nothing.
// GCC 12's AVX-512 headers trip -Wuninitialized in the masked loads (a known false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "beatnik/model/br_avx512_math.hpp"
#include "beatnik/model/tree_edge_pairs.hpp"

namespace beatnik::model::tree::detail {
namespace {

// One vector of points [k, k + 8) (the lanes of `lanes`) against the target T.
template <bool Diff>
__attribute__((target("avx512f"), always_inline)) inline void pair_step(
    const double* px, const double* py, const double* pz, const double* a, const double* b, long stride, long k,
    __mmask8 lanes, __m512d TX, __m512d TY, __m512d TZ, __m512d OX, __m512d OY, __m512d EPS, __m512d& UX,
    __m512d& UY, __m512d& UZ) {
  const __m512d rx = _mm512_sub_pd(TX, _mm512_add_pd(_mm512_maskz_loadu_pd(lanes, px + k), OX));
  const __m512d ry = _mm512_sub_pd(TY, _mm512_add_pd(_mm512_maskz_loadu_pd(lanes, py + k), OY));
  const __m512d rz = _mm512_sub_pd(TZ, _mm512_maskz_loadu_pd(lanes, pz + k));
  const __m512d d = _mm512_add_pd(
      _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(rx, rx), _mm512_mul_pd(ry, ry)), _mm512_mul_pd(rz, rz)), EPS);
  const __m512d f = inv_pow_three_halves_avx512(d);
  __m512d ax = _mm512_maskz_loadu_pd(lanes, a + k), ay = _mm512_maskz_loadu_pd(lanes, a + stride + k),
          az = _mm512_maskz_loadu_pd(lanes, a + 2 * stride + k);
  if constexpr (Diff) {
    ax = _mm512_sub_pd(ax, _mm512_maskz_loadu_pd(lanes, b + k));
    ay = _mm512_sub_pd(ay, _mm512_maskz_loadu_pd(lanes, b + stride + k));
    az = _mm512_sub_pd(az, _mm512_maskz_loadu_pd(lanes, b + 2 * stride + k));
  }
  const __m512d cx = _mm512_sub_pd(_mm512_mul_pd(ay, rz), _mm512_mul_pd(az, ry));  // qy·rz − qz·ry
  const __m512d cy = _mm512_sub_pd(_mm512_mul_pd(az, rx), _mm512_mul_pd(ax, rz));  // qz·rx − qx·rz
  const __m512d cz = _mm512_sub_pd(_mm512_mul_pd(ax, ry), _mm512_mul_pd(ay, rx));  // qx·ry − qy·rx
  UX = _mm512_mask3_fmadd_pd(cx, f, UX, lanes);
  UY = _mm512_mask3_fmadd_pd(cy, f, UY, lanes);
  UZ = _mm512_mask3_fmadd_pd(cz, f, UZ, lanes);
}

// The lanes' sum in a fixed order: (0 + 4, 1 + 5, 2 + 6, 3 + 7), then (0 + 2, 1 + 3), then 0 + 1.
__attribute__((target("avx512f"), always_inline)) inline double hsum(__m512d u) {
  const __m256d s4 = _mm256_add_pd(_mm512_castpd512_pd256(u), _mm512_extractf64x4_pd(u, 1));
  const __m128d s2 = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd(s4, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s2, _mm_unpackhi_pd(s2, s2)));
}

template <bool Diff>
__attribute__((target("avx512f"))) void pairs(const double* px, const double* py, const double* pz, const double* a,
                                              const double* b, long stride, long k0, long k1, double ox, double oy,
                                              double x, double y, double z, double eps, double* v) {
  const __m512d TX = _mm512_set1_pd(x), TY = _mm512_set1_pd(y), TZ = _mm512_set1_pd(z);
  const __m512d OX = _mm512_set1_pd(ox), OY = _mm512_set1_pd(oy), EPS = _mm512_set1_pd(eps);
  __m512d UX = _mm512_setzero_pd(), UY = UX, UZ = UX;
  long k = k0;
  for (; k + 8 <= k1; k += 8)
    pair_step<Diff>(px, py, pz, a, b, stride, k, __mmask8(0xff), TX, TY, TZ, OX, OY, EPS, UX, UY, UZ);
  if (k < k1)
    pair_step<Diff>(px, py, pz, a, b, stride, k, __mmask8((1u << (k1 - k)) - 1), TX, TY, TZ, OX, OY, EPS, UX, UY,
                    UZ);
  v[0] += hsum(UX);
  v[1] += hsum(UY);
  v[2] += hsum(UZ);
}

}  // namespace

void edge_pairs_avx512(const double* px, const double* py, const double* pz, const double* a, const double* b,
                       long stride, long k0, long k1, double ox, double oy, double x, double y, double z, double eps,
                       double* v) {
  if (k1 <= k0) return;
  if (b) pairs<true>(px, py, pz, a, b, stride, k0, k1, ox, oy, x, y, z, eps, v);
  else pairs<false>(px, py, pz, a, b, stride, k0, k1, ox, oy, x, y, z, eps, v);
}

}  // namespace beatnik::model::tree::detail

namespace beatnik::model::tree::detail {
namespace {

// T targets against the points [0, m) with strengths q (no difference), the points' vector
// loaded once for the T targets; each target's sum as pairs<false> forms it.
template <int T>
__attribute__((target("avx512f"), always_inline)) inline void targets_pass(const double* px, const double* py,
                                                                          const double* pz, const double* q,
                                                                          long stride, long m, double ox, double oy,
                                                                          const double* tx, const double* ty,
                                                                          const double* tz, double eps, double* ux,
                                                                          double* uy, double* uz) {
  __m512d TX[T], TY[T], TZ[T], UX[T], UY[T], UZ[T];
  for (int i = 0; i < T; ++i) {
    TX[i] = _mm512_set1_pd(tx[i]), TY[i] = _mm512_set1_pd(ty[i]), TZ[i] = _mm512_set1_pd(tz[i]);
    UX[i] = UY[i] = UZ[i] = _mm512_setzero_pd();
  }
  const __m512d OX = _mm512_set1_pd(ox), OY = _mm512_set1_pd(oy), EPS = _mm512_set1_pd(eps);
  for (long k = 0; k < m; k += 8) {
    const __mmask8 lanes = m - k >= 8 ? __mmask8(0xff) : __mmask8((1u << (m - k)) - 1);
    const __m512d sx = _mm512_add_pd(_mm512_maskz_loadu_pd(lanes, px + k), OX);
    const __m512d sy = _mm512_add_pd(_mm512_maskz_loadu_pd(lanes, py + k), OY);
    const __m512d sz = _mm512_maskz_loadu_pd(lanes, pz + k);
    const __m512d ax = _mm512_maskz_loadu_pd(lanes, q + k), ay = _mm512_maskz_loadu_pd(lanes, q + stride + k),
                  az = _mm512_maskz_loadu_pd(lanes, q + 2 * stride + k);
#pragma GCC unroll 4
    for (int i = 0; i < T; ++i) {
      const __m512d rx = _mm512_sub_pd(TX[i], sx), ry = _mm512_sub_pd(TY[i], sy), rz = _mm512_sub_pd(TZ[i], sz);
      const __m512d d = _mm512_add_pd(
      _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(rx, rx), _mm512_mul_pd(ry, ry)), _mm512_mul_pd(rz, rz)), EPS);
      const __m512d f = inv_pow_three_halves_avx512(d);
      const __m512d cx = _mm512_sub_pd(_mm512_mul_pd(ay, rz), _mm512_mul_pd(az, ry));
      const __m512d cy = _mm512_sub_pd(_mm512_mul_pd(az, rx), _mm512_mul_pd(ax, rz));
      const __m512d cz = _mm512_sub_pd(_mm512_mul_pd(ax, ry), _mm512_mul_pd(ay, rx));
      UX[i] = _mm512_mask3_fmadd_pd(cx, f, UX[i], lanes);
      UY[i] = _mm512_mask3_fmadd_pd(cy, f, UY[i], lanes);
      UZ[i] = _mm512_mask3_fmadd_pd(cz, f, UZ[i], lanes);
    }
  }
  for (int i = 0; i < T; ++i) ux[i] = hsum(UX[i]), uy[i] = hsum(UY[i]), uz[i] = hsum(UZ[i]);
}

}  // namespace

__attribute__((target("avx512f"))) void edge_targets_avx512(const double* px, const double* py, const double* pz,
                                                            const double* q, long stride, long m, double ox,
                                                            double oy, const double* tx, const double* ty,
                                                            const double* tz, long nt, double eps, double* ux,
                                                            double* uy, double* uz) {
  long t = 0;
  for (; t + 4 <= nt; t += 4)
    targets_pass<4>(px, py, pz, q, stride, m, ox, oy, tx + t, ty + t, tz + t, eps, ux + t, uy + t, uz + t);
  switch (nt - t) {
    case 3: targets_pass<3>(px, py, pz, q, stride, m, ox, oy, tx + t, ty + t, tz + t, eps, ux + t, uy + t, uz + t); break;
    case 2: targets_pass<2>(px, py, pz, q, stride, m, ox, oy, tx + t, ty + t, tz + t, eps, ux + t, uy + t, uz + t); break;
    case 1: targets_pass<1>(px, py, pz, q, stride, m, ox, oy, tx + t, ty + t, tz + t, eps, ux + t, uy + t, uz + t); break;
    default: break;
  }
}

}  // namespace beatnik::model::tree::detail
