#pragma once
// Named benchmark cases (--case NAME): the four set-ups of the Beatnik paper's evaluation
// (Section 5.1), one table row each, applied to the options the user did not give explicitly.
// docs/cases.md documents the same table; tests/cli/test_cases.py checks the two against each
// other and against what the program prints.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "beatnik/app/options.hpp"

namespace beatnik::app {

enum class CaseScaling { Weak, Strong };

struct BenchmarkCase {
  const char* name;
  const char* summary;
  CaseScaling scaling;   // Weak: `nodes` per rank (-w = rank count); Strong: `nodes` global
  const char* order;     // -O
  const char* solver;    // -S
  double cutoff;         // -c (cutoff solver only)
  const char* initial;   // -I
  double magnitude;      // -m
  double period;         // -p
  const char* boundary;  // -b
  double box;            // -B (half-width before weak scaling)
  int nodes;             // -n before --case-scale (per rank for Weak, global for Strong)
  double atwood;         // -a
  double gravity;        // -g (in g's)
  double mu;             // -M
  double epsilon;        // -e
  double dt;             // -d
  long steps;            // -t
  double laptop_scale;   // a --case-scale that fits a laptop (documented, not applied by default)
};

// Every case, in the order `--case list` prints them.
const std::vector<BenchmarkCase>& benchmark_cases();

// The case called `name`; throws InputError naming the cases otherwise.
const BenchmarkCase& find_case(std::string_view name);

// The text of `--case list`.
std::string case_list_text();

// -n of the case at --case-scale `scale` (at least 4; per rank for weak cases).
int case_nodes(const BenchmarkCase& c, double scale);

// Sets every option of the case that `given(option name)` says the user did not give; records
// the case, the scale and the options the user gave over the case's in `o`. Throws InputError
// for a bad scale.
void apply_case(const BenchmarkCase& c, double scale, Options& o,
                const std::function<bool(const char*)>& given);

// One line for the banner: the case, its scale and the options it set or the user overrode.
std::string case_banner(const Options& o);

}  // namespace beatnik::app
