#pragma once
// A wavy, slightly sheared surface and a smooth vorticity vector ω as functions of the global
// node: the common input of the Birkhoff–Rott solver tests (exact and cutoff), set on the
// owned nodes of any decomposition.
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

}  // namespace beatnik::test
