// The exact Birkhoff–Rott tile with AVX2 + FMA intrinsics (CPUs without AVX-512), 4 sources
// per step. Per step of sources the loads, the image centring and the parts of r and q × r
// that do not depend on the image are formed once; the images are the inner loops, where
// each pair-image costs about 22 vector operations and no square root or division: d^{-3/2}
// from a float rsqrt estimate and corrections in double (br_avx2_math.hpp). The float
// estimate needs d within the normal float range: where the block's coordinates vouch for every
// pair (BRTileSources::in_range) nothing is tracked; otherwise each tile tracks min and max of d,
// and a tile with a pair outside [FLT_MIN, FLT_MAX] is redone by the portable tile (d = 0 included,
// which gives NaN in every path, as br_pair does).
#include <immintrin.h>

#include <cfloat>

#include "beatnik/model/br_avx2_math.hpp"
#include "beatnik/model/br_block_host_tiles.hpp"

namespace beatnik::model::detail {
namespace {

__attribute__((target("avx2,fma"), always_inline)) inline __m256d centre_shift(__m256d t, __m256d s, __m256d z,
                                                                               __m256d h, __m256d nh, __m256d L) {
  // image_centre(t − s, L, h): (r + ζL ≥ h ? L : 0) − (r + ζL < −h ? L : 0), exact comparisons.
  const __m256d r = _mm256_add_pd(_mm256_sub_pd(t, s), z);
  const __m256d up = _mm256_and_pd(_mm256_cmp_pd(r, h, _CMP_GE_OQ), L);
  const __m256d dn = _mm256_and_pd(_mm256_cmp_pd(r, nh, _CMP_LT_OQ), L);
  return _mm256_sub_pd(up, dn);
}

__attribute__((target("avx2,fma"))) double hsum(__m256d v) {
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

}  // namespace

// Track: the running min and max of d (off where s.in_range vouches for every pair).
template <bool Track>
__attribute__((target("avx2,fma"))) void tile_avx2(const BRTileSources& s, double tx, double ty, double tz, long k0,
                                                   long k1, double* u) {
  const __m256d TX = _mm256_set1_pd(tx), TY = _mm256_set1_pd(ty), TZ = _mm256_set1_pd(tz);
  const __m256d EPS = _mm256_set1_pd(s.eps);
  const __m256d PL0 = _mm256_set1_pd(s.L0), H0 = _mm256_set1_pd(s.h0), NH0 = _mm256_set1_pd(-s.h0);
  const __m256d PL1 = _mm256_set1_pd(s.L1), H1 = _mm256_set1_pd(s.h1), NH1 = _mm256_set1_pd(-s.h1);
  const __m256d Z0 = _mm256_set1_pd(kCentringShift * s.L0), Z1 = _mm256_set1_pd(kCentringShift * s.L1);
  const bool c0 = s.h0 > 0.0, c1 = s.h1 > 0.0;
  const int cx = s.cx, cy = s.cy;
  __m256d UX = _mm256_setzero_pd(), UY = UX, UZ = UX;
  __m256d DMIN = _mm256_set1_pd(DBL_MAX), DMAX = _mm256_setzero_pd();
  const long kv = k0 + (k1 - k0) / 4 * 4;  // the last < 4 sources: the portable tile
  for (long k = k0; k < kv; k += 4) {
    __m256d sx = _mm256_loadu_pd(s.x + k), sy = _mm256_loadu_pd(s.y + k);
    if (c0) sx = _mm256_add_pd(sx, centre_shift(TX, sx, Z0, H0, NH0, PL0));
    if (c1) sy = _mm256_add_pd(sy, centre_shift(TY, sy, Z1, H1, NH1, PL1));
    const __m256d rx0 = _mm256_sub_pd(TX, sx), ry0 = _mm256_sub_pd(TY, sy);
    const __m256d rz = _mm256_sub_pd(TZ, _mm256_loadu_pd(s.z + k));
    const __m256d ax = _mm256_loadu_pd(s.qx + k), ay = _mm256_loadu_pd(s.qy + k), az = _mm256_loadu_pd(s.qz + k);
    const __m256d rz2e = _mm256_fmadd_pd(rz, rz, EPS);
    const __m256d ayrz = _mm256_mul_pd(ay, rz), axrz = _mm256_mul_pd(ax, rz);
    for (int ia = 0; ia < cx; ++ia) {
      const __m256d rx = _mm256_sub_pd(rx0, _mm256_set1_pd(s.ox[ia]));
      const __m256d dx = _mm256_fmadd_pd(rx, rx, rz2e);
      const __m256d vy = _mm256_fmsub_pd(az, rx, axrz);  // (q × r)_y = qz·rx − qx·rz
      const __m256d ayrx = _mm256_mul_pd(ay, rx);
#pragma GCC unroll 3
      for (int ib = 0; ib < cy; ++ib) {
        const __m256d ry = _mm256_sub_pd(ry0, _mm256_set1_pd(s.oy[ib]));
        const __m256d d = _mm256_fmadd_pd(ry, ry, dx);
        if constexpr (Track) {
          DMIN = _mm256_min_pd(DMIN, d);
          DMAX = _mm256_max_pd(DMAX, d);
        }
        const __m256d f = inv_pow_three_halves_avx2(d);
        UX = _mm256_fmadd_pd(_mm256_fnmadd_pd(az, ry, ayrz), f, UX);  // qy·rz − qz·ry
        UY = _mm256_fmadd_pd(vy, f, UY);
        UZ = _mm256_fmadd_pd(_mm256_fmsub_pd(ax, ry, ayrx), f, UZ);  // qx·ry − qy·rx
      }
    }
  }
  // Every d (NaN aside, which propagates to u as in br_pair) within the float estimate's range?
  const __m256d bad = _mm256_or_pd(_mm256_cmp_pd(DMIN, _mm256_set1_pd(FLT_MIN), _CMP_LT_OQ),
                                   _mm256_cmp_pd(DMAX, _mm256_set1_pd(FLT_MAX), _CMP_GT_OQ));
  if (Track && kv > k0 && _mm256_movemask_pd(bad) != 0) {
    br_tile_portable(s, tx, ty, tz, k0, kv, u);
  } else if (kv > k0) {
    u[0] += hsum(UX);
    u[1] += hsum(UY);
    u[2] += hsum(UZ);
  }
  if (kv < k1) br_tile_portable(s, tx, ty, tz, kv, k1, u);
}

__attribute__((target("avx2,fma")))
void br_tile_avx2(const BRTileSources& s, double tx, double ty, double tz, long k0, long k1, double* u) {
  if (s.in_range) tile_avx2<false>(s, tx, ty, tz, k0, k1, u);
  else tile_avx2<true>(s, tx, ty, tz, k0, k1, u);
}

}  // namespace beatnik::model::detail
