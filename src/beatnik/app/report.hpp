#pragma once
// End-of-run reporting: timer regions and communication reduced over ranks, the summary
// table on rank 0, and the JSON results document.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "beatnik/app/simulation.hpp"

namespace beatnik::app {

struct RunOutcome {
  bool completed = true;
  std::string message;   // failure reason
  double wall_seconds = 0;  // time-stepping loop, max over ranks
};

// Collective. The returned document is complete on rank 0 only.
nlohmann::json results_document(Simulation& sim, const RunOutcome& outcome,
                                const std::vector<std::string>& argv);

// Rank 0 prints the summary held in a results document.
void print_summary(const nlohmann::json& results);

// Printed once at start-up on rank 0.
void print_banner(const Simulation& sim);

}  // namespace beatnik::app
