#pragma once
// Chebyshev points of the second kind and barycentric Lagrange values: the tree solver's
// interpolation (docs/tree.md "Method"), shared by the host upward pass (tree_br_solver.cpp) and
// the device one (tree_upward_device.cpp) so that both weigh a source by the same formula.
#include <cmath>

#include "beatnik/exec/macros.hpp"

namespace beatnik::model::tree {

// Chebyshev points of the second kind on [lo, hi] (degree n: n + 1 points) and their
// barycentric weights.
inline void chebyshev(double lo, double hi, int n, double* s, double* w) {
  const double c = 0.5 * (lo + hi), r = 0.5 * (hi - lo);
  if (n == 0) {
    s[0] = c;
    w[0] = 1.0;
    return;
  }
  for (int j = 0; j <= n; ++j) {
    s[j] = c + r * std::cos(M_PI * j / n);
    w[j] = ((j % 2) ? -1.0 : 1.0) * ((j == 0 || j == n) ? 0.5 : 1.0);
  }
}

// Lagrange basis values L_j(x), j = 0..n, by the barycentric formula (exact at a node).
BEATNIK_HOST_DEVICE inline void lagrange(double x, int n, const double* s, const double* w, double* out) {
  for (int j = 0; j <= n; ++j)
    if (x == s[j]) {
      for (int i = 0; i <= n; ++i) out[i] = i == j ? 1.0 : 0.0;
      return;
    }
  double den = 0.0;
  for (int j = 0; j <= n; ++j) {
    out[j] = w[j] / (x - s[j]);
    den += out[j];
  }
  for (int j = 0; j <= n; ++j) out[j] /= den;
}

}  // namespace beatnik::model::tree
