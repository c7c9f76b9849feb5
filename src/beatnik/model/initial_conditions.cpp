#include "beatnik/model/initial_conditions.hpp"

#include <cmath>
#include <vector>

#include "beatnik/base/error.hpp"
#include "beatnik/model/state.hpp"

namespace beatnik::model {

InitialShape parse_initial_shape(const std::string& s) {
  if (s == "cos") return InitialShape::Cos;
  if (s == "sech2") return InitialShape::Sech2;
  if (s == "random") return InitialShape::Random;
  if (s == "gaussian") return InitialShape::Gaussian;
  throw InputError("unknown initial condition '" + s + "' (choose cos, sech2, random or gaussian)");
}

const char* to_string(InitialShape s) {
  switch (s) {
    case InitialShape::Cos: return "cos";
    case InitialShape::Sech2: return "sech2";
    case InitialShape::Random: return "random";
    case InitialShape::Gaussian: return "gaussian";
  }
  return "?";
}

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double uniform01(std::uint64_t seed, long i, long j, int stream) {
  std::uint64_t h = mix64(seed);
  h = mix64(h ^ static_cast<std::uint64_t>(i));
  h = mix64(h ^ static_cast<std::uint64_t>(j));
  h = mix64(h ^ static_cast<std::uint64_t>(stream));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

namespace {

// The height of -I alone.
double shape_height(const InitialCondition& ic, long i, long j, double x, double y) {
  const double m = ic.magnitude, p = ic.period;
  switch (ic.shape) {
    case InitialShape::Cos:
      return m * std::cos(2.0 * M_PI * x / p) * std::cos(2.0 * M_PI * y / p);
    case InitialShape::Sech2: {
      const double c = 1.0 / std::cosh(p * (x * x + y * y));
      return m * c * c;
    }
    case InitialShape::Random: {
      const double u = uniform01(ic.seed, i, j, 0);
      if (ic.reference_ranges) {
        const double r = 2.0 * u - 1.0;  // reference: r in [-1, 1), z3 = m(2r - 1)
        return m * (2.0 * r - 1.0);
      }
      return m * (2.0 * u - 1.0);  // uniform in [-m, m)
    }
    case InitialShape::Gaussian: {
      const double u1 = uniform01(ic.seed, i, j, 0);
      if (ic.reference_ranges) {
        const double r = 2.0 * u1 - 1.0;  // reference: standard normal density at r
        return m * std::exp(-0.5 * r * r) / std::sqrt(2.0 * M_PI);
      }
      const double u2 = uniform01(ic.seed, i, j, 1);
      // Box–Muller; 1 - u1 lies in (0, 1], so the logarithm is finite.
      return m * std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * M_PI * u2);
    }
  }
  return 0.0;
}

}  // namespace

double initial_height(const InitialCondition& ic, long i, long j, double x, double y) {
  const double z = shape_height(ic, i, j, x, y);
  return ic.tilt_slope == 0.0 ? z : z + ic.tilt_slope * x;
}

void initialize_state(const mesh::SurfaceMesh& mesh, const InitialCondition& ic, const mesh::Field& state) {
  // Built on the host (it runs once), then copied to wherever the state lives.
  const GhostedLayout L = state.layout();
  std::vector<double> host(static_cast<size_t>(L.plane()) * kStateComps, 0.0);
  const auto& geo = mesh.geometry();
  const Box2& own = mesh.owned();
  for (int i = 0; i < L.ni; ++i) {
    for (int j = 0; j < L.nj; ++j) {
      const long gi = own.lo[0] + i, gj = own.lo[1] + j;
      const double x = geo.position(0, static_cast<int>(gi)), y = geo.position(1, static_cast<int>(gj));
      const long k = L.index(i, j);
      host[kZ1 * L.plane() + k] = x;
      host[kZ2 * L.plane() + k] = y;
      host[kZ3 * L.plane() + k] = initial_height(ic, gi, gj, x, y);
    }
  }
  exec::copy(state.comp(0), state.space(), host.data(), exec::Space::Host, host.size());
}

}  // namespace beatnik::model
