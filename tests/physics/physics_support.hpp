#pragma once
// Helpers of the physics tests: whole-state snapshots, custom initial states, single-mode
// amplitudes, and the discrete linear theory of VALIDATION.md §3.2 (computed here, in the
// test, from the formulas, never from the code under test).
#include <array>
#include <functional>
#include <vector>

#include "beatnik/app/simulation.hpp"
#include "support/test_support.hpp"

namespace beatnik::test {

// The state of every node, in global (i, j) order; filled on rank 0 of the run's communicator.
struct Snapshot {
  int nx = 0, ny = 0;
  std::vector<double> v;  // 5 values per node
  bool empty() const { return v.empty(); }
  double operator()(int c, int i, int j) const {
    i = ((i % nx) + nx) % nx;  // periodic index wrap (positions are not shifted: see callers)
    j = ((j % ny) + ny) % ny;
    return v[5 * (static_cast<size_t>(i) * ny + j) + c];
  }
};

// Collective over the simulation's communicator.
Snapshot snapshot(const app::Simulation& sim);

// Overwrites the owned nodes with f(global i, global j, x, y) -> (z1, z2, z3, w1, w2), where
// (x, y) is the node's initial position, then refreshes the ghosts.
using StateFunction = std::function<std::array<double, 5>(int, int, double, double)>;
void set_state(app::Simulation& sim, const StateFunction& f);

// Projection of z3 on cos(kx x) cos(ky y) over the initial node positions:
// a = Σ z3 cos cos / Σ cos² cos² (VALIDATION O4: the mode amplitude, not a node value).
double cos_mode_amplitude(const Snapshot& s, const mesh::Geometry& g, double kx, double ky);

// Projection of component c on sin(kx x) cos(ky y) (sin_in_x) or on cos(kx x) sin(ky y).
double sin_cos_amplitude(const Snapshot& s, const mesh::Geometry& g, int c, double kx, double ky, bool sin_in_x);

// Discrete linear theory of one Fourier mode (kx, ky) on a geometry (VALIDATION §3.2).
struct LinearMode {
  double r = 1;       // node spacing / operator spacing (square meshes: the same in both dims)
  double kappa = 0;   // Σ k_j K_j / |k|, K_j the 4th-order difference symbol
  double lambda = 0;  // 9-point Laplacian symbol (negative)
  double knorm = 0;   // |k|
};
LinearMode linear_mode(const mesh::Geometry& g, double kx, double ky);

// Linear low-order system d(η, Q)/dt = M (η, Q) with M = [[0, −½ r^{−4p}], [−2Agκ, μλ]].
struct LinearSystem {
  double m00 = 0, m01 = 0, m10 = 0, m11 = 0;
};
LinearSystem low_order_system(const LinearMode& mode, double atwood, double gravity, double mu, double p);

// Amplitudes η after 0..steps TVD-RK3 steps of size dt from (η, Q) = (a0, 0): the exact
// prediction of a correct implementation for a linear mode (P(X) = I + X + X²/2 + X³/6).
std::vector<double> rk3_amplitudes(const LinearSystem& m, double a0, double dt, int steps);
// The same recursion, returning (η, Q) after every step.
std::vector<std::array<double, 2>> rk3_states(const LinearSystem& m, double a0, double dt, int steps);

// Roots s± of s² − m11 s − m01 m10 = 0 and the exact solution (s₊e^{s₋t} − s₋e^{s₊t})/(s₊ − s₋).
struct Roots {
  double plus = 0, minus = 0;
};
Roots growth_roots(const LinearSystem& m);
double closed_form_ratio(const Roots& s, double t);

}  // namespace beatnik::test
