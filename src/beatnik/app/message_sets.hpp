#pragma once
// Every communication pattern's messages of one step, per rank and exchange, as the dry run
// plans them (app/dry_run_plan.hpp): what beatnik-commbench replays alone to measure a bound,
// and what `beatnik --bounds FILE` compares the bounds file with (docs/commbench.md).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "beatnik/app/problem.hpp"

namespace beatnik::app {

struct PatternMessages {
  // Per world rank, per exchange of one step (the same count on every rank): the messages it
  // sends, (destination world rank, bytes), the rank itself included.
  std::vector<std::vector<std::vector<std::pair<int, long>>>> sends;
  // The messages of one exchange travel one after the other, each a round (the ring pass: round
  // r sends to the next rank what arrived in round r-1); otherwise all at once.
  bool rounds = false;

  int ranks() const { return static_cast<int>(sends.size()); }
  int exchanges() const { return sends.empty() ? 0 : static_cast<int>(sends[0].size()); }
  long bytes_per_step() const;     // all ranks, all messages
  long messages_per_step() const;  // all ranks
  // Distinct other ranks each rank sends to.
  std::vector<std::vector<int>> peers() const;
  // Message size -> how many messages of it in a step (all ranks).
  std::map<long, long> sizes() const;
  // A 64-bit hash (16 hex digits) of the ranks, exchanges, rounds, destinations and sizes:
  // equal fingerprints are the same message set.
  std::string fingerprint() const;
};

struct MessageSets {
  std::map<std::string, PatternMessages> patterns;  // "halo", "fft", "ring"
  std::vector<std::string> unplanned;               // "migrate: why", for -S cutoff
};

// The message sets of `ranks` ranks running `c` (the dry run's planner; placement included).
MessageSets plan_message_sets(const RunConfig& c, int ranks);

}  // namespace beatnik::app
