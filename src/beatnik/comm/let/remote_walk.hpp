#pragma once
// What a pull strategy (rma.cpp) sees of the trees, without MPI: every rank exposes its tree as
// a few sections of doubles (the tree solver's node records, proxies, particles; which is which
// is the walk's business), and for every other rank (the owner) a walk decides, from what it has
// fetched of the owner's sections so far, which spans it needs next. The strategy fetches each
// round's spans of every owner at once, so a walk's latency is one round trip per round (per
// tree level), not per span. The walk ends with the block the owner would have pushed.
#include <vector>

namespace beatnik::comm::let {

// This rank's sections, as exposed (read by other ranks during the pull).
struct Section {
  const double* data;
  long size;  // doubles
};

// `count` doubles of the owner's section `section` from `offset`.
struct Span {
  int section;
  long offset, count;
};

class RemoteWalk {
 public:
  virtual ~RemoteWalk() = default;
  // The first spans of `owner`'s sections to fetch (sizes: the owner's section sizes); none:
  // nothing is needed from that owner (its block is empty).
  virtual void start(int owner, const std::vector<long>& sizes, std::vector<Span>& want) = 0;
  // `got`: the spans asked for last, concatenated in the order asked (the walk may keep the
  // vector: swap it out). `want` (empty on entry): the next ones; none: the walk of `owner` is
  // done.
  virtual void next(int owner, std::vector<double>& got, std::vector<Span>& want) = 0;
  // `owner`'s block (its walk done: what the owner would have pushed): its size in doubles (0:
  // none), then written to `out`.
  virtual long block_size(int owner) const = 0;
  virtual void write_block(int owner, double* out) const = 0;
};

}  // namespace beatnik::comm::let
