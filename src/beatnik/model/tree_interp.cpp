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
int side_degree(int p, double theta, double w, double wmax) {
  if (!(w > 0.0) || !(wmax > 0.0)) return 0;
  if (w >= wmax || !(theta > 0.0 && theta < 1.0)) return p;
  const double ratio = std::log(theta) / std::log(theta * w / wmax);
  return std::clamp(static_cast<int>(std::ceil(p * ratio)), 0, p);
}

// q̂_abc += L_a(x) L_b(y) L_c(z)·q for one source (L: its basis values per side; q̂: [x|y|z], m each).
// Per a, the weights of the (b, c) plane first, then each component's plane as one contiguous loop
// that vectorises (a flat cluster has one c per b, where a loop over c alone does not); the same
// products (L_a·L_b)·L_c and sums as term by term, so the same bits in every clone (no contraction
// to FMA in the AVX2 one).
__attribute__((target_clones("arch=x86-64-v3", "default"), optimize("fp-contract=off")))
void add_source(const double (*L)[kTreeMaxDegree + 1], const int* dg, const double* qk, double* q, int m) {
  const int n1 = dg[1] + 1, n2 = dg[2] + 1, plane = n1 * n2;
  double f[(kTreeMaxDegree + 1) * (kTreeMaxDegree + 1)];
  for (int a = 0; a <= dg[0]; ++a) {
    for (int b = 0; b < n1; ++b) {
      const double lab = L[0][a] * L[1][b];
      for (int e = 0; e < n2; ++e) f[b * n2 + e] = lab * L[2][e];
    }
    for (int r = 0; r < 3; ++r) {
      double* qa = q + r * m + a * plane;
      const double c = qk[r];
#pragma omp simd
      for (int j = 0; j < plane; ++j) qa[j] += f[j] * c;
    }
  }
}

}  // namespace

// Degrees per side of cluster C's proxy grid for degree p valid to ratio theta; returns the
// number of proxies.
int grid_degrees(const search::Cluster& C, int p, double theta, int* dg) {
  double wmax = 0.0;
  for (int d = 0; d < 3; ++d) wmax = std::max(wmax, C.hi[d] - C.lo[d]);
  int m = 1;
  for (int d = 0; d < 3; ++d) {
    dg[d] = side_degree(p, theta, C.hi[d] - C.lo[d], wmax);
    m *= dg[d] + 1;
  }
  return m;
}

// The m = Π(dg+1) proxy sources of C's grid at px ([x|y|z|qx|qy|qz], m each) from the point
// sources [k0, k1) of src (SoA, `stride` entries each): q̂_abc = Σ L_a(x)L_b(y)L_c(z)·q.
void interpolate(const search::Cluster& C, const int* dg, const double* src, long stride, long k0, long k1,
                 double* px, int m) {
  double s[3][kTreeMaxDegree + 1], w[3][kTreeMaxDegree + 1], L[3][kTreeMaxDegree + 1];
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
  double* q = px + 3 * m;
  std::fill(q, q + 3 * m, 0.0);
  for (long k = k0; k < k1; ++k) {
    for (int d = 0; d < 3; ++d) lagrange(src[d * stride + k], dg[d], s[d], w[d], L[d]);
    const double qk[3] = {src[3 * stride + k], src[4 * stride + k], src[5 * stride + k]};
    add_source(L, dg, qk, q, m);
  }
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
  double s[3][kTreeMaxDegree + 1], w[3][kTreeMaxDegree + 1], L[3][kTreeMaxDegree + 1];
  for (int d = 0; d < 3; ++d) chebyshev(C.lo[d], C.hi[d], dg[d], s[d], w[d]);
  const int m = (dg[0] + 1) * (dg[1] + 1) * (dg[2] + 1);
  std::vector<double> q(3 * size_t(m), 0.0);  // the running sum, in source order
  std::fill(prefix, prefix + 3 * m, 0.0);
  long row = 1;
  for (long k = 0; k < n; ++k) {
    for (int d = 0; d < 3; ++d) lagrange(src[d * n + k], dg[d], s[d], w[d], L[d]);
    const double qk[3] = {src[3 * n + k], src[4 * n + k], src[5 * n + k]};
    add_source(L, dg, qk, q.data(), m);
    if ((k + 1) % block == 0) std::copy(q.begin(), q.end(), prefix + 3L * m * row++);
  }
}

}  // namespace beatnik::model::tree
