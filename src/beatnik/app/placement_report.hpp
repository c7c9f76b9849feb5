#pragma once
// The placement a run got, for the banner and the results file: the policy, the nodes it
// placed over, and every rank's grid coordinates and node (ranks as mpiexec numbers them).
#include <nlohmann/json.hpp>

#include <string>

#include "beatnik/app/simulation.hpp"

namespace beatnik::app {

// No communication (every rank holds the whole map).
nlohmann::json placement_json(const Simulation& sim);
// Banner lines ("  placement   ...", "  map         ..."), newline-terminated.
std::string placement_banner(const Simulation& sim);

}  // namespace beatnik::app
