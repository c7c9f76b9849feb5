#pragma once
// The dry run's planning (--dry-run; docs/skeleton-and-dry-run.md): every pattern's messages of
// one step for P ranks, computed in one process from the same planning code the patterns use
// (comm::grid_neighbors + comm::plan_halo, fft::make_fft_plan + comm::plan_side / plan_pad /
// planned_messages, comm::plan_ring), with the placement's rank map and --ranks-per-node's
// nodes. Nothing of size of the mesh is allocated: only boxes and message lists. The cutoff
// solver's migration and ghosts are estimated from the initial surface instead
// (app/dry_run_cutoff.hpp: one pass over the nodes' positions; --spatial-partition balanced
// gathers them first).
#include <map>
#include <string>
#include <vector>

#include "beatnik/app/problem.hpp"
#include "beatnik/comm/comm_stats.hpp"

namespace beatnik::app {

struct DryRunPlan {
  int ranks = 0;
  int ranks_per_node = 0;             // the nodes: ranks r / ranks_per_node
  std::vector<int> node_of_rank;      // per world rank
  std::vector<int> grid_rank_of_rank; // per world rank: its cell i * Py + j
  // One step's accounting of every world rank, as CommStats would hold it after one step.
  std::vector<comm::CommStats> per_rank;
  // Bytes per step from world rank src to world rank dst (other ranks only), all patterns.
  std::vector<std::map<int, long>> matrix;
  // Per pattern and world rank: distinct peers (other ranks) it sends to in a step.
  std::map<std::string, std::vector<int>> degree;
  std::vector<int> degree_all;      // over all patterns
  std::vector<std::string> notes;   // what is assumed or estimated
  // Patterns whose messages are estimated from the initial surface rather than planned (the
  // cutoff solver's "migrate" and "ghost"; app/dry_run_cutoff.hpp), sorted.
  std::vector<std::string> estimated;
  bool nccl = false;  // halo, FFT reshapes, ring and migration travel over the NCCL transport
  // With PlanOptions::exchanges: per pattern and world rank, every exchange (call) of one step in
  // the planner's order, each the (destination world rank, bytes) of its messages
  // (app/message_sets.hpp, beatnik-commbench and --bounds).
  std::map<std::string, std::vector<std::vector<std::vector<std::pair<int, long>>>>> exchanges;
  std::vector<std::string> unplanned;  // with skip_unplanned: the patterns left out, and why
};

struct PlanOptions {
  bool exchanges = false;       // fill DryRunPlan::exchanges
  bool skip_unplanned = false;  // leave out (and name) patterns it cannot plan instead of refusing
};

// Birkhoff-Rott solves per step (one per derivative evaluation of TVD-RK3, medium and high order);
// the cutoff estimate counts each of them on the initial surface.
inline constexpr int kDryRunBRCallsPerStep = 3;

// Whether a run of this configuration on `ranks` ranks moves its patterns over NCCL: -x cuda
// with --gpu-transport nccl, or auto on several ranks in a build with NCCL (taking one GPU per
// rank, as auto then does).
bool dry_run_uses_nccl(const RunConfig& c, int ranks);

// P = ranks (the configuration was made for them). ranks_per_node: 0 = all ranks on one node.
// NotAvailable for what the dry run cannot plan.
DryRunPlan plan_dry_run(const RunConfig& c, int ranks, int ranks_per_node, PlanOptions opt = {});

}  // namespace beatnik::app
