#pragma once
// Step-time statistics over the measured steps of a run (docs/measurement.md): quantiles,
// mean and median absolute deviation, sums over a sliding window, and outlier steps with the
// timer regions that were slow in them. Plain numbers in, plain numbers out: no MPI, so the
// report reduces over ranks first and the rules here are unit-tested on their own.
#include <map>
#include <string>
#include <vector>

namespace beatnik::app {

// Summary of one series of values (count 0 and zeros for an empty series).
struct Spread {
  long count = 0;
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
  double mad = 0;  // median of |x - p50| (not scaled to a normal sigma)
};

// Quantile q in [0, 1] of sorted values, interpolated linearly between the two nearest ranks
// (position q·(n-1); numpy's default): q = 0.5 is the usual median.
double quantile_sorted(const std::vector<double>& sorted, double q);
double median(std::vector<double> v);
Spread spread_of(std::vector<double> v);

// Sums of `width` consecutive values (n - width + 1 of them; none when n < width).
std::vector<double> window_sums(const std::vector<double>& v, int width);

// The outlier rule: a step is an outlier when its time exceeds p50 + kOutlierMads · MAD.
inline constexpr double kOutlierMads = 5.0;
double outlier_threshold(const Spread& s);

struct RegionExcess {
  std::string name;
  double seconds = 0;  // the region's time in the outlier step
  double median = 0;   // its median over the measured steps
};

struct Outlier {
  long index = 0;  // position in the series (0 = first measured step)
  double seconds = 0;
  std::vector<RegionExcess> regions;  // at most `top`, largest excess first, only excess > 0
};

// Steps of `step_seconds` above the threshold, each with the `top` regions of `regions`
// (name -> seconds per step, same length as step_seconds) whose time in that step exceeds their
// own median by the most.
std::vector<Outlier> find_outliers(const std::vector<double>& step_seconds,
                                   const std::map<std::string, std::vector<double>>& regions, int top = 3);

}  // namespace beatnik::app
