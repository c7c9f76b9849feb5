// --buffer-align and --ranks-per-gpu at the level where they act: host buffers and pinned
// staging buffers start at the alignment asked for; bad alignments are refused; the GPU a
// rank binds to with K ranks per GPU (a CUDA build with a GPU only).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <thread>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/exec/memory.hpp"

using namespace beatnik;

namespace {

bool aligned(const void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

// Restores the default alignment whatever a test does.
struct AlignmentGuard {
  ~AlignmentGuard() { exec::set_host_alignment(4096); }
};

}  // namespace

TEST(BufferAlign, HostAndStagingBuffersStartAtTheAlignmentAskedFor) {
  AlignmentGuard g;
  EXPECT_EQ(exec::host_alignment(), 4096u);
  for (std::size_t a : {std::size_t(64), std::size_t(4096), std::size_t(65536), std::size_t(2) << 20}) {
    exec::set_host_alignment(a);
    for (std::size_t n : {1, 3, 1000, 100000}) {  // sizes that are not multiples of the alignment
      exec::Buffer<double> b(exec::Space::Host, n);
      EXPECT_TRUE(aligned(b.data(), a)) << "alignment " << a << ", " << n << " doubles";
      b.data()[n - 1] = 1.0;  // the whole buffer is usable
      comm::PinnedBuffer pinned;
      pinned.reserve(n * sizeof(double) + 1);
      EXPECT_TRUE(aligned(pinned.data(), std::max<std::size_t>(a, 4096))) << "staging, alignment " << a;
      pinned.data()[n * sizeof(double)] = 1;
    }
  }
}

TEST(BufferAlign, OnlyPowersOfTwoFromEightBytesToAGibibyte) {
  AlignmentGuard g;
  for (long bad : {0L, -4096L, 3L, 4L, 12288L, 1L << 31}) EXPECT_THROW(exec::check_host_alignment(bad), InputError) << bad;
  for (long good : {8L, 64L, 4096L, 1L << 30}) EXPECT_NO_THROW(exec::check_host_alignment(good)) << good;
  EXPECT_THROW(exec::set_host_alignment(48), InputError);
  EXPECT_EQ(exec::host_alignment(), 4096u);  // a refused value changes nothing
}

TEST(RanksPerGpu, KConsecutiveNodeLocalRanksShareAGpu) {
  if (exec::device_count() == 0) {
    // Without a GPU every binding is refused with a reason, whatever K.
    EXPECT_THROW(exec::bind_device(0, -1, 2, 4), NotAvailable);
    return;
  }
  const int n = exec::device_count();
  for (int k = 1; k <= 4; ++k)
    for (int local_size = 1; local_size <= k * n; ++local_size)
      for (int r = 0; r < local_size; ++r) EXPECT_EQ(exec::bind_device(r, -1, k, local_size), r / k);
  // More ranks on the node than K per GPU can hold: refused on every rank alike.
  for (int r = 0; r < n + 1; ++r) EXPECT_THROW(exec::bind_device(r, -1, 1, n + 1), NotAvailable);
  exec::bind_device(0, -1);
}

// current_device() names the calling thread's GPU (what a worker thread must select before it
// queues device work: a new thread starts on GPU 0); −1 without one.
TEST(RanksPerGpu, CurrentDeviceIsTheThreadsSelection) {
  if (exec::device_count() == 0) {
    EXPECT_EQ(exec::current_device(), -1);
    return;
  }
  const int last = exec::device_count() - 1;
  exec::set_device(last);
  EXPECT_EQ(exec::current_device(), last);
  int other = -2;
  std::thread([&] { other = exec::current_device(); }).join();
  EXPECT_EQ(other, 0);  // a new thread's own selection
  exec::set_device(0);
  EXPECT_EQ(exec::current_device(), 0);
}
