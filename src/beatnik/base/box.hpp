#pragma once
// Half-open boxes [lo, hi) in a 2D global index space (i along x, j along y).
#include <algorithm>
#include <array>

#include "beatnik/exec/macros.hpp"

namespace beatnik {

struct Box2 {
  std::array<int, 2> lo{0, 0};
  std::array<int, 2> hi{0, 0};

  int extent(int d) const { return hi[d] > lo[d] ? hi[d] - lo[d] : 0; }
  long count() const { return static_cast<long>(extent(0)) * extent(1); }
  bool empty() const { return extent(0) == 0 || extent(1) == 0; }
  bool contains(int i, int j) const { return i >= lo[0] && i < hi[0] && j >= lo[1] && j < hi[1]; }
  friend bool operator==(const Box2& a, const Box2& b) { return a.lo == b.lo && a.hi == b.hi; }
};

inline Box2 intersect(const Box2& a, const Box2& b) {
  Box2 r;
  for (int d = 0; d < 2; ++d) {
    r.lo[d] = std::max(a.lo[d], b.lo[d]);
    r.hi[d] = std::max(r.lo[d], std::min(a.hi[d], b.hi[d]));
  }
  return r;
}

// Where the elements of a box live in one array: element (i, j) of the global index space is at
// offset + (i - box.lo[0]) * si + (j - box.lo[1]) * sj. Trivially copyable, usable in kernels.
struct ArrayLayout2 {
  Box2 box;
  long si = 0;
  long sj = 0;
  long offset = 0;
};

struct StridedIndex {
  int lo0 = 0, lo1 = 0;
  long si = 0, sj = 0, offset = 0;
  BEATNIK_HOST_DEVICE long operator()(int i, int j) const {
    return offset + static_cast<long>(i - lo0) * si + static_cast<long>(j - lo1) * sj;
  }
};

inline StridedIndex indexer(const ArrayLayout2& l) {
  return StridedIndex{l.box.lo[0], l.box.lo[1], l.si, l.sj, l.offset};
}

// Row-major ("j fastest") and column-major ("i fastest") layouts of a box stored densely.
inline ArrayLayout2 j_fastest(const Box2& b) { return ArrayLayout2{b, b.extent(1), 1, 0}; }
inline ArrayLayout2 i_fastest(const Box2& b) { return ArrayLayout2{b, 1, b.extent(0), 0}; }

}  // namespace beatnik
