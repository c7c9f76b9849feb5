#include "beatnik/base/timers.hpp"

#include "beatnik/base/error.hpp"

namespace beatnik {

void Timers::start(const std::string& name) {
  if (sync_) sync_();
  open_[name] = Clock::now();
}

void Timers::stop(const std::string& name) {
  if (sync_) sync_();
  auto it = open_.find(name);
  if (it == open_.end()) throw Error("timer region '" + name + "' stopped but never started");
  Stat& s = stats_[name];
  s.seconds += std::chrono::duration<double>(Clock::now() - it->second).count();
  s.calls += 1;
  open_.erase(it);
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace beatnik
