#include "beatnik/base/trace.hpp"

namespace beatnik {

TraceRecorder::TraceRecorder(std::size_t max_events) : max_events_(max_events) {}

int TraceRecorder::intern(const std::string& name) {
  auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  const int id = static_cast<int>(names_.size());
  names_.push_back(name);
  ids_.emplace(name, id);
  return id;
}

bool TraceRecorder::room() {
  if (events_.size() < max_events_) return true;
  ++dropped_;
  return false;
}

void TraceRecorder::begin_step(long step) {
  step_ = step;
  open_phase_.clear();
  open_messages_.clear();
}

void TraceRecorder::end_step(double t) {
  // A message still open here was never completed by its pattern: it ends with the step.
  for (auto& [owner, list] : open_messages_)
    for (std::size_t i : list) events_[i].t1 = t;
  open_messages_.clear();
  open_phase_.clear();
  step_ = 0;
}

void TraceRecorder::phase_start(const std::string& name, double t) {
  if (!recording()) return;
  open_phase_[intern(name)] = t;
}

void TraceRecorder::phase_stop(const std::string& name, double t) {
  if (!recording()) return;
  auto it = open_phase_.find(intern(name));
  if (it == open_phase_.end()) return;  // started before the step began
  const double t0 = it->second;
  open_phase_.erase(it);
  if (!room()) return;
  Event e;
  e.t0 = t0;
  e.t1 = t;
  e.name = intern(name);
  e.step = static_cast<std::int32_t>(step_);
  e.kind = Phase;
  events_.push_back(e);
}

bool TraceRecorder::add_message(Kind kind, const std::string& pattern, int peer, long bytes, double t0, double t1) {
  if (!recording() || !room()) return false;
  Event e;
  e.t0 = t0;
  e.t1 = t1;
  e.bytes = bytes;
  e.name = intern(pattern);
  e.peer = peer;
  e.step = static_cast<std::int32_t>(step_);
  e.kind = kind;
  e.seq = calls_[e.name];
  events_.push_back(e);
  return true;
}

void TraceRecorder::message(Kind kind, const std::string& pattern, const void* owner, int peer, long bytes,
                            double t0) {
  if (add_message(kind, pattern, peer, bytes, t0, t0)) open_messages_[owner].push_back(events_.size() - 1);
}

void TraceRecorder::transfer(Kind kind, const std::string& pattern, int peer, long bytes, double t0, double t1) {
  add_message(kind, pattern, peer, bytes, t0, t1);
}

void TraceRecorder::complete(const std::string& pattern, const void* owner, double t1) {
  calls_[intern(pattern)] += 1;
  auto it = open_messages_.find(owner);
  if (it == open_messages_.end()) return;
  for (std::size_t i : it->second) events_[i].t1 = t1;
  open_messages_.erase(it);
}

}  // namespace beatnik
