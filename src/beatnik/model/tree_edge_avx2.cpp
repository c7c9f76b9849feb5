// The edge sum's pair loop with AVX2 + FMA intrinsics (tree_edge_pairs.hpp): 4 points per vector
// against one target, summed per lane in index order and added across the lanes at the end (a
// fixed order: bitwise reproducible). Per vector about the targets kernel's arithmetic
// (br_targets_host.cpp) plus the strengths' difference. The estimate needs d in the float range:
// d ≥ ε, so with ε ≥ FLT_MIN only d > FLT_MAX can leave it (a running max); a loop that saw one,
// and every loop when ε < FLT_MIN, is redone with sqrt and a division in the lanes outside it.
#include <immintrin.h>

#include <cfloat>

#include "beatnik/model/br_avx2_math.hpp"
#include "beatnik/model/tree_edge_pairs.hpp"

namespace beatnik::model::tree::detail {
namespace {

template <bool Tail>
__attribute__((target("avx2,fma"), always_inline)) inline __m256d load_pd(__m256i mask, const double* p) {
  if constexpr (Tail) return _mm256_maskload_pd(p, mask);
  else return _mm256_loadu_pd(p);
}

// One vector of points [k, k + 4) against the target T (lanes outside `mask` contribute zero).
template <bool Diff, bool Safe, bool Tail>
__attribute__((target("avx2,fma"), always_inline)) inline void pair_step(
    const double* px, const double* py, const double* pz, const double* a, const double* b, long stride, long k,
    __m256i mask, __m256d TX, __m256d TY, __m256d TZ, __m256d OX, __m256d OY, __m256d EPS, __m256d& UX,
    __m256d& UY, __m256d& UZ, __m256d& DMAX) {
  const __m256d rx = _mm256_sub_pd(TX, _mm256_add_pd(load_pd<Tail>(mask, px + k), OX));
  const __m256d ry = _mm256_sub_pd(TY, _mm256_add_pd(load_pd<Tail>(mask, py + k), OY));
  const __m256d rz = _mm256_sub_pd(TZ, load_pd<Tail>(mask, pz + k));
  const __m256d d = _mm256_fmadd_pd(rx, rx, _mm256_fmadd_pd(ry, ry, _mm256_fmadd_pd(rz, rz, EPS)));
  __m256d f;
  if constexpr (Safe) {
    f = _mm256_blendv_pd(inv_pow_three_halves_exact_avx2(d), inv_pow_three_halves_avx2(d), d_in_float_range(d));
  } else {
    DMAX = _mm256_max_pd(DMAX, Tail ? _mm256_and_pd(d, _mm256_castsi256_pd(mask)) : d);
    f = inv_pow_three_halves_avx2(d);
  }
  if constexpr (Tail) f = _mm256_and_pd(f, _mm256_castsi256_pd(mask));  // zero strength and zero f: no 0·∞
  __m256d ax = load_pd<Tail>(mask, a + k), ay = load_pd<Tail>(mask, a + stride + k),
          az = load_pd<Tail>(mask, a + 2 * stride + k);
  if constexpr (Diff) {
    ax = _mm256_sub_pd(ax, load_pd<Tail>(mask, b + k));
    ay = _mm256_sub_pd(ay, load_pd<Tail>(mask, b + stride + k));
    az = _mm256_sub_pd(az, load_pd<Tail>(mask, b + 2 * stride + k));
  }
  UX = _mm256_fmadd_pd(_mm256_fmsub_pd(ay, rz, _mm256_mul_pd(az, ry)), f, UX);  // qy·rz − qz·ry
  UY = _mm256_fmadd_pd(_mm256_fmsub_pd(az, rx, _mm256_mul_pd(ax, rz)), f, UY);  // qz·rx − qx·rz
  UZ = _mm256_fmadd_pd(_mm256_fmsub_pd(ax, ry, _mm256_mul_pd(ay, rx)), f, UZ);  // qx·ry − qy·rx
}

template <bool Diff, bool Safe>
__attribute__((target("avx2,fma"), noinline)) void pairs(const double* px, const double* py, const double* pz,
                                                         const double* a, const double* b, long stride, long k0,
                                                         long k1, double ox, double oy, double x, double y, double z,
                                                         double eps, double* v, double* dmax) {
  const __m256d TX = _mm256_set1_pd(x), TY = _mm256_set1_pd(y), TZ = _mm256_set1_pd(z);
  const __m256d OX = _mm256_set1_pd(ox), OY = _mm256_set1_pd(oy), EPS = _mm256_set1_pd(eps);
  __m256d UX = _mm256_setzero_pd(), UY = UX, UZ = UX, DMAX = UX;
  const __m256i ALL = _mm256_set1_epi64x(-1);
  long k = k0;
  for (; k + 4 <= k1; k += 4)
    pair_step<Diff, Safe, false>(px, py, pz, a, b, stride, k, ALL, TX, TY, TZ, OX, OY, EPS, UX, UY, UZ, DMAX);
  if (k < k1) {
    const __m256i mask = _mm256_cmpgt_epi64(_mm256_set1_epi64x(k1 - k), _mm256_setr_epi64x(0, 1, 2, 3));
    pair_step<Diff, Safe, true>(px, py, pz, a, b, stride, k, mask, TX, TY, TZ, OX, OY, EPS, UX, UY, UZ, DMAX);
  }
  const __m256d U[3] = {UX, UY, UZ};
  for (int c = 0; c < 3; ++c) {  // lanes (0 + 1) + (2 + 3)
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(U[c]), _mm256_extractf128_pd(U[c], 1));
    v[c] += _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
  }
  const __m128d m = _mm_max_pd(_mm256_castpd256_pd128(DMAX), _mm256_extractf128_pd(DMAX, 1));
  *dmax = _mm_cvtsd_f64(_mm_max_sd(m, _mm_unpackhi_pd(m, m)));
}

template <bool Diff>
void pairs_checked(const double* px, const double* py, const double* pz, const double* a, const double* b,
                   long stride, long k0, long k1, double ox, double oy, double x, double y, double z, double eps,
                   double* v) {
  double dmax = 0.0;
  if (eps >= FLT_MIN) {
    double w[3] = {0.0, 0.0, 0.0};
    pairs<Diff, false>(px, py, pz, a, b, stride, k0, k1, ox, oy, x, y, z, eps, w, &dmax);
    if (!(dmax > FLT_MAX)) {
      for (int c = 0; c < 3; ++c) v[c] += w[c];
      return;
    }
  }
  pairs<Diff, true>(px, py, pz, a, b, stride, k0, k1, ox, oy, x, y, z, eps, v, &dmax);
}

}  // namespace

void edge_pairs_avx2(const double* px, const double* py, const double* pz, const double* a, const double* b,
                     long stride, long k0, long k1, double ox, double oy, double x, double y, double z, double eps,
                     double* v) {
  if (k1 <= k0) return;
  if (b) pairs_checked<true>(px, py, pz, a, b, stride, k0, k1, ox, oy, x, y, z, eps, v);
  else pairs_checked<false>(px, py, pz, a, b, stride, k0, k1, ox, oy, x, y, z, eps, v);
}

}  // namespace beatnik::model::tree::detail
