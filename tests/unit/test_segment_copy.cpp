// exec::SegmentCopy against the pieces copied one by one in the test: uneven pieces (empty, one
// double, long ones) scattered over a source array into disjoint places of a destination that
// keeps a sentinel wherever no piece lands. Built twice: host (test_segment_copy) and, in the
// CUDA build, device (test_segment_copy_device, needs a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/segment_copy.hpp"
#include "beatnik/exec/space.hpp"

using namespace beatnik;

namespace {

#if defined(SEGMENT_COPY_ON_DEVICE)
const exec::Space kSpace = exec::Space::Device;
#else
const exec::Space kSpace = exec::Space::Host;
#endif

}  // namespace

TEST(SegmentCopy, EveryPieceLandsAndNothingElseMoves) {
  if (kSpace == exec::Space::Device) ASSERT_GT(exec::device_count(), 0) << "the device test needs a visible GPU";
  std::mt19937 rng(7);
  const long n = 300000;
  std::vector<double> src(n);
  for (long k = 0; k < n; ++k) src[k] = 0.5 + double(k);
  // Pieces of lengths 0, 1, short and long, from random source places, packed into the
  // destination in a shuffled order with gaps between them.
  std::vector<long> lens;
  for (int k = 0; k < 2000; ++k) lens.push_back(k % 7 == 0 ? 0 : k % 11 == 0 ? 1 : long(rng() % 200));
  lens.push_back(70000);
  lens.push_back(65536);
  std::vector<long> order(lens.size());
  std::iota(order.begin(), order.end(), 0L);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<long> from(lens.size()), to(lens.size());
  long at = 0;
  for (long k : order) {
    to[k] = at + 3;  // a gap of 3 before every piece
    at = to[k] + lens[k];
    from[k] = long(rng() % (n - lens[k]));
  }
  const long m = at + 5;
  const double sentinel = -1.0;
  std::vector<double> want(m, sentinel);
  for (size_t k = 0; k < lens.size(); ++k)
    std::copy(src.begin() + from[k], src.begin() + from[k] + lens[k], want.begin() + to[k]);

  exec::Buffer<double> s(kSpace, n), d(kSpace, m);
  exec::copy(s.data(), kSpace, src.data(), exec::Space::Host, n);
  std::vector<double> init(m, sentinel);
  exec::copy(d.data(), kSpace, init.data(), exec::Space::Host, m);
  std::vector<exec::SegmentCopy::Piece> pieces;
  for (size_t k = 0; k < lens.size(); ++k) pieces.push_back({s.data() + from[k], d.data() + to[k], lens[k]});
  exec::SegmentCopy copy(kSpace);
  copy.run(pieces);
  copy.run(pieces);  // again, reusing its buffers: the same result
  std::vector<double> got(m);
  exec::copy(got.data(), exec::Space::Host, d.data(), kSpace, m);
  EXPECT_EQ(got, want);
  copy.run({});  // nothing to copy: returns
}
