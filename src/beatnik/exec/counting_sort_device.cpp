// Device counting sort: CUB's radix sort of (key, item index) pairs on the key bits in use
// (a stable LSD sort, so equal keys keep their input order and the result is deterministic),
// then each key's first sorted position by a binary search over the sorted keys (one thread
// per key: balanced however unevenly the keys are filled, and no atomics). Compiled by nvcc in
// the CUDA build (BEATNIK_KERNEL_SOURCES); the host build's stub is in counting_sort.cpp.
#include "beatnik/exec/counting_sort.hpp"
#include "beatnik/exec/parallel_for.hpp"

#if defined(BEATNIK_DEVICE_COMPILE)
#include <cub/device/device_radix_sort.cuh>

#include <string>

namespace beatnik::exec {
namespace {

// Free functions: nvcc's extended lambdas may not live in a private member function.
void set_all(long* p, long n, long v) {
  parallel_for(Space::Device, n, [=] BEATNIK_HOST_DEVICE(long k) { p[k] = v; });
}
void set_iota(long* p, long n) {
  parallel_for(Space::Device, n, [=] BEATNIK_HOST_DEVICE(long k) { p[k] = k; });
}
// off[key] = first sorted position whose key is >= key (a lower bound); off[K] = n.
void lower_bounds(const unsigned* sorted, long n, int K, long* off) {
  parallel_for(Space::Device, long(K) + 1, [=] BEATNIK_HOST_DEVICE(long key) {
    long lo = 0, hi = n;
    while (lo < hi) {
      const long mid = (lo + hi) / 2;
      if (long(sorted[mid]) < key) lo = mid + 1;
      else hi = mid;
    }
    off[key] = lo;
  });
}

}  // namespace

void CountingSort::sort_device(const int* keys) {
  const long n = n_;
  const int K = nkeys_;
  long* off = offsets_.data();
  if (n == 0) {
    set_all(off, long(K) + 1, 0);
    return;
  }
  if (n > 0x7fffffffL) throw Error("CountingSort: more than 2^31 - 1 items on the device");
  int bits = 1;  // keys are non-negative ints, so only their low bits take part
  while (bits < 31 && (1L << bits) < K) ++bits;
  grow(keys_sorted_, Space::Device, n);
  grow(iota_, Space::Device, n);
  long* iota = iota_.data();
  set_iota(iota, n);
  const auto* kin = reinterpret_cast<const unsigned*>(keys);
  auto* kout = reinterpret_cast<unsigned*>(keys_sorted_.data());
  std::size_t temp_bytes = 0;
  cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, kin, kout, iota, order_.data(),
                                                  static_cast<int>(n), 0, bits, detail::stream());
  if (e == cudaSuccess) {
    grow(temp_, Space::Device, temp_bytes);
    e = cub::DeviceRadixSort::SortPairs(temp_.data(), temp_bytes, kin, kout, iota, order_.data(),
                                        static_cast<int>(n), 0, bits, detail::stream());
  }
  if (e != cudaSuccess) throw Error(std::string("CountingSort: CUB radix sort failed: ") + cudaGetErrorString(e));
  lower_bounds(kout, n, K, off);
}

}  // namespace beatnik::exec
#endif
