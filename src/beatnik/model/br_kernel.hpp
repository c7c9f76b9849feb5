#pragma once
// The desingularised Birkhoff–Rott pair interaction (MODEL.md §7, VALIDATION §1.2) and the
// image rules of the two profiles (DECISIONS.md). br_pair is the reference form: the portable
// host loop calls it; the AVX-512 host loop and the device kernel restate the same arithmetic
// with cheaper instructions (br_block_host.cpp, br_block_device.cpp).
//
//   u_i += q_k × r / (|r|² + ε)^{3/2},   r = z_i − (z_k + o),   q_k = −(ΔxΔy·W_k/4π)·ω_k
//
// The source strength q_k (ω times weight times −ΔxΔy/4π) is formed once when a source block
// is packed, so the pair function is pure geometry. ε is added to |r|² unsquared.
// One pair-image interaction costs 25 floating-point operations plus one sqrt and one
// division: 27 counting those as one each (docs/br.md).
#include <cmath>

#include "beatnik/exec/macros.hpp"

namespace beatnik::model {

// How periodic images are summed (per dimension with a non-zero period).
struct BRImages {
  int k = 1;             // images a ∈ centre + {−k..k}
  bool centred = true;   // centre = nearest image of the pair (consistent); else centre 0 (beatnik)
  double period[2] = {0.0, 0.0};  // 0: that dimension is not periodic (a single image)
  BEATNIK_HOST_DEVICE int count(int d) const { return period[d] > 0.0 ? 2 * k + 1 : 1; }
  // Offset of image number a (0..count−1) relative to the centre.
  BEATNIK_HOST_DEVICE double offset(int d, int a) const { return period[d] > 0.0 ? (a - k) * period[d] : 0.0; }
  // Half period used for centring (0: no centring in this dimension).
  BEATNIK_HOST_DEVICE double centring_half(int d) const { return centred ? 0.5 * period[d] : 0.0; }
};

// Accumulate the velocity that source (s, q) induces at target t through image offset (ox, oy).
BEATNIK_HOST_DEVICE inline void br_pair(double tx, double ty, double tz, double sx, double sy,
                                        double sz, double qx, double qy, double qz, double eps,
                                        double& ux, double& uy, double& uz) {
  const double rx = tx - sx, ry = ty - sy, rz = tz - sz;
  const double d = rx * rx + ry * ry + rz * rz + eps;
#if defined(__CUDA_ARCH__)
  // Device: the FP64 reciprocal square root (hardware estimate + Newton steps, ~1 ulp) is much
  // cheaper than a square root and a division, which are long instruction sequences on GPUs.
  const double y = rsqrt(d);
  const double f = y * y * y;
#else
  const double f = 1.0 / (d * std::sqrt(d));
#endif
  ux += (qy * rz - qz * ry) * f;
  uy += (qz * rx - qx * rz) * f;
  uz += (qx * ry - qy * rx) * f;
}

// Offset a₀·L of the image centre for separation r along a dimension of period L: the nearest
// image, a₀ = ⌊r/L + ½ + ζ⌋ with ζ = kCentringShift (DECISIONS.md has ζ = 0). The window jumps
// by one image where r/L + ½ + ζ is an integer. With ζ = 0 that is r = ±L/2, where every pair of
// an even grid half a period apart sits, so round-off (host against device, one decomposition
// against another) would pick different windows as soon as the surface moves. ζ = 2⁻²⁰ moves
// the jump off every mesh lattice (N < 2²⁰) and leaves the centre of every lattice pair as
// DECISIONS.md's. Written with exact comparisons (no rounded division) so host and device agree.
// Exact for |r| < 3L/2; beyond that the block is centred on a farther image (still 2K+1
// images). half = L/2 (0 for a non-periodic dimension).
inline constexpr double kCentringShift = 0x1p-20;
BEATNIK_HOST_DEVICE inline double image_centre(double r, double L, double half) {
  const double s = r + kCentringShift * L;
  return half > 0.0 ? (s >= half ? L : 0.0) - (s < -half ? L : 0.0) : 0.0;
}

// Quadrature weights per dimension (DECISIONS.md): trapezoid on a free dimension, uniform on
// a periodic one (consistent profile); the reference's composite Simpson-3/8 rule on the
// global index with the reference's length (beatnik profile, MODEL.md §7).
BEATNIK_HOST_DEVICE inline double simpson38_weight(int i, int len) {
  return (i == 0 || i == len - 1) ? 0.375 : (i % 3 == 0 ? 0.75 : 1.125);
}
BEATNIK_HOST_DEVICE inline double trapezoid_weight(int i, int n, bool periodic) {
  return (!periodic && (i == 0 || i == n - 1)) ? 0.5 : 1.0;
}

// The quadrature weight W of global node (g, h) under the run's profile (both solvers).
struct BRWeights {
  int simpson_len = 0;  // > 0: Simpson-3/8 with this length (beatnik); 0: uniform/trapezoid
  int nodes[2] = {0, 0};
  bool periodic[2] = {true, true};
  BEATNIK_HOST_DEVICE double operator()(int g, int h) const {
    return simpson_len > 0 ? simpson38_weight(g, simpson_len) * simpson38_weight(h, simpson_len)
                           : trapezoid_weight(g, nodes[0], periodic[0]) * trapezoid_weight(h, nodes[1], periodic[1]);
  }
};

}  // namespace beatnik::model
