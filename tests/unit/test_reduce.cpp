// exec::reduce_sum / reduce_max (exec/reduce.hpp), which the run's checksums use: the sum against
// a long-double sum of the same values, bitwise the same over repeated calls (and on the host
// over thread counts: fixed chunks, not an OpenMP reduction); the maximum exact, a NaN anywhere
// winning it; empty and small ranges. Built twice: host (test_reduce) and, in the CUDA build,
// device (test_reduce_device.cpp includes this file compiled by nvcc; needs a GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/reduce.hpp"
#include "support/test_support.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

using namespace beatnik;

namespace {

#if defined(REDUCE_ON_DEVICE)
const exec::Space kSpace = exec::Space::Device;
#else
const exec::Space kSpace = exec::Space::Host;
#endif

// n values of both signs over 24 decades: a sum whose bits depend on the order of its additions.
std::vector<double> wild(long n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> m(-1.0, 1.0), e(-12.0, 12.0);
  std::vector<double> v(n);
  for (auto& x : v) x = m(rng) * std::pow(10.0, e(rng));
  return v;
}

// The values in the tested space (a device copy there).
struct Values {
  explicit Values(const std::vector<double>& v) : buf(kSpace, v.size()) {
    exec::copy(buf.data(), kSpace, v.data(), exec::Space::Host, v.size());
  }
  // Over the first n values (all by default).
  double sum(long n = -1) const {
    const double* p = buf.data();
    return exec::reduce_sum(kSpace, n < 0 ? static_cast<long>(buf.size()) : n,
                            [=] BEATNIK_HOST_DEVICE(long k) { return p[k]; });
  }
  double max(long n = -1) const {
    const double* p = buf.data();
    return exec::reduce_max(kSpace, n < 0 ? static_cast<long>(buf.size()) : n,
                            [=] BEATNIK_HOST_DEVICE(long k) { return p[k]; });
  }
  exec::Buffer<double> buf;
};

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void need_device() {
#if defined(REDUCE_ON_DEVICE)
  ASSERT_GT(exec::device_count(), 0) << "the CUDA build's device tests need a visible GPU";
#endif
}

}  // namespace

TEST(Reduce, SumIsTheLongDoubleSumAndTheSameBitsEveryCall) {
  need_device();
  for (long n : {1L, 255L, 256L, 257L, 100003L, 1000003L}) {
    const std::vector<double> v = wild(n, 7 + static_cast<unsigned>(n));
    long double ref = 0, mag = 0;
    for (double x : v) ref += x, mag += std::fabs(x);
    const Values d(v);
    const double s = d.sum();
    EXPECT_LE(std::fabs(s - static_cast<double>(ref)), 1e-12 * static_cast<double>(mag)) << "n " << n;
    for (int rep = 0; rep < 20; ++rep) EXPECT_TRUE(same_bits(d.sum(), s)) << "n " << n << ": call " << rep;
  }
}

#if !defined(REDUCE_ON_DEVICE) && defined(_OPENMP)
TEST(Reduce, HostSumIsTheSameBitsOnAnyThreadCount) {
  const Values d(wild(300007, 3));
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  const double one = d.sum();
  for (int t : {2, 3, 4, 7}) {
    omp_set_num_threads(t);
    EXPECT_TRUE(same_bits(d.sum(), one)) << t << " threads";
  }
  omp_set_num_threads(before);
}
#endif

TEST(Reduce, MaxIsExactAndANaNAnywhereWinsIt) {
  need_device();
  for (long n : {1L, 257L, 1000003L}) {
    std::vector<double> v = wild(n, 11 + static_cast<unsigned>(n));
    double ref = -std::numeric_limits<double>::infinity();
    for (double x : v) ref = std::max(ref, x);
    EXPECT_EQ(Values(v).max(), ref) << "n " << n;
    for (long at : {0L, n / 2, n - 1}) {  // first, middle and last block
      std::vector<double> w = v;
      w[at] = std::numeric_limits<double>::quiet_NaN();
      EXPECT_TRUE(std::isnan(Values(w).max())) << "n " << n << ": NaN at " << at << " lost";
    }
  }
}

TEST(Reduce, EmptyRangesGiveTheIdentities) {
  need_device();
  const Values one({1.0});
  EXPECT_EQ(one.sum(0), 0.0);
  EXPECT_EQ(one.max(0), -std::numeric_limits<double>::infinity());
}
