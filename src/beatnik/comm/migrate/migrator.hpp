#pragma once
// Irregular migration: every rank sends a different number of fixed-width records to any other
// ranks, and the receivers need not know in advance who sends to them (the cutoff
// Birkhoff–Rott solver moves particles from their surface owner to their spatial owner, sends
// ghost copies, and returns velocities on the same paths).
//
// Which ranks talk, and how, is a strategy picked by name from registry.hpp (alltoallv, sparse,
// neighbor; one file each beside this one). How the bytes travel is the transport's
// (comm/transport.hpp):
//   host        MPI on the caller's pointers;
//   staged      the send buffer copied to pinned host memory, the strategy run on host
//               buffers, the received records copied to the device;
//   cuda-aware  device pointers handed to MPI (after the device finished writing them);
//   nccl        whatever the strategy: counts by MPI_Alltoall on the host, then the records by
//               one grouped NCCL send/receive among the ranks with data (describe() says so).
// A rank's records for itself never enter MPI or NCCL: they are copied locally.
//
// Accounting (CommStats, under the exchange's `pattern`): one call per exchange, and one
// message of count × width × 8 bytes for every non-empty block sent, self included
// (locality 0). It describes the pattern, so it is the same for every strategy and transport.
#include <mpi.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/exec/memory.hpp"

namespace beatnik::comm {

namespace migrate {
class Strategy;
}

class Migrator {
 public:
  // Collective over comm. locality: of every rank of comm (Context::locality: 0 self, 1
  // on-node, 2 off-node). strategy: a registry name; unknown -> InputError listing the names.
  // transport: how device bytes travel (null: basic_transport(space), i.e. host or staged); an
  // nccl transport must span the ranks of comm.
  Migrator(MPI_Comm comm, exec::Space space, const std::string& strategy, std::vector<int> locality,
           CommStats* stats, Transport* transport = nullptr);
  ~Migrator();
  Migrator(const Migrator&) = delete;
  Migrator& operator=(const Migrator&) = delete;

  // Collective. Sends send_counts[r] records of `width` doubles to rank r (send_counts: size P,
  // on the host) from `send` (in `space`; records grouped by destination in rank order, record
  // k at doubles [k*width, (k+1)*width)). Sets recv_counts (size P) and grows `recv` (in
  // `space`) when it is too small, never shrinking it; on return recv holds the received
  // records grouped by source in rank order. `pattern` names the CommStats entry ("migrate",
  // "ghost") and, for strategies that cache per exchange, the cache entry.
  void exchange(const std::vector<long>& send_counts, const double* send, int width,
                std::vector<long>& recv_counts, exec::Buffer<double>& recv, const std::string& pattern);
  // The same when every rank already knows what it receives (e.g. the return trip of an
  // earlier exchange, counts swapped): no count discovery. recv (in `space`) holds
  // sum(recv_counts)*width doubles. The counts must match what the senders send.
  void exchange_known(const std::vector<long>& send_counts, const double* send, int width,
                      const std::vector<long>& recv_counts, double* recv, const std::string& pattern);

  // The registry name asked for.
  const std::string& strategy() const { return name_; }
  // One line for the banner and the results file: the strategy and how it talks, or what the
  // nccl transport does instead.
  std::string describe() const;
  // Collective set-ups so far (neighbor: graph communicators built; 0 for the others).
  long setups() const;

 private:
  void check_counts(const std::vector<long>& counts, const char* what) const;
  MPI_Datatype record_type(int width);
  // The block a rank sends itself, copied in `space` (device to device when staged: it never
  // crosses the bus).
  const char* stage_send(const std::vector<long>& send_counts, const double* send, std::size_t bytes,
                         long record_bytes);
  void land(const std::vector<long>& send_counts, const double* send, const char* mpi_send,
            const std::vector<long>& recv_counts, char* recv, const char* mpi_recv, long record_bytes);
  void self_copy(const std::vector<long>& send_counts, const char* send, const std::vector<long>& recv_counts,
                 char* recv, long record_bytes, exec::Space space) const;
  // Staged transport: copies every block but this rank's own between the spaces.
  void copy_others(const std::vector<long>& counts, char* dst, exec::Space dst_space, const char* src,
                   exec::Space src_space, long record_bytes) const;
  void nccl_move(const std::vector<long>& send_counts, const double* send, const std::vector<long>& recv_counts,
                 double* recv, long record_bytes);
  // The exchange's accounting (and, with --trace, its messages: from t0 until now).
  void account(const std::vector<long>& send_counts, const std::vector<long>& recv_counts, long record_bytes,
               const std::string& pattern, double t0);
  double trace_start() const;

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  exec::Space space_;
  exec::Space mpi_space_;  // where the wire buffers live: Device for cuda-aware and nccl
  std::string name_;
  std::vector<int> locality_;
  CommStats* stats_;
  Transport* transport_;
  std::unique_ptr<migrate::Strategy> strategy_;
  std::map<int, MPI_Datatype> types_;  // one record of `width` doubles, per width used
  PinnedBuffer send_stage_, recv_stage_;  // staged transport
  std::vector<Message> sends_, recvs_;    // nccl transport
};

}  // namespace beatnik::comm
