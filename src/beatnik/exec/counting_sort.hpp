#pragma once
// Stable sort of items by a small integer key (cell, destination rank), host or device, with
// the scratch kept and grown across calls: the cell list and the particle migration sort every
// call, so nothing is allocated once the sizes have settled.
#include <vector>

#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/scratch.hpp"
#include "beatnik/exec/space.hpp"

namespace beatnik::exec {

class CountingSort {
 public:
  explicit CountingSort(Space s);

  // Stable sort of n items by key (keys[k] in [0, nkeys), n ints in space s). Afterwards:
  //   order()[p]: index of the item at sorted position p (equal keys keep their input order);
  //   offsets()[key] .. offsets()[key+1]: sorted positions of that key (nkeys+1 entries).
  // Both in space s. The result is unique (stable), so it does not depend on thread counts.
  // Host: throws Error for a key out of range. Device: queued, except the offsets' host copy.
  void sort(const int* keys, long n, int nkeys);

  const long* order() const { return order_.data(); }
  const long* offsets() const { return offsets_.data(); }
  // The same offsets in host memory. On the device they are copied on the first call after a
  // sort (at most once per sort; a synchronising copy), so sorts whose caller only needs the
  // device offsets (the cell list) pay nothing for it.
  const std::vector<long>& host_offsets() const;

  Space space() const { return space_; }
  long size() const { return n_; }
  int keys() const { return nkeys_; }

 private:
  void sort_host(const int* keys);
  void sort_device(const int* keys);  // counting_sort_device.cpp (nvcc)

  Space space_;
  long n_ = 0;
  int nkeys_ = 0;
  Buffer<long> order_, offsets_;
  mutable std::vector<long> host_offsets_;
  mutable bool host_offsets_valid_ = false;
  // Host: per-thread key counts (threads × nkeys). Device: sorted keys, the identity
  // permutation and CUB's temporary storage.
  std::vector<long> counts_;
  Buffer<int> keys_sorted_;
  Buffer<long> iota_;
  Buffer<unsigned char> temp_;
};

}  // namespace beatnik::exec
