#pragma once
// The AVX2 + FMA host kernels' shared arithmetic (br_block_host_avx2.cpp, br_targets_host.cpp,
// tree_edge_avx2.cpp): one sequence, so that the exact and tree solvers round the same way.
// Host only, x86-64.
//   y₀ ≈ d^{-1/2}  from _mm_rsqrt_ps on d converted to float (relative error ≤ 1.5·2⁻¹²),
//   y₁ = y₀(1 + e/2 + 3e²/8),     e = 1 − d·y₀²   (third order: relative error ~2.5·δ₀³ ≈ 1e-10),
//   f  = y₁³(1 + 3e₁/2),          e₁ = 1 − d·y₁²  (the series of (1−e)^{-3/2}: error ~2e₁² ≈ 1e-19),
// so f = d^{-3/2} to a few units in the last place, as sqrt and a division give. The float
// estimate needs d within the normal float range [FLT_MIN, FLT_MAX]: callers check (d_in_float_range)
// and take sqrt and a division for the pairs outside it (d = 0 included, NaN there as in br_pair).
#include <immintrin.h>

#include <cfloat>

namespace beatnik::model {

__attribute__((target("avx2,fma"), always_inline)) inline __m256d inv_pow_three_halves_avx2(__m256d d) {
  const __m256d ONE = _mm256_set1_pd(1.0), C12 = _mm256_set1_pd(0.5), C38 = _mm256_set1_pd(0.375);
  const __m256d C32 = _mm256_set1_pd(1.5);
  __m256d y = _mm256_cvtps_pd(_mm_rsqrt_ps(_mm256_cvtpd_ps(d)));
  __m256d y2 = _mm256_mul_pd(y, y);
  __m256d e = _mm256_fnmadd_pd(d, y2, ONE);
  y = _mm256_fmadd_pd(_mm256_mul_pd(y, e), _mm256_fmadd_pd(e, C38, C12), y);
  y2 = _mm256_mul_pd(y, y);
  e = _mm256_fnmadd_pd(d, y2, ONE);
  const __m256d f0 = _mm256_mul_pd(y2, y);
  return _mm256_fmadd_pd(_mm256_mul_pd(f0, e), C32, f0);
}

// d^{-3/2} as br_pair forms it (1 / (d·√d), IEEE sqrt and division): the exact path for the
// pairs outside the estimate's range.
__attribute__((target("avx2,fma"), always_inline)) inline __m256d inv_pow_three_halves_exact_avx2(__m256d d) {
  return _mm256_div_pd(_mm256_set1_pd(1.0), _mm256_mul_pd(d, _mm256_sqrt_pd(d)));
}

// Lanes whose d lies in [FLT_MIN, FLT_MAX] (all-ones; NaN lanes count as inside: NaN propagates
// through either path alike).
__attribute__((target("avx2,fma"), always_inline)) inline __m256d d_in_float_range(__m256d d) {
  return _mm256_andnot_pd(_mm256_or_pd(_mm256_cmp_pd(d, _mm256_set1_pd(FLT_MIN), _CMP_LT_OQ),
                                       _mm256_cmp_pd(d, _mm256_set1_pd(FLT_MAX), _CMP_GT_OQ)),
                          _mm256_castsi256_pd(_mm256_set1_epi64x(-1)));
}

// Whether d = |r|² + ε of every pair lies in the estimate's range when the two points' coordinates
// (their images' offsets included) are at most a and b in magnitude: ε ≥ FLT_MIN and
// 3(a + b)² + ε ≤ FLT_MAX / 2. Then a kernel need not track d pair by pair (the running max or
// min costs ~6 % of the pair loops on an AVX2 host); an infinite or NaN bound gives false.
inline bool pairs_in_float_range(double a, double b, double eps) {
  const double s = a + b;
  return eps >= FLT_MIN && 3.0 * s * s + eps <= 0.5 * FLT_MAX;
}

}  // namespace beatnik::model
