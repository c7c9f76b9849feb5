// Target points and the downward interpolation of the cluster–cluster terms (tree_dual.hpp).
#include "beatnik/model/tree_dual.hpp"

#include <algorithm>

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
// Four doubles, one target's value per lane: element-wise IEEE operations (GCC's vector
// extension), the AVX2 clone's one register, the default clone's two.
typedef double Lanes __attribute__((vector_size(32)));
constexpr int kLanes = 4;
}  // namespace

// Targets four at a time, side by side in the lanes: each target's products and sums are those
// of one target at a time, in the same order (no contraction to FMA in the AVX2 clone), so the
// same bits; the z side's sums, most of the work, take one vector operation per term.
__attribute__((target_clones("arch=x86-64-v3", "default"), optimize("fp-contract=off")))
void interpolate_down(const search::Cluster& B, const int* dg, const double* U, int m, const double* x,
                      const double* y, const double* z, long n, double* ux, double* uy, double* uz) {
  constexpr int K = kTreeMaxDegree + 1;
  double s[3][K], w[3][K];
  for (int d = 0; d < 3; ++d) chebyshev(B.lo[d], B.hi[d], dg[d], s[d], w[d]);
  const int n0 = dg[0] + 1, n1 = dg[1] + 1, n2 = dg[2] + 1;
  const double* xyz[3] = {x, y, z};
  double* u_out[3] = {ux, uy, uz};
  for (long t0 = 0; t0 < n; t0 += kLanes) {
    const int nt = static_cast<int>(std::min<long>(kLanes, n - t0));
    Lanes L[3][K] = {};  // per side, basis value j of each lane's target (0 past nt)
    for (int i = 0; i < nt; ++i)
      for (int d = 0; d < 3; ++d) {
        double l[K];
        lagrange(xyz[d][t0 + i], dg[d], s[d], w[d], l);
        for (int j = 0; j <= dg[d]; ++j) L[d][j][i] = l[j];
      }
    for (int r = 0; r < 3; ++r) {
      const double* u = U + size_t(r) * m;
      Lanes out = {};
      for (int a = 0; a < n0; ++a) {
        Lanes vb = {};
        for (int b = 0; b < n1; ++b) {
          const double* ue = u + (a * n1 + b) * n2;
          Lanes v = {};
          for (int e = 0; e < n2; ++e) v += L[2][e] * ue[e];
          vb += L[1][b] * v;
        }
        out += L[0][a] * vb;
      }
      for (int i = 0; i < nt; ++i) u_out[r][t0 + i] += out[i];
    }
  }
}

}  // namespace beatnik::model::tree
