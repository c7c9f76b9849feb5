#pragma once
// The tree units' independent interpolation (test_tree_upward, test_tree_down): Chebyshev points
// of the second kind on [lo, hi] and the Lagrange basis in product form,
// L_j(x) = Π_{i≠j} (x − s_i)/(s_j − s_i), not the solver's barycentric formula.
#include <cmath>

namespace beatnik::test {

// Point i of degree n on [lo, hi] (degree 0: the centre).
inline double cheb_node(double lo, double hi, int n, int i) {
  return n == 0 ? 0.5 * (lo + hi) : 0.5 * (lo + hi) + 0.5 * (hi - lo) * std::cos(M_PI * i / n);
}

// L_j(x) of degree n on [lo, hi] (degree 0: 1).
inline double product_basis(double x, int n, double lo, double hi, int j) {
  double v = 1.0;
  for (int i = 0; i <= n; ++i)
    if (i != j) v *= (x - cheb_node(lo, hi, n, i)) / (cheb_node(lo, hi, n, j) - cheb_node(lo, hi, n, i));
  return v;
}

}  // namespace beatnik::test
