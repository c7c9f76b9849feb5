#include "beatnik/base/timers.hpp"

#include <thread>

#include "beatnik/base/error.hpp"
#include "beatnik/base/region_delay.hpp"
#include "beatnik/base/trace.hpp"

#if defined(BEATNIK_WITH_NVTX)
#include <nvtx3/nvToolsExt.h>
#endif

namespace beatnik {

std::function<double(const std::string&)> region_delay_hook;

Timers::Timers() = default;
Timers::~Timers() = default;

void Timers::set_device_clock(std::unique_ptr<DeviceClock> clock) {
  reset();
  clock_ = std::move(clock);
}

void Timers::start(const std::string& name) {
#if defined(BEATNIK_WITH_NVTX)
  nvtxRangePushA(name.c_str());
#endif
  if (count_only_) return;
  if (trace_) trace_->phase_start(name, wall_seconds());
  if (clock_) open_device_[name] = clock_->record();
  else open_[name] = Clock::now();
  // At the start, so that the pattern's own exchange (after it) absorbs the ranks' different
  // wake-up times and the next pattern starts in step. Sleeps: a spin would use up the rank's
  // share of an oversubscribed core and get it preempted in later patterns.
  if (region_delay_hook)
    if (const double d = region_delay_hook(name); d > 0) std::this_thread::sleep_for(std::chrono::duration<double>(d));
}

void Timers::stop(const std::string& name) {
#if defined(BEATNIK_WITH_NVTX)
  nvtxRangePop();
#endif
  if (count_only_) {
    stats_[name].calls += 1;
    return;
  }
  if (trace_) trace_->phase_stop(name, wall_seconds());
  if (clock_) {
    auto it = open_device_.find(name);
    if (it == open_device_.end()) throw Error("timer region '" + name + "' stopped but never started");
    pending_.push_back(Pending{name, it->second, clock_->record()});
    open_device_.erase(it);
    stats_[name].calls += 1;
    return;
  }
  auto it = open_.find(name);
  if (it == open_.end()) throw Error("timer region '" + name + "' stopped but never started");
  Stat& s = stats_[name];
  s.seconds += std::chrono::duration<double>(Clock::now() - it->second).count();
  s.calls += 1;
  open_.erase(it);
}

void Timers::resolve() {
  if (!clock_) return;
  for (const Pending& p : pending_) stats_[p.name].seconds += clock_->seconds_between(p.a, p.b);
  pending_.clear();
  // Handles of still-open regions must survive; recycle only when none is open.
  if (open_device_.empty()) clock_->recycle();
}

void Timers::reset() {
  stats_.clear();
  open_.clear();
  open_device_.clear();
  pending_.clear();
  if (clock_) clock_->recycle();
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace beatnik
