// Step-time statistics (app/step_statistics.hpp) and the per-step region series
// (base/region_series.hpp) against values worked out by hand in the comments.
#include <gtest/gtest.h>

#include "beatnik/app/step_statistics.hpp"
#include "beatnik/base/region_series.hpp"

using namespace beatnik;
using namespace beatnik::app;

namespace {

TEST(StepStatistics, OddLength) {
  // sorted 1 2 3: p90 at position 0.9*2 = 1.8 -> 2 + 0.8*(3-2); |x - 2| = 1 0 1 -> MAD 1.
  const Spread s = spread_of({3, 1, 2});
  EXPECT_EQ(s.count, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.p50, 2);
  EXPECT_DOUBLE_EQ(s.p90, 2.8);
  EXPECT_DOUBLE_EQ(s.p99, 2.98);
  EXPECT_DOUBLE_EQ(s.max, 3);
  EXPECT_DOUBLE_EQ(s.mean, 2);
  EXPECT_DOUBLE_EQ(s.mad, 1);
}

TEST(StepStatistics, EvenLength) {
  // sorted 1 2 3 4: p50 at 1.5 -> 2.5, p90 at 2.7 -> 3.7, p99 at 2.97 -> 3.97;
  // |x - 2.5| = 1.5 0.5 0.5 1.5 -> MAD (0.5 + 1.5) / 2 = 1.
  const Spread s = spread_of({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(s.p50, 2.5);
  EXPECT_DOUBLE_EQ(s.p90, 3.7);
  EXPECT_DOUBLE_EQ(s.p99, 3.97);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.mad, 1);
}

TEST(StepStatistics, HundredAndOneValues) {
  // 0..100: quantile q sits exactly on the value 100 q.
  std::vector<double> v;
  for (int k = 100; k >= 0; --k) v.push_back(k);
  const Spread s = spread_of(v);
  EXPECT_DOUBLE_EQ(s.p50, 50);
  EXPECT_DOUBLE_EQ(s.p90, 90);
  EXPECT_DOUBLE_EQ(s.p99, 99);
  EXPECT_DOUBLE_EQ(s.mad, 25);  // |k - 50| for k = 0..100: 0, 1,1, 2,2, ... median 25
}

TEST(StepStatistics, TiesGiveZeroMad) {
  // 5 5 5 5 9: p50 5, MAD 0; p90 at 3.6 -> 5 + 0.6*4.
  const Spread s = spread_of({5, 5, 9, 5, 5});
  EXPECT_DOUBLE_EQ(s.p50, 5);
  EXPECT_DOUBLE_EQ(s.mad, 0);
  EXPECT_DOUBLE_EQ(s.p90, 7.4);
  EXPECT_DOUBLE_EQ(outlier_threshold(s), 5);
  const auto out = find_outliers({5, 5, 9, 5, 5}, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].index, 2);
}

TEST(StepStatistics, SingleStep) {
  const Spread s = spread_of({7});
  EXPECT_EQ(s.count, 1);
  EXPECT_DOUBLE_EQ(s.min, 7);
  EXPECT_DOUBLE_EQ(s.p50, 7);
  EXPECT_DOUBLE_EQ(s.p99, 7);
  EXPECT_DOUBLE_EQ(s.max, 7);
  EXPECT_DOUBLE_EQ(s.mad, 0);
  EXPECT_TRUE(window_sums({7}, 2).empty());
  EXPECT_EQ(spread_of(window_sums({7}, 2)).count, 0);
  EXPECT_TRUE(find_outliers({7}, {}).empty());
}

TEST(StepStatistics, WindowOfTwo) {
  EXPECT_EQ(window_sums({1, 2, 3, 4}, 2), (std::vector<double>{3, 5, 7}));
  EXPECT_EQ(window_sums({1, 2}, 2), (std::vector<double>{3}));
  const Spread w = spread_of(window_sums({1, 2, 3, 4}, 2));
  EXPECT_DOUBLE_EQ(w.p50, 5);
  EXPECT_DOUBLE_EQ(w.mad, 2);
}

TEST(StepStatistics, OutlierRuleAndSlowRegions) {
  // sorted 2 3 3 3 4 8 9: p50 3; |x - 3| sorted 0 0 0 1 1 5 6 -> MAD 1; threshold 3 + 5 = 8.
  // 8 equals the threshold (not an outlier), 9 exceeds it.
  const std::vector<double> t = {3, 3, 3, 2, 4, 8, 9};
  const std::map<std::string, std::vector<double>> regions = {
      {"a", {1, 1, 1, 1, 1, 1, 5}},             // excess 4
      {"b", {0, 0, 0, 0, 0, 0, 2}},             // excess 2
      {"c", {1, 1, 1, 1, 1, 1, 1.5}},           // excess 0.5
      {"d", {2, 2, 2, 2, 2, 2, 2.25}},          // excess 0.25: fourth, left out
      {"e", {3, 3, 3, 3, 3, 3, 1}}};            // faster than usual
  const auto out = find_outliers(t, regions);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].index, 6);
  EXPECT_DOUBLE_EQ(out[0].seconds, 9);
  ASSERT_EQ(out[0].regions.size(), 3u);
  EXPECT_EQ(out[0].regions[0].name, "a");
  EXPECT_DOUBLE_EQ(out[0].regions[0].seconds, 5);
  EXPECT_DOUBLE_EQ(out[0].regions[0].median, 1);
  EXPECT_EQ(out[0].regions[1].name, "b");
  EXPECT_EQ(out[0].regions[2].name, "c");
  // Only regions slower than their median are named.
  const auto few = find_outliers(t, {{"e", regions.at("e")}, {"c", regions.at("c")}});
  ASSERT_EQ(few.size(), 1u);
  ASSERT_EQ(few[0].regions.size(), 1u);
  EXPECT_EQ(few[0].regions[0].name, "c");
}

TEST(StepStatistics, EmptySeries) {
  const Spread s = spread_of({});
  EXPECT_EQ(s.count, 0);
  EXPECT_TRUE(find_outliers({}, {}).empty());
}

TEST(RegionSeries, DifferencesOfTotals) {
  RegionSeries r;
  r.record({{"a", {1.0, 1}}});
  r.record({{"a", {3.0, 2}}, {"b", {2.0, 1}}});  // b first seen in step 2
  r.record({{"a", {3.0, 2}}, {"b", {5.0, 2}}});
  EXPECT_EQ(r.steps(), 3);
  EXPECT_EQ(r.series().at("a"), (std::vector<double>{1, 2, 0}));
  EXPECT_EQ(r.series().at("b"), (std::vector<double>{0, 2, 3}));
  r.reset();
  r.record({{"a", {0.5, 1}}});  // totals restart from zero with Timers::reset
  EXPECT_EQ(r.series().at("a"), (std::vector<double>{0.5}));
  EXPECT_EQ(r.series().count("b"), 0u);
}

}  // namespace
