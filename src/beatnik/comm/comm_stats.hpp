#pragma once
// Bytes and messages each communication pattern sent from this rank, split by where the
// receiver is: this rank itself, another rank on the same node, or another node.
#include <map>
#include <string>
#include <utility>

namespace beatnik::comm {

class MessageTrace;

struct PatternStats {
  long calls = 0;            // exchanges performed
  long messages[3] = {0, 0, 0};  // [self, on-node, off-node]
  long bytes[3] = {0, 0, 0};
};

class CommStats {
 public:
  // locality: 0 self, 1 on-node, 2 off-node (Context::locality).
  void add_message(const std::string& pattern, int locality, long bytes) {
    PatternStats& p = stats_[pattern];
    p.messages[locality] += 1;
    p.bytes[locality] += bytes;
  }
  void add_call(const std::string& pattern) { stats_[pattern].calls += 1; }
  // Adds a whole record (a CUDA graph's launch repeats what its capture counted: app/step_graph.hpp).
  void add(const std::string& pattern, const PatternStats& d) {
    PatternStats& p = stats_[pattern];
    p.calls += d.calls;
    for (int l = 0; l < 3; ++l) p.messages[l] += d.messages[l], p.bytes[l] += d.bytes[l];
  }
  const std::map<std::string, PatternStats>& stats() const { return stats_; }
  void reset() { stats_.clear(); }
  // Puts back a copy of stats() (a failed graph capture's counts are dropped so).
  void set_stats(std::map<std::string, PatternStats> s) { stats_ = std::move(s); }
  // --trace: where patterns report each message with its peer and times (null: off).
  void set_trace(MessageTrace* trace) { trace_ = trace; }
  MessageTrace* trace() const { return trace_; }

 private:
  MessageTrace* trace_ = nullptr;
  std::map<std::string, PatternStats> stats_;
};

}  // namespace beatnik::comm
