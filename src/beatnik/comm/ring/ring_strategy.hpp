#pragma once
// The interface of a ring-pass strategy (comm/ring_pass.hpp), one file per strategy beside this
// one, listed in registry.cpp. A strategy decides only how one round's block moves from this
// rank to the next and from the previous rank to this one. The RingPass owns everything else
// (the blocks and wire buffers, the visiting order, staging copies, device fences, timers and
// byte accounting), so every strategy visits the same blocks in the same order, gives bitwise
// the same sums, and is counted alike.
#include <mpi.h>

#include <vector>

#include "beatnik/comm/transport.hpp"

namespace beatnik::comm::ring {

// Round r's transfer, fixed for the life of the ring (buffers and block sizes never change):
// send `send_count` doubles at `send` to the next rank, receive `recv_count` doubles from the
// previous rank into `recv`, which is wire slot `slot` (r mod 2). Message tag: r.
struct Round {
  const double* send = nullptr;
  long send_count = 0;
  double* recv = nullptr;
  long recv_count = 0;
  int slot = 0;
};

// What a strategy is built with (collectively over `comm`, only when the ring has 2+ ranks).
struct Setup {
  MPI_Comm comm;
  int next = 0, prev = 0;  // blocks go to next = rank + 1, come from prev = rank − 1
  Transport* transport;    // host, staged (MPI sees pinned host buffers), cuda-aware or nccl
  double* wire = nullptr;  // the two receive slots, contiguous: slot k at wire + k·capacity
  long capacity = 0;       // doubles per slot
  std::vector<Round> rounds;  // rounds 0 .. P−2 (the last round receives nothing)
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Does round r's transfer travel while round r's block is computed? Then the RingPass calls
  // start(r) before the computation, test() between its chunks (host) and finish(r) after it;
  // otherwise start(r) and finish(r) one after the other, after the computation.
  virtual bool overlaps() const = 0;
  // Begins round r's transfer. MPI may read device memory already (the RingPass fenced it).
  virtual void start(int r) = 0;
  // Progress while computing (host): true once this rank's transfer of the round in flight is
  // known to be complete. Strategies that cannot tell return false.
  virtual bool test() { return false; }
  // Ends round r: afterwards its `recv` holds the block (or, for NCCL, device work queued from
  // now on sees it) and its `send` may be overwritten.
  virtual void finish(int r) = 0;
};

}  // namespace beatnik::comm::ring
