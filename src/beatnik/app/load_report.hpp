#pragma once
// Load balance of the spatial Birkhoff–Rott solvers, a first-class output: per rank and step the
// quantities the solver names (app/load_series.hpp; cutoff: particles owned in space, ghosts,
// pairs, bytes migrated; tree: particles, LET particles, direct pairs, cluster terms, proxy
// pairs, LET bytes), reduced over ranks (min / median / max, max ÷ mean) for the summary, per
// step for the results file, and the full per-rank distribution at the steps named by
// --load-snapshot.
#include <nlohmann/json.hpp>

#include "beatnik/app/simulation.hpp"

namespace beatnik::app {

// Collective; complete on rank 0 only. Null when the run has neither the cutoff nor the tree solver.
nlohmann::json load_balance_json(const Simulation& sim);

// Rank 0: the summary's load-balance table from a results document's "load_balance" section.
void print_load_summary(const nlohmann::json& load);

}  // namespace beatnik::app
