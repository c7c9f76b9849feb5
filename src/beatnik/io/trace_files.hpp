#pragma once
// Writing the gathered --trace of a run (rank 0 only, no MPI): Chrome trace-event JSON (opens
// in the Perfetto UI and chrome://tracing) and LogGOPSim's GOAL schedule text. docs/traces.md
// describes both.
#include <string>
#include <vector>

#include "beatnik/base/trace.hpp"

namespace beatnik::io {

struct GatheredTrace {
  std::vector<std::string> names;  // every rank's event names, one table
  struct Rank {
    int node = 0;
    std::vector<TraceRecorder::Event> events;  // name indices into `names`, times from the run's origin
  };
  std::vector<Rank> ranks;
  long first_measured_step = 1;  // earlier steps are --warmup steps (in the JSON, not in GOAL)
  long dropped = 0;              // events beyond the per-rank bound, summed over ranks
  std::size_t max_events_per_rank = 0;
};

// A send paired with its receive: same pattern and call (seq), src -> dst, same bytes.
struct MatchedMessage {
  int src = 0, dst = 0;
  std::size_t send = 0, recv = 0;  // indices into ranks[src].events / ranks[dst].events
  long tag = 0;                    // unique over the run
};

// Pairs every send with a receive of the same bytes posted by the peer in the same call of the
// same pattern. Messages that find no partner are counted in *unmatched.
std::vector<MatchedMessage> match_messages(const GatheredTrace& t, long* unmatched);

// Throw WriteError if the file cannot be written.
void write_chrome_trace(const std::string& path, const GatheredTrace& t, const std::vector<MatchedMessage>& m);
// The measured steps' messages between different ranks, with the computation between them as
// calc (nanoseconds); see docs/traces.md for the dependencies.
void write_goal(const std::string& path, const GatheredTrace& t, const std::vector<MatchedMessage>& m);

}  // namespace beatnik::io
