#pragma once
// The locally essential tree's communication (the tree solver, docs/tree.md): every rank's
// box reaches every rank (one MPI_Allgather), then each rank's blocks for the others travel by
// the --let-strategy named (registry.hpp), pushed (exchange) or pulled (pull). Byte accounting:
// pattern "let", one call per exchange and one message per non-empty block pushed, or per
// MPI_Get pulled (self / on-node / off-node by the locality); the box allgather is not counted
// (a few doubles per rank), nor the pull's allgather of section sizes. With the run's NCCL
// transport the push strategies' blocks travel by NCCL (push.hpp); the pull stays on MPI's
// one-sided calls (NCCL has no get).
#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/let/let_strategy.hpp"
#include "beatnik/exec/memory.hpp"

namespace beatnik::comm {

class LetExchange {
 public:
  // Collective over comm. strategy: a registry name (InputError / NotAvailable otherwise).
  // transport: the run's GPU transport on -x cuda (null: host MPI).
  LetExchange(MPI_Comm comm, const std::string& strategy, std::vector<int> locality, CommStats* stats,
              Transport* transport = nullptr);
  ~LetExchange();
  LetExchange(const LetExchange&) = delete;
  LetExchange& operator=(const LetExchange&) = delete;

  // Collective: `width` doubles from every rank, rank order (size P·width).
  std::vector<double> allgather(const double* mine, int width) const;
  // Where to write the blocks for exchange(): see let::Strategy::send_buffer.
  double* send_buffer(long doubles) { return strategy_->send_buffer(doubles); }
  // Collective: see let::Strategy::exchange (the blocks received, valid until the next call).
  const double* exchange(const std::vector<long>& send_counts, const double* send, std::vector<long>& recv_counts);
  // See let::Strategy::device_blocks (null unless the blocks came by NCCL).
  const double* device_blocks() const { return strategy_->device_blocks(); }
  // The blocks laid out in device memory (NCCL): see let::Strategy::exchange_device.
  bool sends_from_device() const { return strategy_->sends_from_device(); }
  double* device_send_buffer(long doubles) { return strategy_->device_send_buffer(doubles); }
  const double* exchange_device(const std::vector<long>& send_counts, std::vector<long>& recv_counts, long head,
                                const std::function<long(const double*)>& host_part);
  // Whether the strategy pulls (then call pull(), not exchange()).
  bool pulls() const { return strategy_->pulls(); }
  // Collective: see let::Strategy::pull.
  const double* pull(const std::vector<let::Section>& mine, let::RemoteWalk& walk, std::vector<long>& recv_counts) {
    return strategy_->pull(mine, walk, recv_counts);
  }
  std::size_t buffer_bytes() const { return strategy_->buffer_bytes(); }
  const std::string& strategy() const { return name_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::string name_;
  std::unique_ptr<let::Strategy> strategy_;
};

}  // namespace beatnik::comm
