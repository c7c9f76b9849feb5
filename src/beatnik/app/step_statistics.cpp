#include "beatnik/app/step_statistics.hpp"

#include <algorithm>
#include <cmath>

namespace beatnik::app {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double pos = q * double(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return quantile_sorted(v, 0.5);
}

Spread spread_of(std::vector<double> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.count = static_cast<long>(v.size());
  s.min = v.front();
  s.max = v.back();
  s.p50 = quantile_sorted(v, 0.5);
  s.p90 = quantile_sorted(v, 0.9);
  s.p99 = quantile_sorted(v, 0.99);
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(v.size());
  std::vector<double> dev(v.size());
  for (size_t k = 0; k < v.size(); ++k) dev[k] = std::fabs(v[k] - s.p50);
  s.mad = median(std::move(dev));
  return s;
}

std::vector<double> window_sums(const std::vector<double>& v, int width) {
  std::vector<double> out;
  if (width < 1 || v.size() < size_t(width)) return out;
  for (size_t k = 0; k + width <= v.size(); ++k) {
    double sum = 0;
    for (int j = 0; j < width; ++j) sum += v[k + j];
    out.push_back(sum);
  }
  return out;
}

double outlier_threshold(const Spread& s) { return s.p50 + kOutlierMads * s.mad; }

std::vector<Outlier> find_outliers(const std::vector<double>& step_seconds,
                                   const std::map<std::string, std::vector<double>>& regions, int top) {
  std::vector<Outlier> out;
  const double limit = outlier_threshold(spread_of(step_seconds));
  std::map<std::string, double> medians;
  for (const auto& [name, series] : regions) medians[name] = median(series);
  for (size_t k = 0; k < step_seconds.size(); ++k) {
    if (!(step_seconds[k] > limit)) continue;
    Outlier o{static_cast<long>(k), step_seconds[k], {}};
    for (const auto& [name, series] : regions)
      if (k < series.size() && series[k] > medians[name]) o.regions.push_back({name, series[k], medians[name]});
    // Largest excess first; ties by name so the order does not depend on the map.
    std::sort(o.regions.begin(), o.regions.end(), [](const RegionExcess& a, const RegionExcess& b) {
      const double ea = a.seconds - a.median, eb = b.seconds - b.median;
      return ea != eb ? ea > eb : a.name < b.name;
    });
    if (o.regions.size() > size_t(std::max(top, 0))) o.regions.resize(std::max(top, 0));
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace beatnik::app
