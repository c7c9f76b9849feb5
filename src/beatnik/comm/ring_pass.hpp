#pragma once
// Ring pass: every rank's block visits every rank once (beatnik's second communication
// pattern, used by the exact Birkhoff–Rott solver; MODEL.md §8). P rounds: in round r a rank
// computes with the block that originated on rank (rank − r) mod P and forwards it to
// rank + 1, receiving the next one from rank − 1.
//
// Strategies (how one round's block moves) are units in comm/ring/, listed in
// comm/ring/registry.cpp and chosen by name: blocking (MPI_Sendrecv after the computation),
// overlap (MPI_Irecv/MPI_Isend during it), persistent (MPI_Send_init/MPI_Recv_init once,
// MPI_Startall per round), rma (MPI_Put into the next rank's window, PSCW). The RingPass owns
// what they share: the blocks and the two wire buffers, the visiting order, staging copies,
// device fences, timers and byte accounting. Strategies that overlap are started before the
// round's computation and finished after it; on the host the computation is cut into chunks
// with a test() between them, so that the transfer progresses (and its completion time is seen).
//
// Transports (the run's --gpu-transport; comm/transport.hpp). Host data goes to MPI directly.
// Device data: staged copies the own block once to a pinned host wire buffer, forwards blocks
// from the host buffers and copies each received block to the device; cuda-aware hands device
// wire buffers to MPI; nccl sends to next and receives from prev with one grouped
// nccl_exchange per round, queued on the transport's stream behind the kernels that wrote the
// buffers. With an overlapping strategy the exchange is not joined to the kernel stream until
// the round's kernel has been queued, so kernel and transfer run concurrently (docs/br.md).
//
// Timer regions (prefix + ...): ".compute" (the visits), ".ring" (communication on the
// critical path: posting, waiting, Sendrecv, staging copies), ".ring.hidden" (transfer time
// that ran behind computation; overlapping strategies on the host only). Hidden fraction of
// the communication = hidden / (hidden + ring). Bytes and messages go to CommStats as "ring",
// alike for every strategy.
#include <mpi.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "beatnik/base/timers.hpp"
#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/ring/ring_strategy.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/exec/memory.hpp"

namespace beatnik::comm {

// The messages (peer, doubles) `rank` sends in one pass, round by round: in round r it forwards
// the block that originated on rank (rank - r) mod P to rank + 1 (P - 1 rounds; none on one
// rank). counts: doubles of every rank's block. Pure: RingPass and the dry run both use it.
std::vector<std::pair<int, long>> plan_ring(int rank, const std::vector<long>& counts);

class RingPass {
 public:
  // Collective over `comm`. own_count: doubles in this rank's block; locality: of every rank of
  // comm (Context::locality). strategy: a name in comm/ring/registry (NotAvailable, on every
  // rank, when it cannot run over the transport). transport: moves the blocks, in `space`;
  // null: host or staged by space (basic_transport). An nccl transport must span the ranks of
  // `comm` (or more).
  RingPass(MPI_Comm comm, long own_count, exec::Space space, const std::string& strategy,
           std::vector<int> locality, CommStats* stats, Timers* timers, std::string timer_prefix,
           Transport* transport = nullptr);
  ~RingPass();
  RingPass(const RingPass&) = delete;
  RingPass& operator=(const RingPass&) = delete;

  // This rank's block, in `space`: fill it before run().
  double* own_block() const { return own_.data(); }
  long count_of(int rank) const { return counts_[rank]; }
  int size() const { return size_; }
  int rank() const { return rank_; }
  const std::string& strategy() const { return strategy_name_; }
  TransportKind transport_kind() const { return transport_->kind(); }

  // Calls visit(block, origin_rank, chunk, chunks) for chunk = 0..chunks−1 of every block: the
  // own block first, then those of ranks rank−1, rank−2, ... (the same order for every
  // strategy, so they give bitwise equal sums). `block` lives in `space`.
  template <class F>
  void run(F&& visit) {
    begin();
    for (int r = 0; r < size_; ++r) {
      const bool more = r + 1 < size_;
      const double* block = block_for(r);
      const bool overlap = more && strategy_->overlaps();
      if (overlap) post(r);
      const int chunks = (overlap && space_ == exec::Space::Host) ? kChunks : 1;
      {
        Timers::Scope t(timers_, compute_name_);
        for (int c = 0; c < chunks; ++c) {
          visit(block, origin(r), c, chunks);
          if (overlap && space_ == exec::Space::Host) poll();
        }
        // On the device the kernel runs asynchronously: complete the transfer before the
        // region's closing fence so that the two overlap.
        if (overlap && space_ != exec::Space::Host) complete(r);
      }
      if (overlap && space_ == exec::Space::Host) complete(r);
      if (more && !overlap) exchange(r);
    }
    if (stats_ && size_ > 1) stats_->add_call("ring");
  }

 private:
  static constexpr int kChunks = 16;
  int origin(int r) const { return (rank_ - r % size_ + size_) % size_; }
  void begin();
  const double* block_for(int r);       // round r's block in `space` (lands staged data)
  const double* send_ptr(int r) const;  // wire buffer sent in round r
  double* recv_ptr(int r) const;        // wire buffer receiving round r+1's block
  void begin_round(int r);              // the device fence MPI needs, the bytes counted
  void post(int r);
  void poll();
  void complete(int r);
  void exchange(int r);
  void end_round();                     // --trace: the round's messages are complete

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1, next_ = 0, prev_ = 0;
  exec::Space space_;
  std::string strategy_name_;
  Transport* transport_;
  bool staged_;  // device data through pinned host wire buffers
  std::vector<long> counts_;
  std::vector<std::pair<int, long>> plan_;  // plan_ring: what each round sends
  std::vector<int> locality_;
  CommStats* stats_;
  Timers* timers_;
  std::string compute_name_, ring_name_, hidden_name_;
  exec::Buffer<double> own_;
  // The two wire buffers, contiguous (one window covers both for rma): pinned host when
  // staged, else in `space`.
  double* wire_[2] = {nullptr, nullptr};
  long cap_ = 0;                   // doubles per wire buffer
  exec::Buffer<double> wire_store_;  // wire_ when not staged
  PinnedBuffer pinned_;              // wire_ when staged
  exec::Buffer<double> landed_;   // device copy of a received block (staged only)
  std::unique_ptr<ring::Strategy> strategy_;  // with 2+ ranks
  bool done_ = false;
  double t_post_ = 0, t_done_ = 0;
};

}  // namespace beatnik::comm
