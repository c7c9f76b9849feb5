// exec::reduce_sum / reduce_max (exec/reduce.hpp), which the run's checksums use: the sum against
// a long-double sum of the same values, bitwise the same over repeated calls (and on the host
// over thread counts: fixed chunks, not an OpenMP reduction); the maximum exact, a NaN anywhere
// winning it; empty and small ranges; the host bounding box, NaN skipped. Built twice: host
// (test_reduce) and, in the CUDA build, device (test_reduce_device.cpp includes this file
// compiled by nvcc; needs a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "beatnik/exec/bounding_box.hpp"
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

#if !defined(REDUCE_ON_DEVICE)
// The host bounding box (exec/bounding_box.hpp; the spatial decomposition's outer cuts): the
// exact minimum and maximum per coordinate, NaN positions skipped wherever they lie, an all-NaN
// range the empty box (+inf, −inf).
TEST(Reduce, HostBoundingBoxIsExactAndSkipsNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  exec::BoundingBox box(exec::Space::Host);
  for (long n : {1L, 257L, 1000003L}) {
    std::vector<double> c[3] = {wild(n, 21), wild(n, 22), wild(n, 23)};
    double lo_ref[3], hi_ref[3];
    for (int d = 0; d < 3; ++d) {
      lo_ref[d] = *std::min_element(c[d].begin(), c[d].end());
      hi_ref[d] = *std::max_element(c[d].begin(), c[d].end());
    }
    double lo[3], hi[3];
    box.compute(c[0].data(), c[1].data(), c[2].data(), n, lo, hi);
    for (int d = 0; d < 3; ++d) EXPECT_EQ(lo[d], lo_ref[d]) << "n " << n << " dim " << d;
    for (int d = 0; d < 3; ++d) EXPECT_EQ(hi[d], hi_ref[d]) << "n " << n << " dim " << d;
    if (n < 3) continue;
    // A NaN in place of the extreme and at both ends: the box of the rest.
    for (int d = 0; d < 3; ++d) {
      const long at = std::min_element(c[d].begin(), c[d].end()) - c[d].begin();
      c[d][at] = c[d][0] = c[d][n - 1] = nan;
    }
    box.compute(c[0].data(), c[1].data(), c[2].data(), n, lo, hi);
    for (int d = 0; d < 3; ++d) {
      double l = inf, h = -inf;
      for (double x : c[d])
        if (!std::isnan(x)) l = std::min(l, x), h = std::max(h, x);
      EXPECT_EQ(lo[d], l) << "n " << n << " dim " << d << ": NaN not skipped";
      EXPECT_EQ(hi[d], h) << "n " << n << " dim " << d << ": NaN not skipped";
    }
  }
  const std::vector<double> all_nan(5, nan);
  double lo[3], hi[3];
  box.compute(all_nan.data(), all_nan.data(), all_nan.data(), 5, lo, hi);
  for (int d = 0; d < 3; ++d) EXPECT_TRUE(lo[d] == inf && hi[d] == -inf) << "dim " << d;
}
#endif
