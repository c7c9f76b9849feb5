#include "physics/physics_support.hpp"

#include <cmath>

#include "beatnik/io/state_csv.hpp"
#include "beatnik/model/state.hpp"

namespace beatnik::test {

Snapshot snapshot(const app::Simulation& sim) {
  Snapshot s;
  s.nx = sim.config().geometry.nodes[0];
  s.ny = sim.config().geometry.nodes[1];
  s.v = io::gather_state(sim.mesh(), sim.state());
  return s;
}

void set_state(app::Simulation& sim, const StateFunction& f) {
  const mesh::Field& state = sim.state();
  const GhostedLayout L = state.layout();
  const auto& geo = sim.mesh().geometry();
  const Box2& own = sim.mesh().owned();
  std::vector<double> host(static_cast<size_t>(L.plane()) * model::kStateComps, 0.0);
  for (int i = 0; i < L.ni; ++i)
    for (int j = 0; j < L.nj; ++j) {
      const int gi = own.lo[0] + i, gj = own.lo[1] + j;
      const auto v = f(gi, gj, geo.position(0, gi), geo.position(1, gj));
      for (int c = 0; c < model::kStateComps; ++c) host[c * L.plane() + L.index(i, j)] = v[c];
    }
  exec::copy(state.comp(0), state.space(), host.data(), exec::Space::Host, host.size());
  sim.model().gather(state);
}

double cos_mode_amplitude(const Snapshot& s, const mesh::Geometry& g, double kx, double ky) {
  double num = 0, den = 0;
  for (int i = 0; i < s.nx; ++i)
    for (int j = 0; j < s.ny; ++j) {
      const double b = std::cos(kx * g.position(0, i)) * std::cos(ky * g.position(1, j));
      num += s(model::kZ3, i, j) * b;
      den += b * b;
    }
  return num / den;
}

double sin_cos_amplitude(const Snapshot& s, const mesh::Geometry& g, int c, double kx, double ky, bool sin_in_x) {
  double num = 0, den = 0;
  for (int i = 0; i < s.nx; ++i)
    for (int j = 0; j < s.ny; ++j) {
      const double x = g.position(0, i), y = g.position(1, j);
      const double b = sin_in_x ? std::sin(kx * x) * std::cos(ky * y) : std::cos(kx * x) * std::sin(ky * y);
      num += s(c, i, j) * b;
      den += b * b;
    }
  return num / den;
}

LinearMode linear_mode(const mesh::Geometry& g, double kx, double ky) {
  LinearMode m;
  const double k[2] = {kx, ky};
  const double D = g.spacing[0];  // square meshes only (both dims equal)
  m.r = g.node_spacing[0] / g.spacing[0];
  m.knorm = std::hypot(kx, ky);
  double cs[2];
  for (int d = 0; d < 2; ++d) {
    const double th = k[d] * g.node_spacing[d];
    const double K = (8.0 * std::sin(th) - std::sin(2.0 * th)) / (6.0 * D);
    m.kappa += k[d] * K / m.knorm;
    cs[d] = std::cos(th);
  }
  m.lambda = (cs[0] + cs[1] + cs[0] * cs[1] - 3.0) / (D * D);
  return m;
}

LinearSystem low_order_system(const LinearMode& mode, double atwood, double gravity, double mu, double p) {
  LinearSystem s;
  s.m01 = -0.5 * std::pow(mode.r, -4.0 * p);
  s.m10 = -2.0 * atwood * gravity * mode.kappa;
  s.m11 = mu * mode.lambda;
  return s;
}

std::vector<std::array<double, 2>> rk3_states(const LinearSystem& m, double a0, double dt, int steps) {
  // P = I + X + X²/2 + X³/6 with X = dt·M, applied to (η, Q).
  const double X[2][2] = {{dt * m.m00, dt * m.m01}, {dt * m.m10, dt * m.m11}};
  auto mul = [](const double A[2][2], const double B[2][2], double C[2][2]) {
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) C[i][j] = A[i][0] * B[0][j] + A[i][1] * B[1][j];
  };
  double X2[2][2], X3[2][2], P[2][2];
  mul(X, X, X2);
  mul(X2, X, X3);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) P[i][j] = (i == j ? 1.0 : 0.0) + X[i][j] + X2[i][j] / 2.0 + X3[i][j] / 6.0;
  std::vector<std::array<double, 2>> out{{a0, 0.0}};
  for (int n = 0; n < steps; ++n) {
    const auto [eta, q] = out.back();
    out.push_back({P[0][0] * eta + P[0][1] * q, P[1][0] * eta + P[1][1] * q});
  }
  return out;
}

std::vector<double> rk3_amplitudes(const LinearSystem& m, double a0, double dt, int steps) {
  std::vector<double> a;
  for (const auto& s : rk3_states(m, a0, dt, steps)) a.push_back(s[0]);
  return a;
}

Roots growth_roots(const LinearSystem& m) {
  const double b = m.m11, c = m.m01 * m.m10;  // s² − b s − c = 0
  const double d = std::sqrt(b * b / 4.0 + c);
  return Roots{b / 2.0 + d, b / 2.0 - d};
}

double closed_form_ratio(const Roots& s, double t) {
  return (s.plus * std::exp(s.minus * t) - s.minus * std::exp(s.plus * t)) / (s.plus - s.minus);
}

}  // namespace beatnik::test
