#pragma once
// The push strategies' shared body: the blocks travel as an irregular exchange of one-double
// records through the migration pattern's strategy of the same name (comm/migrate/: counts by
// MPI_Alltoall then MPI_Alltoallv, or the NBX sparse exchange), accounted under "let".
//
// With the run's NCCL transport (-x cuda, several ranks) the blocks travel by NCCL instead: the
// tree and its blocks are made on the host, so they are written to page-locked memory, copied
// to the device, exchanged by the migration pattern's NCCL path (counts by MPI_Alltoall, the
// blocks by grouped NCCL sends and receives, whatever the strategy's name) and copied back to
// page-locked memory for the unpack; or (exchange_device) the caller lays them out on the device
// and only what it reads on the host comes back. With a staged or CUDA-aware transport they stay on the host
// path: the blocks are host bytes already, which is what those transports hand MPI.
#include <memory>

#include "beatnik/comm/let/let_strategy.hpp"
#include "beatnik/comm/migrate/migrator.hpp"

namespace beatnik::comm::let {

class Push final : public Strategy {
 public:
  Push(const Setup& s, const char* migrate_strategy);
  double* send_buffer(long doubles) override;
  const double* exchange(const std::vector<long>& send_counts, const double* send,
                         std::vector<long>& recv_counts) override;
  const double* device_blocks() const override { return nccl_ ? dev_recv_.data() : nullptr; }
  bool sends_from_device() const override { return nccl_; }
  double* device_send_buffer(long doubles) override;
  const double* exchange_device(const std::vector<long>& send_counts, std::vector<long>& recv_counts, long head,
                                const std::function<long(const double*)>& host_part) override;
  std::size_t buffer_bytes() const override;

 private:
  std::unique_ptr<Migrator> migrator_;  // in host memory over MPI, or in device memory over NCCL
  bool nccl_ = false;
  PinnedBuffer send_pinned_, recv_pinned_;      // nccl: the host ends of the round trip
  exec::Buffer<double> dev_send_, dev_recv_;    // nccl: the device ends
};

}  // namespace beatnik::comm::let
