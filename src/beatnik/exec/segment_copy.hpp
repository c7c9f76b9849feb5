#pragma once
// Many short copies of doubles within one space in one pass. The tree solver's LET blocks are
// gathered from thousands of particle runs and proxy sets, each too short for a copy call of its
// own on the device (a few microseconds each); here every double is an item that finds its piece
// by a binary search over the pieces' starts, so one kernel makes them all.
#include <vector>

#include "beatnik/exec/memory.hpp"

namespace beatnik::exec {

class SegmentCopy {
 public:
  struct Piece {
    const double* src;
    double* dst;
    long n;
  };
  explicit SegmentCopy(Space s) : space_(s), pieces_(s, 0), start_(s, 0) {}
  // Every piece's n doubles from src to dst, both in this copy's space; the destinations must
  // not overlap each other or the sources. Returns when the copies are done.
  void run(const std::vector<Piece>& pieces);

 private:
  Space space_;
  Buffer<Piece> pieces_;
  Buffer<long> start_;  // start_[k]: the doubles of the pieces before piece k; then the total
};

}  // namespace beatnik::exec
