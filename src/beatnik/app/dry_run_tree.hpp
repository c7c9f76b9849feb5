#pragma once
// The dry run's estimate of the tree Birkhoff–Rott solver's messages (--dry-run -S tree;
// docs/skeleton-and-dry-run.md). Its migration and locally essential tree (LET) follow the
// particles, so they cannot be planned from boxes alone: this places the initial surface's nodes
// (the positions initialize_state gives them, heights included: the tree's boxes are 3-D) in one
// process, cuts space with the solver's own SpatialDecomposition (serial), builds every rank's
// tree over the particles it would own, in the order they would arrive (model::build_source_tree,
// model::layout_proxies), and sizes every LET block by the solver's own functions: pack_let for
// the push strategies, the pulled walk (tree::LetPull) served from the owner's exposed sections
// for rma. For the run's first Birkhoff–Rott call the result is exact; later calls see the
// surface moved.
#include <map>
#include <utility>
#include <vector>

#include "beatnik/app/problem.hpp"

namespace beatnik::app {

// One velocity() call of the tree solver on the initial surface; ranks are the surface grid's
// (cell i·Py + j).
struct TreeCallEstimate {
  // to_spatial[g][o]: particles surface rank g sends to spatial owner o (self included); the
  // return trip sends the same counts back, o to g.
  std::vector<std::map<int, long>> to_spatial;
  // let[g]: the LET messages rank g accounts, in order, as (peer, bytes): push — the blocks it
  // sends to each peer; rma (pulled) — each MPI_Get it makes of an owner (the peer), round by round.
  std::vector<std::vector<std::pair<int, long>>> let;
  bool pulled = false;  // --let-strategy rma: let[g]'s bytes travel from the peer to g
  // The solver's load record let_bytes per rank (sent for the push, fetched for rma).
  std::vector<long> let_bytes;
};

// NotAvailable when the positions are not the configured initial surface's (-i FILE) or the mesh
// has more than kDryRunBalancedMaxNodes nodes (every position is held in memory).
TreeCallEstimate estimate_tree_call(const RunConfig& c);

}  // namespace beatnik::app
