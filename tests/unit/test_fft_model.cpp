// The FFT strategy affects performance only: a short low-order run under every reference
// configuration -H 0..7, every exchange algorithm, both spectrum layouts and both transforms
// (half spectrum r2c, full c2c) must give the state of the default -H 6 to round-off.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/test_support.hpp"

using namespace beatnik;

namespace {

constexpr long kSteps = 5;

app::Options base() {
  auto o = test::small_options(24);
  o.magnitude = 0.1;  // large enough that the Riesz term matters within 5 steps
  return o;
}

// True on every rank when rank 0's gathered state agrees with the reference.
bool agrees(const std::vector<double>& s, const std::vector<double>& ref, double& diff) {
  diff = test::world_rank() == 0 ? test::max_rel_diff(s, ref, 5) : 0.0;
  return test::all_ranks(diff <= 1e-12);
}

}  // namespace

TEST(FftStrategies, EveryReferenceConfigurationGivesTheSameRun) {
  auto o = base();
  o.heffte = 6;
  const auto ref = test::run_and_gather(o, kSteps);
  if (test::world_rank() == 0) ASSERT_FALSE(ref.empty());
  for (int h = 0; h < 8; ++h) {
    auto oh = base();
    oh.heffte = h;
    double d = 0;
    EXPECT_TRUE(agrees(test::run_and_gather(oh, kSteps), ref, d)) << "-H " << h << ": max rel diff " << d;
  }
}

TEST(FftStrategies, EveryExchangeAlgorithmAndSpectrumLayoutGivesTheSameRun) {
  auto o = base();
  const auto ref = test::run_and_gather(o, kSteps);
  for (int h : {0, 3, 6}) {
    for (const char* alg : {"alltoallv", "alltoall", "p2p", "p2p-pipelined"}) {
      for (const char* spec : {"intermediate", "input"}) {
        auto oa = base();
        oa.heffte = h;
        oa.fft_exchange = alg;
        oa.fft_spectrum = spec;
        double d = 0;
        EXPECT_TRUE(agrees(test::run_and_gather(oa, kSteps), ref, d))
            << "-H " << h << " --fft-exchange " << alg << " --fft-spectrum " << spec << ": max rel diff " << d;
      }
    }
  }
}

// The half spectrum (--fft-transform r2c, what auto picks on the host) and the full complex transform (c2c) give
// the same run on every intermediate, reorder and spectrum layout.
TEST(FftStrategies, HalfAndFullSpectrumGiveTheSameRun) {
  auto o = base();
  o.fft_transform = "c2c";
  const auto ref = test::run_and_gather(o, kSteps);
  for (int h : {4, 5, 6, 7})
    for (const char* spec : {"intermediate", "input"}) {
      auto oa = base();
      oa.heffte = h;
      oa.fft_spectrum = spec;
      oa.fft_transform = "r2c";
      double d = 0;
      EXPECT_TRUE(agrees(test::run_and_gather(oa, kSteps), ref, d))
          << "-H " << h << " --fft-spectrum " << spec << " --fft-transform r2c: max rel diff " << d;
    }
}

// The agreement above must not be trivial: a run whose Riesz input differs (other amplitude)
// is told apart by the same comparison.
TEST(FftStrategies, TheComparisonDetectsADifferentRun) {
  const auto ref = test::run_and_gather(base(), kSteps);
  auto o = base();
  o.magnitude = 0.1 * (1 + 1e-9);
  double d = 0;
  EXPECT_FALSE(agrees(test::run_and_gather(o, kSteps), ref, d)) << d;
}
