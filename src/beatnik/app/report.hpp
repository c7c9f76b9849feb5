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

// One pattern of the `communication` section: totals over ranks (self, on node, off node) of
// `steps` measured steps (the dry run writes its section with it too).
nlohmann::json communication_entry(double exchanges_per_step_rank0, const long bytes_total[3],
                                   const long messages_total[3], const long bytes_busiest_rank[3], long steps);

// Rank 0 prints the summary held in a results document.
void print_summary(const nlohmann::json& results);

// Printed once at start-up on rank 0.
void print_banner(const Simulation& sim);

}  // namespace beatnik::app
