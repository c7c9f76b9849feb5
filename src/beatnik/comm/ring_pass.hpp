#pragma once
// Ring pass: every rank's block visits every rank once (beatnik's second communication
// pattern, used by the exact Birkhoff–Rott solver; MODEL.md §8). P rounds: in round r a rank
// computes with the block that originated on rank (rank − r) mod P and forwards it to
// rank + 1, receiving the next one from rank − 1.
//
// Strategies:
//   blocking  one MPI_Sendrecv per round after the round's computation (as the reference);
//   overlap   non-blocking, double-buffered: the next block travels while the current one is
//             computed. On the host the computation is cut into chunks with an MPI_Testall
//             between them, so that the transfer progresses (and its completion time is seen).
//
// Transports (the run's --gpu-transport; comm/transport.hpp). Host data goes to MPI directly.
// Device data: staged copies the own block once to a pinned host wire buffer, forwards blocks
// from the host buffers and copies each received block to the device; cuda-aware hands device
// wire buffers to MPI; nccl sends to next and receives from prev with one grouped
// nccl_exchange per round, queued on the transport's stream behind the kernels that wrote the
// buffers. With the overlap strategy the exchange is not joined to the kernel stream until the
// round's kernel has been queued, so kernel and transfer run concurrently (docs/br.md).
//
// Timer regions (prefix + ...): ".compute" (the visits), ".ring" (communication on the
// critical path: posting, waiting, Sendrecv, staging copies), ".ring.hidden" (transfer time
// that ran behind computation; overlap on the host only). Hidden fraction of the
// communication = hidden / (hidden + ring). Bytes and messages go to CommStats as "ring".
#include <mpi.h>

#include <string>
#include <vector>

#include "beatnik/base/timers.hpp"
#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/ring_strategy.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/exec/memory.hpp"

namespace beatnik::comm {


class RingPass {
 public:
  // Collective over `comm`. own_count: doubles in this rank's block; locality: of every rank of
  // comm (Context::locality). transport: moves the blocks, in `space`; null: host or staged by
  // space (basic_transport). An nccl transport must span the ranks of `comm` (or more).
  RingPass(MPI_Comm comm, long own_count, exec::Space space, RingStrategy strategy,
           std::vector<int> locality, CommStats* stats, Timers* timers, std::string timer_prefix,
           Transport* transport = nullptr);
  RingPass(const RingPass&) = delete;
  RingPass& operator=(const RingPass&) = delete;

  // This rank's block, in `space`: fill it before run().
  double* own_block() const { return own_.data(); }
  long count_of(int rank) const { return counts_[rank]; }
  int size() const { return size_; }
  int rank() const { return rank_; }
  RingStrategy strategy() const { return strategy_; }
  TransportKind transport_kind() const { return transport_->kind(); }

  // Calls visit(block, origin_rank, chunk, chunks) for chunk = 0..chunks−1 of every block: the
  // own block first, then those of ranks rank−1, rank−2, ... (the same order in both
  // strategies, so they give bitwise equal sums). `block` lives in `space`.
  template <class F>
  void run(F&& visit) {
    begin();
    for (int r = 0; r < size_; ++r) {
      const bool more = r + 1 < size_;
      const double* block = block_for(r);
      const bool overlap = more && strategy_ == RingStrategy::Overlap;
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
      if (more && strategy_ == RingStrategy::Blocking) exchange(r);
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
  void post(int r);
  void poll();
  void complete(int r);
  void exchange(int r);
  void nccl_round(int r, bool join);  // round r's send to next_ and receive from prev_

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1, next_ = 0, prev_ = 0;
  exec::Space space_;
  RingStrategy strategy_;
  Transport* transport_;
  bool staged_;  // device data through pinned host wire buffers
  bool nccl_;    // device wire buffers, grouped NCCL send/recv
  std::vector<long> counts_;
  std::vector<int> locality_;
  CommStats* stats_;
  Timers* timers_;
  std::string compute_name_, ring_name_, hidden_name_;
  exec::Buffer<double> own_;
  double* wire_[2] = {nullptr, nullptr};  // pinned host when staged, else in `space`
  exec::Buffer<double> wire_store_[2];     // wire_ when not staged
  PinnedBuffer pinned_[2];                 // wire_ when staged
  exec::Buffer<double> landed_;   // device copy of a received block (staged only)
  MPI_Request req_[2];
  bool done_ = false;
  double t_post_ = 0, t_done_ = 0;
};

}  // namespace beatnik::comm
