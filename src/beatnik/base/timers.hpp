#pragma once
// Named timer regions (e.g. "halo.zw", "fft.reshape"). Each region accumulates wall time and a
// call count; the driver reduces them over ranks for the summary table and the results file.
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace beatnik {

class Timers {
 public:
  struct Stat {
    double seconds = 0.0;
    long calls = 0;
  };

  // `sync` is called before reading the clock so that asynchronous (GPU) work is attributed to
  // the region that queued it. The host backend needs none.
  void set_sync(std::function<void()> sync) { sync_ = std::move(sync); }

  void start(const std::string& name);
  void stop(const std::string& name);
  // Adds time measured by the caller (e.g. the part of a transfer hidden behind computation).
  void add(const std::string& name, double seconds, long calls = 1) {
    Stat& s = stats_[name];
    s.seconds += seconds;
    s.calls += calls;
  }

  const std::map<std::string, Stat>& stats() const { return stats_; }
  void reset() { stats_.clear(); open_.clear(); }

  class Scope {
   public:
    Scope(Timers* t, std::string name) : t_(t), name_(std::move(name)) {
      if (t_) t_->start(name_);
    }
    ~Scope() {
      if (t_) t_->stop(name_);
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Timers* t_;
    std::string name_;
  };

 private:
  using Clock = std::chrono::steady_clock;
  std::map<std::string, Stat> stats_;
  std::map<std::string, Clock::time_point> open_;
  std::function<void()> sync_;
};

// Seconds since an arbitrary fixed point (monotonic).
double wall_seconds();

}  // namespace beatnik
