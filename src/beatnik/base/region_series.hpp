#pragma once
// Seconds each timer region took in each step: the difference of the cumulative totals of
// Timers between two calls of record(). Device regions must be resolved before record()
// (Simulation::step already resolves once per step, after its closing fence).
#include <map>
#include <string>
#include <vector>

#include "beatnik/base/timers.hpp"

namespace beatnik {

class RegionSeries {
 public:
  // Closes one step: appends each region's seconds since the previous call. A region first
  // seen now gets zeros for the earlier steps; one not seen in this step gets a zero.
  void record(const std::map<std::string, Timers::Stat>& totals) {
    for (const auto& [name, stat] : totals) {
      std::vector<double>& s = series_[name];
      s.resize(steps_, 0.0);
      s.push_back(stat.seconds - last_[name]);
      last_[name] = stat.seconds;
    }
    ++steps_;
    for (auto& [name, s] : series_) s.resize(steps_, 0.0);
  }
  // Forget everything (with Timers::reset: the totals start again from zero).
  void reset() {
    series_.clear();
    last_.clear();
    steps_ = 0;
  }
  long steps() const { return steps_; }
  const std::map<std::string, std::vector<double>>& series() const { return series_; }

 private:
  std::map<std::string, std::vector<double>> series_;
  std::map<std::string, double> last_;
  long steps_ = 0;
};

}  // namespace beatnik
