// The tree solver's host pair kernel (br_targets_host.hpp): targets in the SIMD lanes, one
// source broadcast per step, ranges in list order. Scalar (the reference), portable `omp simd`
// (compiled for AVX-512, AVX2 and baseline) and AVX-512 intrinsics.
// GCC 12's AVX-512 headers trip -Wuninitialized in the masked loads (a known false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "beatnik/model/br_targets_host.hpp"

#include <immintrin.h>

#include <string>

#include "beatnik/base/error.hpp"
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

}  // namespace

long br_targets_host(const double* tx, const double* ty, const double* tz, long nt, const BRSourceRange* ranges,
                     int nranges, const BRImages& img, double eps, double* ux, double* uy, double* uz,
                     BRHostKernel kernel) {
  if (!br_host_kernel_supported(kernel))
    throw NotAvailable(std::string("BR host kernel ") + to_string(kernel) + " is not supported by this CPU");
  switch (kernel) {
    case BRHostKernel::Scalar: return targets_scalar(tx, ty, tz, nt, ranges, nranges, img, eps, ux, uy, uz);
    case BRHostKernel::Avx512: return targets_avx512(tx, ty, tz, nt, ranges, nranges, img, eps, ux, uy, uz);
    case BRHostKernel::Portable:
    case BRHostKernel::Avx2: break;
  }
  return targets_portable(tx, ty, tz, nt, ranges, nranges, img, eps, ux, uy, uz);
}

long br_targets_host(const double* tx, const double* ty, const double* tz, long nt, const BRSourceRange* ranges,
                     int nranges, const BRImages& img, double eps, double* ux, double* uy, double* uz) {
  static const BRHostKernel k = br_host_kernel_default();
  return br_targets_host(tx, ty, tz, nt, ranges, nranges, img, eps, ux, uy, uz, k);
}

}  // namespace beatnik::model
