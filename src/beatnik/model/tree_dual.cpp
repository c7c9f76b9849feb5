// Target points and the downward interpolation of the cluster–cluster terms (tree_dual.hpp).
#include "beatnik/model/tree_dual.hpp"

#include <algorithm>
#include <vector>

#include "beatnik/model/tree_interp.hpp"
#include "beatnik/model/tree_lagrange.hpp"

namespace beatnik::model::tree {

void target_points(const search::Cluster& B, const int* dg, double* x, double* y, double* z) {
  double s[3][kTreeMaxDegree + 1], w[3][kTreeMaxDegree + 1];
  for (int d = 0; d < 3; ++d) chebyshev(B.lo[d], B.hi[d], dg[d], s[d], w[d]);
  const int n1 = dg[1] + 1, n2 = dg[2] + 1;
  for (int a = 0; a <= dg[0]; ++a)
    for (int b = 0; b <= dg[1]; ++b)
      for (int e = 0; e <= dg[2]; ++e) {
        const int idx = (a * n1 + b) * n2 + e;
        x[idx] = s[0][a];
        y[idx] = s[1][b];
        z[idx] = s[2][e];
      }
}

namespace {

typedef double v4d __attribute__((vector_size(32)));
typedef double v4du __attribute__((vector_size(32), aligned(8)));  // in a vector of doubles
typedef long v4l __attribute__((vector_size(32)));
constexpr int kLanes = 4;

// lagrange() at four points x[0..3] at once, lane l holding point l's values: the same
// operations per lane (so the same bits); a point on a node takes lagrange() itself.
__attribute__((always_inline)) inline void lagrange4(const double* x, int n, const double* s, const double* w,
                                                    v4d* out) {
  const v4d X = {x[0], x[1], x[2], x[3]};
  v4l node = {0, 0, 0, 0};
  for (int j = 0; j <= n; ++j) node |= X == s[j];
  if (node[0] | node[1] | node[2] | node[3]) {
    double L[kTreeMaxDegree + 1];
    for (int l = 0; l < kLanes; ++l) {
      lagrange(x[l], n, s, w, L);
      for (int j = 0; j <= n; ++j) out[j][l] = L[j];
    }
    return;
  }
  v4d den = {0.0, 0.0, 0.0, 0.0};
  for (int j = 0; j <= n; ++j) {
    out[j] = w[j] / (X - s[j]);
    den += out[j];
  }
  for (int j = 0; j <= n; ++j) out[j] /= den;
}

// interpolate_down with four targets in the lanes: each lane the scalar loop's operations in
// its order (products and sums unfused), so every clone, and the one-target loop it replaced,
// give the same bits; the one-target loop (chains of dependent additions) took about 2.8× as long.
__attribute__((target_clones("arch=x86-64-v3", "default"), optimize("fp-contract=off")))
void down_lanes(const search::Cluster& B, const int* dg, const double* U, int m, const double* x, const double* y,
                const double* z, long n, double* ux, double* uy, double* uz) {
  constexpr int K = kTreeMaxDegree + 1;
  double s[3][K], w[3][K];
  for (int d = 0; d < 3; ++d) chebyshev(B.lo[d], B.hi[d], dg[d], s[d], w[d]);
  const int n0 = dg[0] + 1, n1 = dg[1] + 1, n2 = dg[2] + 1;
  v4d L[3][K];
  thread_local std::vector<double> Vs;  // Σ over the z side, per (r, a, b): kLanes doubles each
  Vs.resize(kLanes * 3 * size_t(n0) * n1);
  v4du* V = reinterpret_cast<v4du*>(Vs.data());
  for (long t0 = 0; t0 < n; t0 += kLanes) {
    const int nl = static_cast<int>(std::min<long>(kLanes, n - t0));
    double p[3][kLanes];  // the targets (the last one repeated in unused lanes)
    for (int l = 0; l < kLanes; ++l) {
      const long t = t0 + std::min(l, nl - 1);
      p[0][l] = x[t], p[1][l] = y[t], p[2][l] = z[t];
    }
    for (int d = 0; d < 3; ++d) lagrange4(p[d], dg[d], s[d], w[d], L[d]);
    for (int r = 0; r < 3; ++r) {
      const double* u = U + size_t(r) * m;
      for (int ab = 0; ab < n0 * n1; ++ab) {
        v4d v = {0.0, 0.0, 0.0, 0.0};
        for (int e = 0; e < n2; ++e) v += L[2][e] * u[ab * n2 + e];
        V[r * n0 * n1 + ab] = v;
      }
    }
    v4d out[3];
    for (int r = 0; r < 3; ++r) {
      v4d sum = {0.0, 0.0, 0.0, 0.0};
      for (int a = 0; a < n0; ++a) {
        v4d v = {0.0, 0.0, 0.0, 0.0};
        for (int b = 0; b < n1; ++b) v += L[1][b] * V[r * n0 * n1 + a * n1 + b];
        sum += L[0][a] * v;
      }
      out[r] = sum;
    }
    for (int l = 0; l < nl; ++l) {
      ux[t0 + l] += out[0][l];
      uy[t0 + l] += out[1][l];
      uz[t0 + l] += out[2][l];
    }
  }
}

}  // namespace

void interpolate_down(const search::Cluster& B, const int* dg, const double* U, int m, const double* x,
                      const double* y, const double* z, long n, double* ux, double* uy, double* uz) {
  down_lanes(B, dg, U, m, x, y, z, n, ux, uy, uz);
}

}  // namespace beatnik::model::tree
