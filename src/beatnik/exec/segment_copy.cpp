// The pieces' copies (segment_copy.hpp). Compiled by nvcc in the CUDA build (the lambda runs as a
// device kernel there), by the host compiler otherwise.
#include "beatnik/exec/segment_copy.hpp"

#include <algorithm>

#include "beatnik/exec/last_at_most.hpp"
#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/exec/scratch.hpp"

namespace beatnik::exec {
namespace {

// A free function: nvcc's extended lambdas may not live in a member function of a class with
// private members.
void copy_items(Space s, const SegmentCopy::Piece* P, const long* start, int np, long total) {
  parallel_for(s, total, [=] BEATNIK_HOST_DEVICE(long i) {
    const int k = last_at_most(start, 0, np, i);  // the last piece starting at or before i
    P[k].dst[i - start[k]] = P[k].src[i - start[k]];
  });
}

}  // namespace

void SegmentCopy::run(const std::vector<Piece>& pieces) {
  std::vector<Piece> kept;
  kept.reserve(pieces.size());
  for (const Piece& p : pieces)
    if (p.n > 0) kept.push_back(p);
  if (kept.empty()) return;
  const int np = static_cast<int>(kept.size());
  std::vector<long> start(np + 1, 0);
  for (int k = 0; k < np; ++k) start[k + 1] = start[k] + kept[k].n;
  if (space_ == Space::Host) {
#pragma omp parallel for schedule(dynamic, 1)
    for (int k = 0; k < np; ++k) std::copy(kept[k].src, kept[k].src + kept[k].n, kept[k].dst);
    return;
  }
  grow(pieces_, space_, size_t(np));
  grow(start_, space_, size_t(np) + 1);
  copy(pieces_.data(), space_, kept.data(), Space::Host, size_t(np));
  copy(start_.data(), space_, start.data(), Space::Host, size_t(np) + 1);
  copy_items(space_, pieces_.data(), start_.data(), np, start[np]);
  fence(space_);
}

}  // namespace beatnik::exec
