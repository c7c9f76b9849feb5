#pragma once
// Every locally-essential-tree (LET) strategy by name (--let-strategy): the one list that
// --help, option validation, the banner, the results file and the tests read. Adding a
// strategy is one file beside alltoallv.cpp and one line in registry.cpp.
//
// The tree solver (model/tree_br_solver.*) hands the exchange one block of doubles per other
// rank: everything of this rank's tree that the rank's targets need (docs/tree.md). alltoallv
// and sparse push: the owner of a tree computes, from the allgathered rank boxes, what every
// other rank needs and sends it; they differ in how the ranks talk. rma pulls: each rank
// exposes its tree in an MPI window and walks the others' itself (rma.cpp), reaching the same
// blocks.
#include <memory>
#include <string>
#include <vector>

#include "beatnik/comm/let/let_strategy.hpp"

namespace beatnik::comm::let {

struct StrategyEntry {
  const char* name;
  const char* description;       // one line: how it talks
  std::string (*unavailable)();  // empty when this build and MPI library can run it, else why not
  std::unique_ptr<Strategy> (*make)(const Setup&);  // collective over setup.comm
  bool pulls = false;                                 // rma: walks the others' trees itself
};

// All strategies, in the order --help lists them.
const std::vector<StrategyEntry>& registry();
// The entry called `name`: InputError listing every name when there is none, NotAvailable
// (with the reason) when it cannot run here.
const StrategyEntry& find_strategy(const std::string& name);
// How the blocks of `strategy` travel with `transport` (the run's GPU transport, null on the
// host): "nccl" (a push over an NCCL transport, push.hpp) or "mpi"; the results and the banner
// say it.
const char* path(const std::string& strategy, const Transport* transport);
// "alltoallv, sparse or rma" (for messages).
std::string strategy_names();
// One "  name  description" line per strategy (for --help).
std::string strategy_help();

}  // namespace beatnik::comm::let
