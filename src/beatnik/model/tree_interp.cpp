// Barycentric Lagrange interpolation at Chebyshev points for the tree solver's proxy sets
// (tree_interp.hpp; docs/tree.md "Method").
#include "beatnik/model/tree_interp.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "beatnik/model/tree_lagrange.hpp"

namespace beatnik::model::tree {
namespace {


// Interpolation degree along a side of width w of a box whose longest side is wmax: p on the
// longest side, fewer on a thin side, so that (w/R)^{p_d} ≈ (wmax/R)^p at R = wmax/θ; 0 (one
// point) on a flat side.
// log_theta: grid_log_theta(theta), formed once by the caller (the same double, so the same degrees).
int side_degree(int p, double theta, double log_theta, double w, double wmax) {
  if (!(w > 0.0) || !(wmax > 0.0)) return 0;
  if (w >= wmax || !(theta > 0.0 && theta < 1.0)) return p;
  const double ratio = log_theta / std::log(theta * w / wmax);
  return std::clamp(static_cast<int>(std::ceil(p * ratio)), 0, p);
}

// The factors of sources [i0, i0 + nk) of src (`stride` per column) for add_block: la[k][a] =
// L_a(x) and h[k][r·wp + bc] = (L_b(y)·L_c(z))·q_r (the padding of h untouched). Cloned so that
// the Lagrange values' divisions and the products vectorise; the same operations in every clone.
// Host only: the device keeps lagrange() (tree_lagrange.hpp), the same values to round-off.
__attribute__((target_clones("arch=x86-64-v3", "default"), optimize("fp-contract=off")))
void block_factors(const double* src, long stride, long i0, long nk, const int* dg,
                   const double (*s)[kTreeMaxDegree + 1], const double (*w)[kTreeMaxDegree + 1], long wp, double* la,
                   double* h) {
  const int n0 = dg[0] + 1, n1 = dg[1] + 1, n2 = dg[2] + 1, plane = n1 * n2;
  double L[3][kTreeMaxDegree + 1];
  for (long k = 0; k < nk; ++k) {
    const long i = i0 + k;
    for (int d = 0; d < 3; ++d) {
      // lagrange() with one division for the normalisation instead of n + 1 (round-off apart the
      // same values; the divisions were most of the time here). At a node w/0 is infinite, so a
      // sum that is not finite and nonzero (a node, or an overflow) takes lagrange() itself.
      const double x = src[d * stride + i];
      double den = 0.0;
      for (int j = 0; j <= dg[d]; ++j) {
        L[d][j] = w[d][j] / (x - s[d][j]);
        den += L[d][j];
      }
      if (std::isfinite(den) && den != 0.0) {
        const double r = 1.0 / den;
        for (int j = 0; j <= dg[d]; ++j) L[d][j] *= r;
      } else {
        lagrange(x, dg[d], s[d], w[d], L[d]);
      }
    }
    for (int a = 0; a < n0; ++a) la[k * n0 + a] = L[0][a];
    double* hk = h + k * 3 * wp;
    for (int b = 0; b < n1; ++b)
      for (int e = 0; e < n2; ++e) hk[b * n2 + e] = L[1][b] * L[2][e];
    const double q1 = src[4 * stride + i], q2 = src[5 * stride + i], q0 = src[3 * stride + i];
    for (int bc = 0; bc < plane; ++bc) {
      hk[wp + bc] = hk[bc] * q1;
      hk[2 * wp + bc] = hk[bc] * q2;
      hk[bc] *= q0;
    }
  }
}

// q[a][j] += Σ_k la[k][a]·h[k][j] for a < na, j < width (a multiple of 8), k < nk: a block of
// sources added to the proxies' running sums at once (interpolate, interpolate_prefix). Four rows
// of q and eight columns stay in registers over the block's sources (one source at a time loaded
// and stored all of q per source). Each sum in source order, products and sums unfused, so every
// clone gives the same bits.
typedef double v4d __attribute__((vector_size(32)));
typedef double v4du __attribute__((vector_size(32), aligned(8)));  // an unaligned load or store

template <int A>
__attribute__((always_inline)) inline void add_rows(const double* la, int na, const double* h, long width, long nk,
                                                    double* q) {
  for (long j = 0; j < width; j += 8) {
    v4d acc[A][2];
    for (int i = 0; i < A; ++i) {
      acc[i][0] = *reinterpret_cast<const v4du*>(q + i * width + j);
      acc[i][1] = *reinterpret_cast<const v4du*>(q + i * width + j + 4);
    }
    for (long k = 0; k < nk; ++k) {
      const v4d h0 = *reinterpret_cast<const v4du*>(h + k * width + j);
      const v4d h1 = *reinterpret_cast<const v4du*>(h + k * width + j + 4);
      for (int i = 0; i < A; ++i) {
        const double l = la[k * na + i];
        acc[i][0] += l * h0;
        acc[i][1] += l * h1;
      }
    }
    for (int i = 0; i < A; ++i) {
      *reinterpret_cast<v4du*>(q + i * width + j) = acc[i][0];
      *reinterpret_cast<v4du*>(q + i * width + j + 4) = acc[i][1];
    }
  }
}

__attribute__((target_clones("arch=x86-64-v3", "default"), optimize("fp-contract=off")))
void add_block(const double* la, int na, const double* h, long width, long nk, double* q) {
  int a = 0;
  for (; a + 4 <= na; a += 4) add_rows<4>(la + a, na, h, width, nk, q + a * width);
  switch (na - a) {
    case 3: add_rows<3>(la + a, na, h, width, nk, q + a * width); break;
    case 2: add_rows<2>(la + a, na, h, width, nk, q + a * width); break;
    case 1: add_rows<1>(la + a, na, h, width, nk, q + a * width); break;
    default: break;
  }
}

}  // namespace

// Degrees per side of cluster C's proxy grid for degree p valid to ratio theta; returns the
// number of proxies.
double grid_log_theta(double theta) { return theta > 0.0 && theta < 1.0 ? std::log(theta) : 0.0; }

int grid_degrees(const search::Cluster& C, int p, double theta, int* dg) {
  return grid_degrees(C, p, theta, grid_log_theta(theta), dg);
}

int grid_degrees(const search::Cluster& C, int p, double theta, double log_theta, int* dg) {
  double wmax = 0.0;
  for (int d = 0; d < 3; ++d) wmax = std::max(wmax, C.hi[d] - C.lo[d]);
  int m = 1;
  for (int d = 0; d < 3; ++d) {
    dg[d] = side_degree(p, theta, log_theta, C.hi[d] - C.lo[d], wmax);
    m *= dg[d] + 1;
  }
  return m;
}

// The m = Π(dg+1) proxy sources of C's grid at px ([x|y|z|qx|qy|qz], m each) from the point
// sources [k0, k1) of src (SoA, `stride` entries each): q̂_abc = Σ L_a(x)L_b(y)L_c(z)·q.
void interpolate(const search::Cluster& C, const int* dg, const double* src, long stride, long k0, long k1,
                 double* px, int m) {
  double s[3][kTreeMaxDegree + 1], w[3][kTreeMaxDegree + 1];
  for (int d = 0; d < 3; ++d) chebyshev(C.lo[d], C.hi[d], dg[d], s[d], w[d]);
  const int n1 = dg[1] + 1, n2 = dg[2] + 1;
  for (int a = 0; a <= dg[0]; ++a)
    for (int b = 0; b <= dg[1]; ++b)
      for (int e = 0; e <= dg[2]; ++e) {
        const int idx = (a * n1 + b) * n2 + e;
        px[idx] = s[0][a];
        px[m + idx] = s[1][b];
        px[2 * m + idx] = s[2][e];
      }
  // The sources in blocks of kBlock through add_block, as the prefix rows (interpolate_prefix).
  constexpr long kBlock = 32;
  const int plane = n1 * n2;
  const long wp = (plane + 7) / 8 * 8, width = 3 * wp;
  thread_local std::vector<double> la, h, q;
  la.resize(size_t(kBlock) * (dg[0] + 1));
  h.assign(size_t(kBlock) * width, 0.0);
  q.assign(size_t(dg[0] + 1) * width, 0.0);
  for (long k = k0; k < k1; k += kBlock) {
    const long nk = std::min(kBlock, k1 - k);
    block_factors(src, stride, k, nk, dg, s, w, wp, la.data(), h.data());
    add_block(la.data(), dg[0] + 1, h.data(), width, nk, q.data());
  }
  for (int r = 0; r < 3; ++r)
    for (int a = 0; a <= dg[0]; ++a) std::copy_n(&q[a * width + r * wp], plane, px + (3 + r) * m + a * plane);
}

// The same set from C's proxy grid of degrees P (px, mp proxies) instead of its sources, for a
// grid of degrees D ≤ P per side: a degree-D Lagrange basis is reproduced exactly by degree-P
// interpolation, so Σ_abc L'(s_abc)·q̂_abc = Σ_k L'(x_k)·q_k up to round-off. Applied one side
// at a time: (P+1)³(D+1) operations instead of (P+1)³(D+1)³.
void coarsen(const search::Cluster& C, const int* P, const int* D, const double* px, int mp, double* out, int md) {
  double sp[3][kTreeMaxDegree + 1], wp[3][kTreeMaxDegree + 1], sd[3][kTreeMaxDegree + 1], wd[3][kTreeMaxDegree + 1];
  double M[3][kTreeMaxDegree + 1][kTreeMaxDegree + 1];  // M[d][a'][a] = L'_a'(s_a)
  for (int d = 0; d < 3; ++d) {
    chebyshev(C.lo[d], C.hi[d], P[d], sp[d], wp[d]);
    chebyshev(C.lo[d], C.hi[d], D[d], sd[d], wd[d]);
    double L[kTreeMaxDegree + 1];
    for (int a = 0; a <= P[d]; ++a) {
      lagrange(sp[d][a], D[d], sd[d], wd[d], L);
      for (int b = 0; b <= D[d]; ++b) M[d][b][a] = L[b];
    }
  }
  const int p0 = P[0] + 1, p1 = P[1] + 1, p2 = P[2] + 1, d0 = D[0] + 1, d1 = D[1] + 1, d2 = D[2] + 1;
  for (int a = 0; a < d0; ++a)
    for (int b = 0; b < d1; ++b)
      for (int e = 0; e < d2; ++e) {
        const int idx = (a * d1 + b) * d2 + e;
        out[idx] = sd[0][a];
        out[md + idx] = sd[1][b];
        out[2 * md + idx] = sd[2][e];
      }
  std::vector<double> t1(size_t(d0) * p1 * p2), t2(size_t(d0) * d1 * p2);
  for (int r = 0; r < 3; ++r) {
    const double* q = px + (3 + r) * mp;
    for (int a = 0; a < d0; ++a)
      for (int bc = 0; bc < p1 * p2; ++bc) {
        double v = 0.0;
        for (int k = 0; k < p0; ++k) v += M[0][a][k] * q[k * p1 * p2 + bc];
        t1[size_t(a) * p1 * p2 + bc] = v;
      }
    for (int a = 0; a < d0; ++a)
      for (int b = 0; b < d1; ++b)
        for (int e = 0; e < p2; ++e) {
          double v = 0.0;
          for (int k = 0; k < p1; ++k) v += M[1][b][k] * t1[(size_t(a) * p1 + k) * p2 + e];
          t2[(size_t(a) * d1 + b) * p2 + e] = v;
        }
    double* o = out + (3 + r) * md;
    for (int ab = 0; ab < d0 * d1; ++ab)
      for (int e = 0; e < d2; ++e) {
        double v = 0.0;
        for (int k = 0; k < p2; ++k) v += M[2][e][k] * t2[size_t(ab) * p2 + k];
        o[ab * d2 + e] = v;
      }
  }
}

void interpolate_prefix(const search::Cluster& C, const int* dg, const double* src, long n, long block,
                        double* prefix) {
  double s[3][kTreeMaxDegree + 1], w[3][kTreeMaxDegree + 1];
  for (int d = 0; d < 3; ++d) chebyshev(C.lo[d], C.hi[d], dg[d], s[d], w[d]);
  const int n0 = dg[0] + 1, n1 = dg[1] + 1, n2 = dg[2] + 1, plane = n1 * n2, m = n0 * plane;
  const long wp = (plane + 7) / 8 * 8, width = 3 * wp;  // a row of the running sum: [r][bc], padded
  const long rows = n / block;
  std::fill(prefix, prefix + 3 * m, 0.0);
  if (rows == 0) return;  // the sources after the last full block are in no row
  thread_local std::vector<double> la, h, q;
  la.resize(size_t(block) * n0);
  h.assign(size_t(block) * width, 0.0);  // the padding stays zero
  q.assign(size_t(n0) * width, 0.0);
  for (long j = 1; j <= rows; ++j) {
    block_factors(src, n, (j - 1) * block, block, dg, s, w, wp, la.data(), h.data());
    add_block(la.data(), n0, h.data(), width, block, q.data());
    double* row = prefix + 3L * m * j;
    for (int r = 0; r < 3; ++r)
      for (int a = 0; a < n0; ++a) std::copy_n(&q[a * width + r * wp], plane, row + r * m + a * plane);
  }
}

}  // namespace beatnik::model::tree
