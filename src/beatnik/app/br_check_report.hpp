#pragma once
// --br-check (model/br_check.hpp): the checks' partial sums reduced over the ranks into the
// measured error of each step — relative maximum max|u − u_exact| / max|u_exact| and relative
// RMS (Σ|u − u_exact|² / Σ|u_exact|²)^{1/2} over the sampled nodes, the worst of the step's BR
// calls — for the results file ("br_check") and the summary.
#include <mpi.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "beatnik/model/br_check.hpp"

namespace beatnik::app {

struct BRCheckStep {
  long step = 0;
  long samples = 0;  // sampled nodes (all ranks)
  int calls = 0;     // BR calls checked in the step
  double max_rel = 0.0, rms_rel = 0.0;
};

// Collective over comm.
BRCheckStep reduce_br_check(const std::vector<model::BRCheckSums>& calls, long step, MPI_Comm comm);
nlohmann::json br_check_json(const std::vector<BRCheckStep>& series);
// Rank 0: the summary's lines from a results document's "br_check" section.
void print_br_check_summary(const nlohmann::json& check);

}  // namespace beatnik::app
