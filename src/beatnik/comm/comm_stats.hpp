#pragma once
// Bytes and messages each communication pattern sent from this rank, split by where the
// receiver is: this rank itself, another rank on the same node, or another node.
#include <map>
#include <string>

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
  const std::map<std::string, PatternStats>& stats() const { return stats_; }
  void reset() { stats_.clear(); }
  // --trace: where patterns report each message with its peer and times (null: off).
  void set_trace(MessageTrace* trace) { trace_ = trace; }
  MessageTrace* trace() const { return trace_; }

 private:
  MessageTrace* trace_ = nullptr;
  std::map<std::string, PatternStats> stats_;
};

}  // namespace beatnik::comm
