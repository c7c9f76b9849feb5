#pragma once
// Named timer regions (e.g. "halo.zw", "fft.reshape"). Each region accumulates time and a call
// count; the driver reduces them over ranks for the summary table and the results file.
//
// Host runs read the host clock. Device runs give the timers a DeviceClock: each region start
// and stop queues a timestamp (a CUDA event) behind the work already queued, so a region
// measures the device work it queued without stopping the host; resolve() (once per step,
// after the step's fence) turns the timestamps into seconds. Every region is also an NVTX
// range when built with CUDA, so profilers show the same names.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace beatnik {

class TraceRecorder;

// Timestamps queued in the device's work stream.
class DeviceClock {
 public:
  virtual ~DeviceClock() = default;
  // Queues a timestamp now; returns its handle.
  virtual int record() = 0;
  // Seconds from timestamp a to b (waits until b has been reached).
  virtual double seconds_between(int a, int b) = 0;
  // Every handle handed out so far may be reused.
  virtual void recycle() = 0;
};

class Timers {
 public:
  struct Stat {
    double seconds = 0.0;
    long calls = 0;
  };

  Timers();
  ~Timers();
  void set_device_clock(std::unique_ptr<DeviceClock> clock);
  // --trace: every region start and stop also goes to `trace` (host wall time, also in device
  // runs: there a phase is the span in which the host queued its work). Null: off.
  void set_trace(TraceRecorder* trace) { trace_ = trace; }

  // While a CUDA graph is captured (app/step_graph.hpp) no work runs: regions then count their
  // calls only (no timestamp, no time), and the graph's launches add those counts again.
  void set_count_only(bool on) { count_only_ = on; }

  void start(const std::string& name);
  void stop(const std::string& name);
  // Folds the device timestamps of finished regions into the statistics (device runs).
  void resolve();
  // Adds time measured by the caller (e.g. the part of a transfer hidden behind computation).
  void add(const std::string& name, double seconds, long calls = 1) {
    Stat& s = stats_[name];
    s.seconds += seconds;
    s.calls += calls;
  }

  const std::map<std::string, Stat>& stats() const { return stats_; }
  // Puts back a copy of stats() (a failed graph capture's call counts are dropped so).
  void set_stats(std::map<std::string, Stat> s) { stats_ = std::move(s); }
  void reset();

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
  struct Pending {
    std::string name;
    int a, b;
  };
  std::map<std::string, Stat> stats_;
  std::map<std::string, Clock::time_point> open_;
  std::map<std::string, int> open_device_;
  std::vector<Pending> pending_;
  std::unique_ptr<DeviceClock> clock_;
  TraceRecorder* trace_ = nullptr;
  bool count_only_ = false;
};

// Seconds since an arbitrary fixed point (monotonic).
double wall_seconds();

}  // namespace beatnik
