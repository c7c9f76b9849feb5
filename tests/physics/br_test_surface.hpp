#pragma once
// A wavy, slightly sheared surface and a smooth vorticity vector ω as functions of the global
// node: the common input of the Birkhoff–Rott solver tests (exact and cutoff), set on the
// owned nodes of any decomposition.
#include <array>
#include <cmath>

#include "beatnik/mesh/geometry.hpp"

namespace beatnik::test {

inline double br_test_position(const mesh::Geometry& g, int c, int gi, int gj) {
  const double x = g.position(0, gi), y = g.position(1, gj);
  if (c == 0) return x + 0.02 * std::sin(3.0 * y + 0.4);
  if (c == 1) return y + 0.015 * std::cos(2.0 * x);
  return 0.1 * std::cos(M_PI * x) * std::sin(M_PI * y + 0.3) + 0.05 * x;
}

inline double br_test_omega(int c, int gi, int gj) {
  return std::sin(0.4 * gi + c) * std::cos(0.3 * gj - 0.5 * c) + 0.1 * c;
}

// Quadrature weight W of source node (si, sj): Simpson-3/8 over `nodes` nodes in both directions
// (the beatnik profile), else the trapezoid rule (1 inside, ½ on a free edge).
inline double br_test_weight(const mesh::Geometry& g, int nodes, int si, int sj, bool simpson38) {
  auto simpson = [nodes](int i) { return (i == 0 || i == nodes - 1) ? 3.0 / 8 : (i % 3 == 0 ? 3.0 / 4 : 9.0 / 8); };
  if (simpson38) return simpson(si) * simpson(sj);
  return (g.periodic[0] || (si > 0 && si < g.nodes[0] - 1) ? 1.0 : 0.5) *
         (g.periodic[1] || (sj > 0 && sj < g.nodes[1] - 1) ? 1.0 : 0.5);
}

// One source's term, straight from MODEL.md §7: u += coef · (ω × r) / (|r|² + ε)^{3/2} with
// r = t − s and coef = −ΔxΔy·W/(4π).
inline void br_test_add_pair(std::array<double, 3>& u, const double t[3], const double s[3], const double w[3],
                             double coef, double eps) {
  const double r[3] = {t[0] - s[0], t[1] - s[1], t[2] - s[2]};
  const double f = coef / std::pow(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + eps, 1.5);
  u[0] += f * (w[1] * r[2] - w[2] * r[1]);
  u[1] += f * (w[2] * r[0] - w[0] * r[2]);
  u[2] += f * (w[0] * r[1] - w[1] * r[0]);
}

}  // namespace beatnik::test
