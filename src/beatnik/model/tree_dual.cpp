// Target points and the downward interpolation of the cluster–cluster terms (tree_dual.hpp).
#include "beatnik/model/tree_dual.hpp"

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

void interpolate_down(const search::Cluster& B, const int* dg, const double* U, int m, const double* x,
                      const double* y, const double* z, long n, double* ux, double* uy, double* uz) {
  constexpr int K = kTreeMaxDegree + 1;
  double s[3][K], w[3][K], L[3][K];
  for (int d = 0; d < 3; ++d) chebyshev(B.lo[d], B.hi[d], dg[d], s[d], w[d]);
  const int n0 = dg[0] + 1, n1 = dg[1] + 1, n2 = dg[2] + 1;
  double V[3][K * K];  // Σ over the z side, per (a, b)
  for (long t = 0; t < n; ++t) {
    lagrange(x[t], dg[0], s[0], w[0], L[0]);
    lagrange(y[t], dg[1], s[1], w[1], L[1]);
    lagrange(z[t], dg[2], s[2], w[2], L[2]);
    for (int r = 0; r < 3; ++r) {
      const double* u = U + size_t(r) * m;
      for (int ab = 0; ab < n0 * n1; ++ab) {
        double v = 0.0;
        for (int e = 0; e < n2; ++e) v += L[2][e] * u[ab * n2 + e];
        V[r][ab] = v;
      }
    }
    double out[3];
    for (int r = 0; r < 3; ++r) {
      double sum = 0.0;
      for (int a = 0; a < n0; ++a) {
        double v = 0.0;
        for (int b = 0; b < n1; ++b) v += L[1][b] * V[r][a * n1 + b];
        sum += L[0][a] * v;
      }
      out[r] = sum;
    }
    ux[t] += out[0];
    uy[t] += out[1];
    uz[t] += out[2];
  }
}

}  // namespace beatnik::model::tree
