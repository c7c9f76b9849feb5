// Host counting sort: each thread counts the keys of its contiguous chunk of the items, one
// scan over (key, thread) gives every thread its first slot per key, and each thread then
// scatters its chunk in input order, which keeps the sort stable for any thread count.
#include "beatnik/exec/counting_sort.hpp"

#include <algorithm>
#include <string>

#include "beatnik/base/error.hpp"
#include "beatnik/exec/parallel_for.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace beatnik::exec {

CountingSort::CountingSort(Space s) : space_(s) {}

void CountingSort::sort(const int* keys, long n, int nkeys) {
  if (n < 0 || nkeys < 1) throw Error("CountingSort: needs n >= 0 and at least one key");
  n_ = n;
  nkeys_ = nkeys;
  host_offsets_valid_ = false;
  grow(order_, space_, std::max<long>(n, 1));
  grow(offsets_, space_, std::size_t(nkeys) + 1);
  if (space_ == Space::Host) sort_host(keys);
  else sort_device(keys);
}

const std::vector<long>& CountingSort::host_offsets() const {
  if (!host_offsets_valid_) {
    host_offsets_.resize(std::size_t(nkeys_) + 1);
    copy(host_offsets_.data(), Space::Host, offsets_.data(), space_, host_offsets_.size());
    host_offsets_valid_ = true;
  }
  return host_offsets_;
}

void CountingSort::sort_host(const int* keys) {
  const long n = n_, K = nkeys_;
  long* order = order_.data();
  long* off = offsets_.data();
  // Threads: no more than the items allow (a per-thread count row costs K longs to clear and
  // scan, so with many keys and few items one thread is faster).
  int T = host_threads();
  T = static_cast<int>(std::max<long>(1, std::min<long>(T, n / std::max<long>(K, 4096))));
  if (counts_.size() < std::size_t(T) * K) counts_.resize(std::size_t(T) * K);
  long* counts = counts_.data();
  long bad = n;  // first item with a key out of range (n: none)
#pragma omp parallel num_threads(T) reduction(min : bad) if (T > 1)
  {
#if defined(_OPENMP)
    const int t = omp_get_thread_num();
#else
    const int t = 0;
#endif
    long* c = counts + long(t) * K;
    std::fill(c, c + K, 0L);
    const long k0 = n * t / T, k1 = n * (t + 1) / T;
    for (long k = k0; k < k1; ++k) {
      const int key = keys[k];
      if (key < 0 || key >= K) {
        bad = std::min(bad, k);
        continue;
      }
      ++c[key];
    }
  }
  if (bad < n)
    throw Error("CountingSort: key " + std::to_string(keys[bad]) + " of item " + std::to_string(bad) +
                " is outside [0, " + std::to_string(K) + ")");
  // Exclusive scan in (key, thread) order: counts[t][key] becomes thread t's first slot.
  long run = 0;
  for (long key = 0; key < K; ++key) {
    off[key] = run;
    for (int t = 0; t < T; ++t) {
      const long c = counts[long(t) * K + key];
      counts[long(t) * K + key] = run;
      run += c;
    }
  }
  off[K] = run;
#pragma omp parallel num_threads(T) if (T > 1)
  {
#if defined(_OPENMP)
    const int t = omp_get_thread_num();
#else
    const int t = 0;
#endif
    long* slot = counts + long(t) * K;
    const long k0 = n * t / T, k1 = n * (t + 1) / T;
    for (long k = k0; k < k1; ++k) order[slot[keys[k]]++] = k;
  }
}

#if !defined(BEATNIK_WITH_CUDA)
void CountingSort::sort_device(const int*) { no_device_backend("CountingSort"); }
#endif

}  // namespace beatnik::exec
