#pragma once
// The interface of a locally-essential-tree strategy (comm/let/let_exchange.hpp), one file per
// strategy beside this one, listed in registry.cpp. A strategy decides only how ranks talk.
// A push strategy: every rank has one block of doubles for each other rank (possibly empty)
// and receives the blocks the others have for it; with the run's NCCL transport (-x cuda) the
// blocks, made on the host, go up to the device, across by NCCL and back down (push.cpp). A pull
// strategy (pulls()): every rank exposes its tree and assembles the blocks it would have received
// itself, by a walk of the others' trees (remote_walk.hpp). The LetExchange owns the rest (validation); the strategy accounts
// its bytes under the pattern "let".
#include <mpi.h>

#include <functional>

#include <memory>
#include <string>
#include <vector>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/let/remote_walk.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/exec/memory.hpp"

namespace beatnik::comm::let {

// What a strategy is built with (collectively, in the LetExchange's constructor).
struct Setup {
  MPI_Comm comm;
  std::vector<int> locality;  // of every rank of comm (Context::locality)
  CommStats* stats;           // where the blocks are accounted (pattern "let"); may be null
  Transport* transport = nullptr;  // the run's GPU transport (-x cuda); null: host MPI
};

// Whether a push's blocks travel by NCCL (the run's transport is NCCL) rather than host MPI.
inline bool push_by_nccl(const Transport* t) { return t && t->uses_nccl(); }

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Where the caller writes the blocks for exchange(): `doubles` of host memory the strategy
  // owns (page-locked where they go on through the device), valid until the next call.
  virtual double* send_buffer(long doubles);
  // Collective. send_counts[r] doubles for rank r (the own entry 0), grouped by destination in
  // rank order in `send`. Sets recv_counts (size P) and returns the blocks received, grouped by
  // source in rank order, in host memory the strategy owns (valid until its next call).
  // Accounts every non-empty block sent under "let".
  virtual const double* exchange(const std::vector<long>& send_counts, const double* send,
                                 std::vector<long>& recv_counts) = 0;
  // The last exchange()'s blocks in device memory at the same offsets, or null (host MPI): with
  // NCCL they arrive there, so the tree solver's device pools copy them device to device.
  virtual const double* device_blocks() const { return nullptr; }
  // Whether the blocks may be laid out in device memory instead (NCCL): device_send_buffer and
  // exchange_device then replace send_buffer's device copy and exchange's copy back.
  virtual bool sends_from_device() const { return false; }
  // `doubles` of device memory for exchange_device's blocks, laid out as exchange's `send`.
  virtual double* device_send_buffer(long) { throw Error("LET: this strategy sends from host memory"); }
  // Collective, sends_from_device(): exchange() from the device send buffer. The blocks received
  // stay in device memory (device_blocks()); of each only what its receiver reads on the host
  // comes back, at the same offsets of the returned host memory: its first `head` doubles, then
  // up to host_part(those) in all.
  virtual const double* exchange_device(const std::vector<long>&, std::vector<long>&, long,
                                        const std::function<long(const double*)>&) {
    throw Error("LET: this strategy sends from host memory");
  }
  // Whether the tree solver calls pull() instead of exchange().
  virtual bool pulls() const { return false; }
  // Collective (pull strategies). `mine`: this rank's sections, read during the call. Sets
  // recv_counts and returns the blocks as exchange() would, each block from `walk`. Accounts
  // every fetch under "let" (by the owner's locality: the bytes travel from it to this rank).
  virtual const double* pull(const std::vector<Section>&, RemoteWalk&, std::vector<long>&) {
    throw Error("LET: this strategy pushes; it has no pull");
  }
  // Bytes of the buffers the strategy keeps between calls (host and device).
  virtual std::size_t buffer_bytes() const { return (send_.size() + recv_.size()) * sizeof(double); }

 protected:
  exec::Buffer<double> send_{exec::Space::Host, 0}, recv_{exec::Space::Host, 0};  // host memory for either
};

}  // namespace beatnik::comm::let
