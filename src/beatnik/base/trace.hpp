#pragma once
// What --trace records on one rank: every timed phase (a Timers region) and every message a
// communication pattern sends or receives, each with its start and end (wall seconds), its step
// and, for messages, the peer (a rank of the run's communicator) and the bytes. No MPI here: the
// comm layer translates peers (comm/message_trace.hpp), the app gathers and writes
// (app/trace_output.hpp, io/trace_files.hpp).
//
// A message is open from the moment its pattern posts it until the pattern says the exchange
// that carried it is complete (complete(owner)); patterns that only learn their message list
// once the transfer is done give the time the transfer began as the start.
//
// Cost: nothing when off (Timers and CommStats hold a null pointer). When on, one Event (48
// bytes) per phase call and per message, plus a name table; at most max_events are kept (the
// rest are counted as dropped, never reallocated beyond that bound).
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace beatnik {

class TraceRecorder {
 public:
  // Get: a one-sided read (MPI_Get) recorded by the rank that reads, `peer` the rank read from;
  // the owner records nothing (it takes no part in a passive-target get).
  enum Kind : std::int32_t { Phase = 0, Send = 1, Recv = 2, Get = 3 };
  struct Event {
    double t0 = 0, t1 = 0;     // wall seconds (wall_seconds())
    std::int64_t bytes = 0;    // messages only
    std::int32_t name = 0;     // index into names(): the phase or the pattern
    std::int32_t peer = -1;    // messages only: rank of the run's communicator
    std::int32_t step = 0;     // the step being taken (1-based, as steps_done() after it)
    std::int32_t kind = Phase;
    std::int32_t seq = 0;      // messages only: the pattern's call on this rank (0, 1, ...;
                               // patterns are collective, so equal on every rank of a call)
    std::int32_t pad = 0;
  };
  static_assert(sizeof(Event) == 48, "trace events are meant to stay small");

  explicit TraceRecorder(std::size_t max_events = std::size_t(1) << 20);

  // Only events between begin_step and end_step are kept (set-up and output are not steps).
  void begin_step(long step);
  void end_step(double t);
  bool recording() const { return step_ > 0; }

  void phase_start(const std::string& name, double t);
  void phase_stop(const std::string& name, double t);
  // A message of `pattern` posted by `owner` (the pattern object) at t0; open until complete().
  void message(Kind kind, const std::string& pattern, const void* owner, int peer, long bytes, double t0);
  // A message whose whole span is known when it is recorded (a get: posted at t0, flushed at t1).
  void transfer(Kind kind, const std::string& pattern, int peer, long bytes, double t0, double t1);
  // The call of `pattern` by `owner` ended (also when it had no message on this rank): its
  // messages end at t1 and the pattern's call count moves on.
  void complete(const std::string& pattern, const void* owner, double t1);

  const std::vector<Event>& events() const { return events_; }
  const std::vector<std::string>& names() const { return names_; }
  long dropped() const { return dropped_; }
  std::size_t max_events() const { return max_events_; }

 private:
  int intern(const std::string& name);
  bool room();
  // Records a message event (false: not recording, or no room).
  bool add_message(Kind kind, const std::string& pattern, int peer, long bytes, double t0, double t1);
  std::size_t max_events_;
  long step_ = 0;
  long dropped_ = 0;
  std::vector<Event> events_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, int> ids_;
  std::unordered_map<int, double> open_phase_;
  std::unordered_map<int, std::int32_t> calls_;  // per pattern, over the whole run
  std::unordered_map<const void*, std::vector<std::size_t>> open_messages_;
};

}  // namespace beatnik
