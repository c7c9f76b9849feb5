#pragma once
// The dry run's estimate of the cutoff Birkhoff–Rott solver's messages (--dry-run -S cutoff;
// docs/skeleton-and-dry-run.md). Its migration and ghosts follow the particles, so they cannot be
// planned from boxes alone: this places the initial surface's nodes (the positions
// initialize_state gives them) in one process, cuts space with the solver's own
// SpatialDecomposition (serial: every particle is here, nothing is reduced) and applies the
// solver's ghost rule (mesh::visit_ghost_targets with the solver's reach). For the run's first
// Birkhoff–Rott call the result is exact; later calls see the surface moved.
#include <map>
#include <vector>

#include "beatnik/app/problem.hpp"

namespace beatnik::app {

// One velocity() call of the cutoff solver on the initial surface; ranks are the surface grid's
// (cell i·Py + j).
struct CutoffCallEstimate {
  // to_spatial[g][o]: particles surface rank g sends to spatial owner o (self included); the
  // return trip sends the same counts back, o to g.
  std::vector<std::map<int, long>> to_spatial;
  // ghosts[o][t]: ghost copies spatial owner o sends to rank t (periodic self-images included).
  std::vector<std::map<int, long>> ghosts;
};

// The largest global mesh (nodes) whose positions the balanced partition gathers in memory.
inline constexpr long kDryRunBalancedMaxNodes = 1L << 26;

// NotAvailable when the positions are not the configured initial surface's (-i FILE): the
// estimates of `solver` ("cutoff", "tree") start from it.
void require_initial_surface(const RunConfig& c, const char* solver);

// NotAvailable when the positions are not the configured initial surface's (-i FILE) or the
// balanced partition would gather more than kDryRunBalancedMaxNodes positions.
CutoffCallEstimate estimate_cutoff_call(const RunConfig& c);

}  // namespace beatnik::app
