#pragma once
// How the bytes of a communication pattern travel between ranks, separate from *which* bytes
// travel (the patterns: HaloExchange, Redistributor, and later the ring pass).
//
//   host       data in host memory, MPI reads and writes it directly.
//   staged     data in device memory; device -> pinned host buffer -> MPI -> pinned host buffer
//              -> device. Works with any MPI.
//   cuda-aware device pointers handed to MPI (only when the MPI library says it can read them).
//   nccl       grouped ncclSend/ncclRecv on a CUDA stream: no host round trip, no host wait.
//
// MPI-based patterns keep their own algorithm (alltoallv, p2p, ...) and ask the transport where
// MPI must read and write (mpi_send_buffer / mpi_recv_buffer / mpi_received). NCCL has no
// alltoallv; every pattern hands it a list of (peer, offset, bytes) messages instead
// (nccl_exchange), which suits any pairwise exchange, a ring pass included.
//
// NCCL communicators: one for all ranks of the run, made once. Exchanges on a sub-communicator
// (pencil rows and columns, the Cartesian grid) translate their peers to ranks of that one
// communicator, so no NCCL communicator is made per sub-communicator.
#include <mpi.h>

#include <cstddef>
#include <string>

#include "beatnik/comm/context.hpp"
#include "beatnik/exec/space.hpp"

namespace beatnik::comm {

enum class TransportKind { Host, Staged, CudaAware, Nccl };
const char* to_string(TransportKind k);

// Was this binary built with NCCL?
bool nccl_built();
// Can the MPI library read device memory? Asked of the library (MPIX_Query_cuda_support) where
// its header offers that; otherwise false. `why` says how the answer was reached.
bool mpi_cuda_aware(std::string* why = nullptr);

// One message of a grouped exchange: `bytes` bytes at byte `offset` of the send (receive)
// buffer, to (from) rank `peer` of the exchange's communicator.
struct Message {
  int peer = 0;
  long offset = 0;
  long bytes = 0;
};

// Page-locked host memory for staging (cudaMallocHost in a CUDA build, so copies run at full
// speed and asynchronously; aligned host memory otherwise), aligned to --buffer-align (at least a
// page). Grows, never shrinks.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void reserve(std::size_t bytes);
  char* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void release() noexcept;
  char* data_ = nullptr;
  std::size_t size_ = 0;
  bool pinned_ = false;
  bool registered_ = false;  // aligned_alloc + cudaHostRegister (a --buffer-align above a page)
};

class Transport {
 public:
  // Host or staged (kind chosen from the space): needs no communicator.
  explicit Transport(exec::Space space);
  // Any kind, over all ranks of ctx.comm(); collective for nccl (the communicator is made here).
  Transport(const Context& ctx, exec::Space space, TransportKind kind);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  TransportKind kind() const { return kind_; }
  exec::Space space() const { return space_; }
  bool uses_nccl() const { return kind_ == TransportKind::Nccl; }
  // One line for the banner and the results file.
  std::string describe() const;

  // MPI-based patterns. Where MPI must read `bytes` of `send`: the pointer itself (host,
  // cuda-aware: after the device finished writing it) or a staged host copy.
  const void* mpi_send_buffer(const void* send, std::size_t bytes, PinnedBuffer& staging) const;
  // Where MPI must write data meant for `recv`.
  void* mpi_recv_buffer(void* recv, std::size_t bytes, PinnedBuffer& staging) const;
  // After MPI completed: bring staged data to `recv` (no-op unless staged).
  void mpi_received(void* recv, const void* mpi_recv, std::size_t bytes) const;

  // NCCL: grouped sends and receives among the ranks of `comm` (a communicator derived from the
  // context's), queued on the transport's stream; the host does not wait. The exchange starts
  // after all device work queued before it on the kernel stream (stream 0). With join (the
  // default) later device work on stream 0 waits for it; without, stream 0 runs on
  // concurrently until nccl_join() (the ring pass overlaps its kernel with the transfer so).
  void nccl_exchange(MPI_Comm comm, const void* send, const Message* sends, int nsends, void* recv,
                     const Message* recvs, int nrecvs, bool join = true);
  // Device work queued on stream 0 from now on waits for every NCCL exchange queued so far.
  void nccl_join();

 private:
  exec::Space space_;
  TransportKind kind_;
  MPI_Comm world_ = MPI_COMM_NULL;  // the communicator NCCL ranks are numbered in
  void* nccl_comm_ = nullptr;       // ncclComm_t
  void* stream_ = nullptr;          // cudaStream_t, non-blocking: ordered by the events below
  void* ready_ = nullptr;           // cudaEvent_t: stream 0 reached the exchange
  void* done_ = nullptr;            // cudaEvent_t: the last exchange finished
};

// A host or staged transport for patterns built without one (tests, host runs).
Transport& basic_transport(exec::Space space);

}  // namespace beatnik::comm
