#pragma once
// --trace FILE and --trace-goal FILE: every rank's recorded phases and messages gathered to rank
// 0 of the run's communicator and written there as one file each (docs/traces.md).
#include <string>

namespace beatnik::app {

class Simulation;

// Collective over the run's communicator. Returns "" or the one error message (the same on
// every rank). Also prints one line per file written on rank 0 and a warning when the per-rank
// event bound dropped events or a message found no partner.
std::string write_traces(const Simulation& sim, const std::string& json_path, const std::string& goal_path);

}  // namespace beatnik::app
