#pragma once
// Which piece an item of a flattened loop belongs to. The passes that run one item per source,
// proxy or double over many pieces of different lengths (host and device) keep each piece's
// first item, ascending, and find an item's piece by this binary search.
#include "beatnik/exec/macros.hpp"

namespace beatnik::exec {

// The last of v[lo..hi) whose field `key` is ≤ i (lo when none is).
template <class T, class K>
BEATNIK_HOST_DEVICE inline int last_at_most(const T* v, int lo, int hi, long i, K T::*key) {
  --hi;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (v[mid].*key <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// The same over plain values.
BEATNIK_HOST_DEVICE inline int last_at_most(const long* v, int lo, int hi, long i) {
  --hi;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (v[mid] <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

}  // namespace beatnik::exec
