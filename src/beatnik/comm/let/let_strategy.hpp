#pragma once
// The interface of a locally-essential-tree strategy (comm/let/let_exchange.hpp), one file per
// strategy beside this one, listed in registry.cpp. A strategy decides only how ranks talk.
// A push strategy: every rank has one block of doubles for each other rank (possibly empty)
// and receives the blocks the others have for it. A pull strategy (pulls()): every rank exposes
// its tree and assembles the blocks it would have received itself, by a walk of the others'
// trees (remote_walk.hpp). The LetExchange owns the rest (validation); the strategy accounts
// its bytes under the pattern "let".
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/let/remote_walk.hpp"
#include "beatnik/exec/memory.hpp"

namespace beatnik::comm::let {

// What a strategy is built with (collectively, in the LetExchange's constructor).
struct Setup {
  MPI_Comm comm;
  std::vector<int> locality;  // of every rank of comm (Context::locality)
  CommStats* stats;           // where the blocks are accounted (pattern "let"); may be null
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Collective. send_counts[r] doubles for rank r (the own entry 0), grouped by destination in
  // rank order in `send`. Sets recv_counts (size P) and fills recv (host; grown when too small, never shrunk) with the blocks received,
  // grouped by source in rank order. Accounts every non-empty block sent under "let".
  virtual void exchange(const std::vector<long>& send_counts, const double* send, std::vector<long>& recv_counts,
                        exec::Buffer<double>& recv) = 0;
  // Whether the tree solver calls pull() instead of exchange().
  virtual bool pulls() const { return false; }
  // Collective (pull strategies). `mine`: this rank's sections, read during the call. Sets
  // recv_counts and fills recv as exchange() would, each block from `walk`. Accounts every
  // fetch under "let" (by the owner's locality: the bytes travel from it to this rank).
  virtual void pull(const std::vector<Section>&, RemoteWalk&, std::vector<long>&, exec::Buffer<double>&) {
    throw Error("LET: this strategy pushes; it has no pull");
  }
};

}  // namespace beatnik::comm::let
