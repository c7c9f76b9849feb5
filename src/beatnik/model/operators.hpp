#pragma once
// Finite-difference operators of the Z-model (MODEL.md §6.2): 4th-order central first
// derivatives and the 9-point (Oono–Puri) Laplacian. `f` points at node (i, j) of a ghosted
// plane with i-stride si.
#include "beatnik/exec/macros.hpp"

namespace beatnik::model {

// How far the operators below reach from a node: d_x and d_y two nodes, the Laplacian one.
inline constexpr int kStencilReach = 2;

struct Spacing {
  double inv12dx, inv12dy, invdxdy;  // 1/(12Δx), 1/(12Δy), 1/(ΔxΔy)
};

BEATNIK_HOST_DEVICE inline double d_x(const double* f, long si, const Spacing& s) {
  return (f[-2 * si] - 8.0 * f[-si] + 8.0 * f[si] - f[2 * si]) * s.inv12dx;
}
BEATNIK_HOST_DEVICE inline double d_y(const double* f, long /*si*/, const Spacing& s) {
  return (f[-2] - 8.0 * f[-1] + 8.0 * f[1] - f[2]) * s.inv12dy;
}
BEATNIK_HOST_DEVICE inline double laplacian(const double* f, long si, const Spacing& s) {
  const double faces = f[si] + f[-si] + f[1] + f[-1];
  const double corners = f[si + 1] + f[si - 1] + f[-si + 1] + f[-si - 1];
  return (0.5 * faces + 0.25 * corners - 3.0 * f[0]) * s.invdxdy;
}

}  // namespace beatnik::model
