// Host version of the Birkhoff–Rott block: threads over chunks of targets, sources in tiles
// small enough for L1, and per target a tile function (br_host_kernel.hpp, chosen at run
// time): scalar, portable `omp simd` and AVX-512 loops here (the images of a target are the
// outer loops, so one SIMD pass has a fixed offset), AVX2 + FMA in br_block_host_avx2.cpp.
// GCC 12's AVX-512 headers trip -Wuninitialized in the masked loads and reductions (a known
// false positive of their inline helpers).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "beatnik/base/env.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/model/br_avx2_math.hpp"
#include "beatnik/model/br_block_host_tiles.hpp"
#include "beatnik/model/br_avx512_math.hpp"
#include "beatnik/model/br_host_kernel.hpp"

namespace beatnik::model {
namespace {

constexpr long kTargetChunk = 32;  // targets per thread task
constexpr long kSourceTile = 512;  // 512 sources × 48 bytes fit in a 32 KiB L1

// One target against sources [k0, k1) with image offset (ox, oy); returns the sum in u.
// Compiled for AVX-512, AVX2 and baseline, chosen at load time.
__attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
void image_portable(double tx, double ty, double tz, const detail::BRTileSources& s, long k0, long k1, double ox,
                    double oy, double* __restrict u) {
  const double *__restrict xs = s.x, *__restrict ys = s.y, *__restrict zs = s.z;
  const double *__restrict qx = s.qx, *__restrict qy = s.qy, *__restrict qz = s.qz;
  const double L0 = s.L0, h0 = s.h0, L1 = s.L1, h1 = s.h1, eps = s.eps;
  double ux = 0.0, uy = 0.0, uz = 0.0;
#pragma omp simd reduction(+ : ux, uy, uz)
  for (long k = k0; k < k1; ++k) {
    const double sx = xs[k] + image_centre(tx - xs[k], L0, h0) + ox;
    const double sy = ys[k] + image_centre(ty - ys[k], L1, h1) + oy;
    br_pair(tx, ty, tz, sx, sy, zs[k], qx[k], qy[k], qz[k], eps, ux, uy, uz);
  }
  u[0] += ux;
  u[1] += uy;
  u[2] += uz;
}

// The reference: br_pair in a plain loop, one pair at a time (the kernel benchmark's
// "scalar"; the tests' serial sums restate it).
#if defined(__clang__)
void image_scalar(double tx, double ty, double tz, const detail::BRTileSources& s, long k0, long k1, double ox,
                  double oy, double* u) {
#pragma clang loop vectorize(disable)
#else
__attribute__((optimize("no-tree-vectorize"))) void image_scalar(double tx, double ty, double tz,
                                                                   const detail::BRTileSources& s, long k0, long k1,
                                                                   double ox, double oy, double* u) {
#endif
  for (long k = k0; k < k1; ++k) {
    const double sx = s.x[k] + image_centre(tx - s.x[k], s.L0, s.h0) + ox;
    const double sy = s.y[k] + image_centre(ty - s.y[k], s.L1, s.h1) + oy;
    br_pair(tx, ty, tz, sx, sy, s.z[k], s.qx[k], s.qy[k], s.qz[k], s.eps, u[0], u[1], u[2]);
  }
}

// image_centre(t − x, L, h) per lane: (r + ζL ≥ h ? L : 0) − (r + ζL < −h ? L : 0), exact comparisons.
__attribute__((target("avx512f"), always_inline)) inline __m512d centre_avx512(__m512d t, __m512d x, __m512d z,
                                                                               __m512d h, __m512d nh, __m512d L) {
  const __m512d r = _mm512_add_pd(_mm512_sub_pd(t, x), z), zero = _mm512_setzero_pd();
  const __m512d up = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(r, h, _CMP_GE_OQ), zero, L);
  const __m512d dn = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(r, nh, _CMP_LT_OQ), zero, L);
  return _mm512_sub_pd(up, dn);
}

}  // namespace

namespace detail {

// The per-image loops over every image of the target (the images outermost).
void br_tile_portable(const BRTileSources& s, double tx, double ty, double tz, long k0, long k1, double* u) {
  for (int ia = 0; ia < s.cx; ++ia)
    for (int ib = 0; ib < s.cy; ++ib) image_portable(tx, ty, tz, s, k0, k1, s.ox[ia], s.oy[ib], u);
}
void br_tile_scalar(const BRTileSources& s, double tx, double ty, double tz, long k0, long k1, double* u) {
  for (int ia = 0; ia < s.cx; ++ia)
    for (int ib = 0; ib < s.cy; ++ib) image_scalar(tx, ty, tz, s, k0, k1, s.ox[ia], s.oy[ib], u);
}

// One target against sources [k0, k1) and every image, with AVX-512 intrinsics, 8 sources per
// step: as the AVX2 tile (br_block_host_avx2.cpp), the loads, the image centring and the parts of
// r, |r|² + ε and q × r that do not depend on the image are formed once per step and the images
// are the inner loops; 1/d^{3/2} from the 14-bit reciprocal square root estimate refined by two
// Newton steps (error ~1e-16 relative, like sqrt + division). The tail is a masked step whose
// idle lanes add nothing. (The images outermost, each recentring and reloading the sources,
// this tile ran at 6.13e8 pair-images a CPU-second on a Xeon where the AVX2 tile ran at 8.15e8.)
__attribute__((target("avx512f")))
void br_tile_avx512(const BRTileSources& s, double tx, double ty, double tz, long k0, long k1,
                    double* __restrict u) {
  const double *__restrict xs = s.x, *__restrict ys = s.y, *__restrict zs = s.z;
  const double *__restrict qx = s.qx, *__restrict qy = s.qy, *__restrict qz = s.qz;
  const __m512d TX = _mm512_set1_pd(tx), TY = _mm512_set1_pd(ty), TZ = _mm512_set1_pd(tz);
  const __m512d EPS = _mm512_set1_pd(s.eps), ZERO = _mm512_setzero_pd();
  const __m512d PL0 = _mm512_set1_pd(s.L0), H0 = _mm512_set1_pd(s.h0), NH0 = _mm512_set1_pd(-s.h0);
  const __m512d PL1 = _mm512_set1_pd(s.L1), H1 = _mm512_set1_pd(s.h1), NH1 = _mm512_set1_pd(-s.h1);
  const __m512d Z0 = _mm512_set1_pd(kCentringShift * s.L0), Z1 = _mm512_set1_pd(kCentringShift * s.L1);
  const bool c0 = s.h0 > 0.0, c1 = s.h1 > 0.0;
  const int cx = s.cx, cy = s.cy;
  __m512d UX = ZERO, UY = ZERO, UZ = ZERO;
  for (long k = k0; k < k1; k += 8) {
    const __mmask8 m = k1 - k >= 8 ? __mmask8(0xff) : __mmask8((1u << (k1 - k)) - 1);
    __m512d sx = _mm512_maskz_loadu_pd(m, xs + k), sy = _mm512_maskz_loadu_pd(m, ys + k);
    if (c0) sx = _mm512_add_pd(sx, centre_avx512(TX, sx, Z0, H0, NH0, PL0));
    if (c1) sy = _mm512_add_pd(sy, centre_avx512(TY, sy, Z1, H1, NH1, PL1));
    const __m512d rx0 = _mm512_sub_pd(TX, sx), ry0 = _mm512_sub_pd(TY, sy);
    const __m512d rz = _mm512_sub_pd(TZ, _mm512_maskz_loadu_pd(m, zs + k));
    const __m512d ax = _mm512_maskz_loadu_pd(m, qx + k), ay = _mm512_maskz_loadu_pd(m, qy + k),
                  az = _mm512_maskz_loadu_pd(m, qz + k);
    const __m512d rz2e = _mm512_fmadd_pd(rz, rz, EPS);
    const __m512d ayrz = _mm512_mul_pd(ay, rz), axrz = _mm512_mul_pd(ax, rz);
    for (int ia = 0; ia < cx; ++ia) {
      const __m512d rx = _mm512_sub_pd(rx0, _mm512_set1_pd(s.ox[ia]));
      const __m512d dx = _mm512_fmadd_pd(rx, rx, rz2e);
      const __m512d vy = _mm512_fmsub_pd(az, rx, axrz);  // (q × r)_y = qz·rx − qx·rz
      const __m512d ayrx = _mm512_mul_pd(ay, rx);
#pragma GCC unroll 3
      for (int ib = 0; ib < cy; ++ib) {
        const __m512d ry = _mm512_sub_pd(ry0, _mm512_set1_pd(s.oy[ib]));
        const __m512d f = inv_pow_three_halves_avx512(_mm512_fmadd_pd(ry, ry, dx));
        UX = _mm512_mask3_fmadd_pd(_mm512_fnmadd_pd(az, ry, ayrz), f, UX, m);  // qy·rz − qz·ry
        UY = _mm512_mask3_fmadd_pd(vy, f, UY, m);
        UZ = _mm512_mask3_fmadd_pd(_mm512_fmsub_pd(ax, ry, ayrx), f, UZ, m);  // qx·ry − qy·rx
      }
    }
  }
  u[0] += _mm512_reduce_add_pd(UX);
  u[1] += _mm512_reduce_add_pd(UY);
  u[2] += _mm512_reduce_add_pd(UZ);
}

}  // namespace detail

namespace {

detail::BRTileFn tile_of(BRHostKernel k) {
  switch (k) {
    case BRHostKernel::Scalar: return detail::br_tile_scalar;
    case BRHostKernel::Portable: return detail::br_tile_portable;
    case BRHostKernel::Avx2: return detail::br_tile_avx2;
    case BRHostKernel::Avx512: return detail::br_tile_avx512;
  }
  return detail::br_tile_portable;
}

}  // namespace

const char* to_string(BRHostKernel k) {
  switch (k) {
    case BRHostKernel::Scalar: return "scalar";
    case BRHostKernel::Portable: return "portable-simd";
    case BRHostKernel::Avx2: return "avx2-fma";
    case BRHostKernel::Avx512: return "avx512";
  }
  return "?";
}

bool br_host_kernel_supported(BRHostKernel k) {
  __builtin_cpu_init();
  switch (k) {
    case BRHostKernel::Scalar:
    case BRHostKernel::Portable: return true;
    case BRHostKernel::Avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case BRHostKernel::Avx512: return __builtin_cpu_supports("avx512f");
  }
  return false;
}

std::vector<BRHostKernel> br_host_kernels_supported() {
  std::vector<BRHostKernel> v;
  for (BRHostKernel k : {BRHostKernel::Scalar, BRHostKernel::Portable, BRHostKernel::Avx2, BRHostKernel::Avx512})
    if (br_host_kernel_supported(k)) v.push_back(k);
  return v;
}

BRHostKernel br_host_kernel_default() {
  static const BRHostKernel k = [] {
    const BRHostKernel best = br_host_kernel_supported(BRHostKernel::Avx512) ? BRHostKernel::Avx512
                              : br_host_kernel_supported(BRHostKernel::Avx2) ? BRHostKernel::Avx2
                                                                              : BRHostKernel::Portable;
    // BEATNIK_HOST_KERNEL: another supported path, for A/B measurements (an AVX2 host's kernels
    // timed on an AVX-512 one).
    const std::optional<std::string> asked = env::choice("BEATNIK_HOST_KERNEL", {"avx512", "avx2", "portable"});
    if (!asked) return best;
    const BRHostKernel a = *asked == "avx512" ? BRHostKernel::Avx512
                           : *asked == "avx2" ? BRHostKernel::Avx2
                                              : BRHostKernel::Portable;
    if (!br_host_kernel_supported(a))
      throw NotAvailable("BEATNIK_HOST_KERNEL=" + *asked + ": this CPU lacks " +
                         (a == BRHostKernel::Avx512 ? "AVX-512F" : "AVX2 and FMA"));
    return a;
  }();
  return k;
}

// One target, one image (the tree solver's near and far sums): the run's default kernel.
void br_tile_host(double tx, double ty, double tz, const double* xs, const double* ys, const double* zs,
                  const double* qx, const double* qy, const double* qz, long k0, long k1, double ox, double oy,
                  double L0, double h0, double L1, double h1, double eps, double* u) {
  static const detail::BRTileFn tile = tile_of(br_host_kernel_default());
  const detail::BRTileSources s{xs, ys, zs, qx, qy, qz, 1, 1, &ox, &oy, L0, h0, L1, h1, eps};
  tile(s, tx, ty, tz, k0, k1, u);
}

// The AVX2 tile's range check, once for the block (pairs_in_float_range): the largest |coordinate|
// of its targets and of its sources moved by the farthest image and the centring shift. O(N) here
// against the tile's O(N²) pairs; NaN is passed over (it propagates through either path alike).
static bool block_in_float_range(const BRBlockArgs& a, const detail::BRTileSources& s) {
  const auto largest = [](const double* x, long k0, long k1, double a0) {
    for (long k = k0; k < k1; ++k) a0 = std::fabs(x[k]) > a0 ? std::fabs(x[k]) : a0;
    return a0;
  };
  double t = 0.0, src = 0.0, o = std::fabs(s.L0) + std::fabs(s.L1);
  for (int d = 0; d < 3; ++d) t = largest(a.targets + d * a.nt, a.t0, a.t1, t);
  for (const double* x : {s.x, s.y, s.z}) src = largest(x, 0, a.ns, src);
  o += largest(s.ox, 0, s.cx, 0.0) + largest(s.oy, 0, s.cy, 0.0);
  return pairs_in_float_range(t, src + o, s.eps);
}

void br_block_host(const BRBlockArgs& a) { br_block_host(a, br_host_kernel_default()); }

void br_block_host(const BRBlockArgs& a, BRHostKernel kernel) {
  if (!br_host_kernel_supported(kernel))
    throw NotAvailable(std::string("BR host kernel ") + to_string(kernel) + " is not supported by this CPU");
  const long nt = a.nt, ns = a.ns;
  const double *tx = a.targets, *ty = tx + nt, *tz = ty + nt;
  const BRImages img = a.images;
  std::vector<double> ox(img.count(0)), oy(img.count(1));
  for (int i = 0; i < img.count(0); ++i) ox[i] = img.offset(0, i);
  for (int i = 0; i < img.count(1); ++i) oy[i] = img.offset(1, i);
  const double* src = a.sources;
  detail::BRTileSources s{src,          src + ns,        src + 2 * ns,        src + 3 * ns,
                                src + 4 * ns, src + 5 * ns,    img.count(0),        img.count(1),
                                ox.data(),    oy.data(),       img.period[0],       img.centring_half(0),
                                img.period[1], img.centring_half(1), a.eps};
  if (kernel == BRHostKernel::Avx2) s.in_range = block_in_float_range(a, s);
  const detail::BRTileFn tile = tile_of(kernel);
  const long chunks = (a.t1 - a.t0 + kTargetChunk - 1) / kTargetChunk;
#pragma omp parallel for schedule(dynamic, 1)
  for (long c = 0; c < chunks; ++c) {
    const long b0 = a.t0 + c * kTargetChunk, b1 = std::min(a.t1, b0 + kTargetChunk);
    double u[kTargetChunk][3] = {};
    for (long k0 = 0; k0 < ns; k0 += kSourceTile) {
      const long k1 = std::min(ns, k0 + kSourceTile);
      for (long t = b0; t < b1; ++t) tile(s, tx[t], ty[t], tz[t], k0, k1, u[t - b0]);
    }
    for (long t = b0; t < b1; ++t) {
      a.acc[t] += u[t - b0][0];
      a.acc[nt + t] += u[t - b0][1];
      a.acc[2 * nt + t] += u[t - b0][2];
    }
  }
}

}  // namespace beatnik::model
