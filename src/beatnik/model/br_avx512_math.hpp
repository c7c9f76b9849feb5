#pragma once
// The AVX-512 host kernels' shared arithmetic (br_block_host.cpp, br_targets_host.cpp): one
// sequence, so that the exact and tree solvers round the same way. Host only, x86-64.
#include <immintrin.h>

namespace beatnik::model {

// d^{-3/2} per lane: y ≈ d^{-1/2} from the rsqrt14 estimate, then y ← y·(3/2 − (d/2)·y²) twice.
__attribute__((target("avx512f"), always_inline)) inline __m512d inv_pow_three_halves_avx512(__m512d d) {
  const __m512d HALF = _mm512_set1_pd(0.5), THREE_HALF = _mm512_set1_pd(1.5);
  const __m512d hd = _mm512_mul_pd(HALF, d);
  __m512d y = _mm512_rsqrt14_pd(d);
  y = _mm512_mul_pd(y, _mm512_fnmadd_pd(_mm512_mul_pd(hd, y), y, THREE_HALF));
  y = _mm512_mul_pd(y, _mm512_fnmadd_pd(_mm512_mul_pd(hd, y), y, THREE_HALF));
  return _mm512_mul_pd(_mm512_mul_pd(y, y), y);
}

}  // namespace beatnik::model
