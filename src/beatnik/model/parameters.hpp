#pragma once
// Physical and numerical parameters of one Z-model run, already in solver units.
#include <string>

namespace beatnik::model {

enum class Order { Low, Medium, High };
inline const char* to_string(Order o) {
  return o == Order::Low ? "low" : o == Order::Medium ? "medium" : "high";
}

struct ModelParameters {
  Order order = Order::Low;
  double atwood = 0.5;
  double gravity = 245.25;     // already multiplied by 9.81
  double mu = 0.0;             // artificial viscosity μ_eff = M·√(ΔxΔy)
  double epsilon = 0.0;        // desingularisation ε_eff = e·√(ΔxΔy) (BR solvers)
  double metric_power = 0.5;   // p in u_n = −½·R·ϖ / det(h)^p
  // Blow-up guard: the run stops where the local mesh stretch det(h)^(1/4) exceeds this (0: off).
  double max_stretch = 100.0;
};

}  // namespace beatnik::model
