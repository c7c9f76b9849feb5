#include "beatnik/app/cases.hpp"

#include <fmt/format.h>

#include <cmath>

#include "beatnik/base/error.hpp"

namespace beatnik::app {

// One row per case (docs/cases.md says where and why a value differs from the paper).
// dt follows the viscous stability rule of app/problem.cpp (dt <= 2.51 dx^2 / (4 mu)) at the
// paper's resolution; a --case-scale below 1 coarsens the mesh and only loosens that limit.
const std::vector<BenchmarkCase>& benchmark_cases() {
  static const std::vector<BenchmarkCase> table = {
      // name, summary, scaling, -O, -S, -c, -I, -m, -p, -b, -B, -n, -a, -g, -M, -e, -d, -t, laptop scale
      {"low-weak", "low order (FFT), multi-mode cos on the +-19 box, 4864^2 nodes per rank, weak-scaled (-w = ranks)",
       CaseScaling::Weak, "low", "exact", 0.0, "cos", 0.05, 1.0, "periodic", 19.0, 4864, 0.5, 25.0, 1.0, 0.25,
       0.0036, 20, 0.125},
      {"low-strong", "low order (FFT), the low-weak problem at its base size (4864^2 global), strong-scaled",
       CaseScaling::Strong, "low", "exact", 0.0, "cos", 0.05, 1.0, "periodic", 19.0, 4864, 0.5, 25.0, 1.0, 0.25,
       0.0036, 20, 0.125},
      {"cutoff-weak", "high order, cutoff solver c = 0.2, multi-mode cos on the +-3 box, 768^2 nodes per rank, "
       "weak-scaled (-w = ranks)",
       CaseScaling::Weak, "high", "cutoff", 0.2, "cos", 0.05, 1.0, "periodic", 3.0, 768, 0.5, 25.0, 1.0, 0.25,
       0.0018, 20, 0.125},
      {"cutoff-strong", "high order, cutoff solver c = 0.5, single-mode sech2 roll-up, free boundaries, 512^2 "
       "global, strong-scaled, run past the roll-up",
       CaseScaling::Strong, "high", "cutoff", 0.5, "sech2", 0.1, 9.0, "free", 1.0, 512, 0.15, 25.0, 2.0, 2.0,
       0.0009, 1000, 0.125},
  };
  return table;
}

const BenchmarkCase& find_case(std::string_view name) {
  std::string names;
  for (const auto& c : benchmark_cases()) {
    if (name == c.name) return c;
    names += (names.empty() ? "" : ", ") + std::string(c.name);
  }
  throw InputError("unknown --case '" + std::string(name) + "' (choose " + names + ", or list)");
}

int case_nodes(const BenchmarkCase& c, double scale) {
  const double n = c.nodes * scale;
  if (!(n <= 1e9))
    throw InputError(fmt::format("--case-scale {:g} makes the {} case's -n {:g}: far beyond any machine", scale, c.name, n));
  return std::max(4, static_cast<int>(std::lround(n)));
}

std::string case_list_text() {
  std::string s =
      "Benchmark cases (the Beatnik paper's Section 5.1; docs/cases.md). --case NAME sets these options;\n"
      "an option given on the command line overrides only its own value. --case-scale S multiplies -n\n"
      "(per rank for weak cases) by S; 'laptop' is a scale that fits a laptop.\n\n";
  s += fmt::format("{:<14} {:<7} {:<5} {:<7} {:<4} {:<6} {:<5} {:<3} {:<9} {:<3} {:<5} {:<5} {:<3} {:<3} {:<5} {:<7} "
                   "{:<5} {}\n",
                   "name", "scaling", "-O", "-S", "-c", "-I", "-m", "-p", "-b", "-B", "-n", "-a", "-g", "-M", "-e",
                   "-d", "-t", "laptop");
  for (const auto& c : benchmark_cases())
    s += fmt::format("{:<14} {:<7} {:<5} {:<7} {:<4} {:<6} {:<5g} {:<3g} {:<9} {:<3g} {:<5} {:<5g} {:<3g} {:<3g} "
                     "{:<5g} {:<7g} {:<5} {:g}\n",
                     c.name, c.scaling == CaseScaling::Weak ? "weak" : "strong", c.order, c.solver,
                     c.cutoff > 0 ? fmt::format("{:g}", c.cutoff) : std::string("-"), c.initial, c.magnitude,
                     c.period, c.boundary, c.box, c.nodes, c.atwood, c.gravity, c.mu, c.epsilon, c.dt, c.steps,
                     c.laptop_scale);
  s += "\n";
  for (const auto& c : benchmark_cases()) s += fmt::format("  {:<14} {}\n", c.name, c.summary);
  return s;
}

void apply_case(const BenchmarkCase& c, double scale, Options& o, const std::function<bool(const char*)>& given) {
  if (!std::isfinite(scale) || scale <= 0)
    throw InputError(fmt::format("--case-scale must be a positive number (got {:g})", scale));
  o.case_name = c.name;
  o.case_scale = scale;
  o.case_overrides.clear();
  // Each case option: set it unless the user gave it, then it is an override.
  auto set = [&](const char* flag, auto& field, auto value) {
    if (given(flag)) o.case_overrides.emplace_back(flag);
    else field = value;
  };
  set("-O", o.order, std::string(c.order));
  set("-S", o.solver, std::string(c.solver));
  if (c.cutoff > 0) set("-c", o.cutoff, c.cutoff);
  set("-I", o.initial_condition, std::string(c.initial));
  set("-m", o.magnitude, c.magnitude);
  set("-p", o.period, c.period);
  set("-b", o.boundary, std::string(c.boundary));
  set("-B", o.box, c.box);
  set("-n", o.nodes, case_nodes(c, scale));
  if (given("-w")) o.case_overrides.emplace_back("-w");
  else if (c.scaling == CaseScaling::Weak) o.weak_scale_by_ranks = true;
  else o.weak_scale = 1;
  set("-a", o.atwood, c.atwood);
  set("-g", o.gravity, c.gravity);
  set("-M", o.mu, c.mu);
  set("-e", o.epsilon, c.epsilon);
  set("-d", o.dt, std::optional<double>(c.dt));
  set("-t", o.steps, std::optional<long>(c.steps));
}

std::string case_banner(const Options& o) {
  if (o.case_name.empty()) return {};
  const BenchmarkCase& c = find_case(o.case_name);
  std::string over;
  for (const auto& f : o.case_overrides) over += (over.empty() ? "" : " ") + f;
  return fmt::format("{} at scale {:g} ({}-scaled, -n {} {}{}); options over the case: {}", c.name, o.case_scale,
                     c.scaling == CaseScaling::Weak ? "weak" : "strong", case_nodes(c, o.case_scale),
                     c.scaling == CaseScaling::Weak ? "per rank" : "global",
                     o.weak_scale_by_ranks ? ", -w = ranks" : "", over.empty() ? "none" : over);
}

}  // namespace beatnik::app
