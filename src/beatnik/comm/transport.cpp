#include "beatnik/comm/transport.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/exec/cuda_check.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/stream.hpp"

#if defined(BEATNIK_WITH_CUDA)
#include <cuda_runtime.h>
#endif
#if defined(BEATNIK_WITH_NCCL)
#include <nccl.h>
#endif
// Open MPI declares MPIX_Query_cuda_support in its extensions header.
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

namespace beatnik::comm {
namespace {

#if defined(BEATNIK_WITH_CUDA)
using exec::cuda_check;
#endif
#if defined(BEATNIK_WITH_NCCL)
// The stream the kernels run on (stream 0 unless a graph's step runs: exec/stream.hpp).
cudaStream_t kernel_stream() { return static_cast<cudaStream_t>(exec::work_stream()); }
void nccl_check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw Error(std::string("NCCL error in ") + what + ": " + ncclGetErrorString(r));
}

// Ranks of `comm` -> ranks of `world` for the given peers (NCCL addresses world ranks only).
void translate(MPI_Comm comm, MPI_Comm world, std::vector<int>& peers) {
  if (peers.empty()) return;
  MPI_Group g, w;
  MPI_Comm_group(comm, &g);
  MPI_Comm_group(world, &w);
  std::vector<int> out(peers.size());
  check_mpi(MPI_Group_translate_ranks(g, static_cast<int>(peers.size()), peers.data(), w, out.data()),
            "MPI_Group_translate_ranks");
  MPI_Group_free(&g);
  MPI_Group_free(&w);
  peers.swap(out);
}
#endif

}  // namespace

const char* to_string(TransportKind k) {
  switch (k) {
    case TransportKind::Host: return "host";
    case TransportKind::Staged: return "staged";
    case TransportKind::CudaAware: return "cuda-aware";
    case TransportKind::Nccl: return "nccl";
  }
  return "?";
}

bool nccl_built() {
#if defined(BEATNIK_WITH_NCCL)
  return true;
#else
  return false;
#endif
}

bool mpi_cuda_aware(std::string* why) {
  auto say = [&](const char* s) {
    if (why) *why = s;
  };
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  if (MPIX_Query_cuda_support() == 1) {
    say("MPIX_Query_cuda_support() = 1");
    return true;
  }
  say("the MPI library was built with CUDA support but MPIX_Query_cuda_support() says it is off at run time");
  return false;
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  say("the MPI library was built without CUDA support (MPIX_CUDA_AWARE_SUPPORT = 0)");
  return false;
#else
  say("the MPI library offers no way to ask whether it reads device memory (no MPIX_Query_cuda_support)");
  return false;
#endif
}

// ---------------------------------------------------------------------------- PinnedBuffer

PinnedBuffer::~PinnedBuffer() { release(); }

void PinnedBuffer::release() noexcept {
  if (!data_) return;
#if defined(BEATNIK_WITH_CUDA)
  if (pinned_ && registered_) {
    cudaHostUnregister(data_);
    std::free(data_);
  } else if (pinned_) {
    cudaFreeHost(data_);
  } else {
    std::free(data_);
  }
#else
  std::free(data_);
#endif
  data_ = nullptr;
}

void PinnedBuffer::reserve(std::size_t bytes) {
  if (bytes <= size_) return;
  release();
  size_ = 0;
  pinned_ = registered_ = false;
  // cudaMallocHost gives page-aligned memory; a coarser --buffer-align is met by aligned
  // memory registered with the driver instead.
  const std::size_t align = std::max<std::size_t>(exec::host_alignment(), 4096);
  const auto aligned = [&] {
    char* p = static_cast<char*>(std::aligned_alloc(align, (bytes + align - 1) / align * align));
    if (!p) throw Error("out of host memory allocating a staging buffer");
    return p;
  };
#if defined(BEATNIK_WITH_CUDA)
  if (exec::device_count() > 0) {
    if (align > 4096) {
      data_ = aligned();
      if (cudaHostRegister(data_, bytes, cudaHostRegisterDefault) != cudaSuccess) {
        std::free(data_);
        data_ = nullptr;
        throw Error("cudaHostRegister of a " + std::to_string(bytes) + "-byte staging buffer failed");
      }
      registered_ = true;
    } else {
      void* p = nullptr;
      cuda_check(cudaMallocHost(&p, bytes), "cudaMallocHost");
      data_ = static_cast<char*>(p);
    }
    pinned_ = true;
  }
#endif
  if (!data_) data_ = aligned();
  size_ = bytes;
}

// ------------------------------------------------------------------------------- Transport

Transport::Transport(exec::Space space)
    : space_(space), kind_(space == exec::Space::Host ? TransportKind::Host : TransportKind::Staged) {}

Transport::Transport(const Context& ctx, exec::Space space, TransportKind kind)
    : space_(space), kind_(kind), world_(ctx.comm()) {
  if (space == exec::Space::Host && kind != TransportKind::Host)
    throw Error(std::string("transport ") + to_string(kind) + " needs device data");
  if (space == exec::Space::Device && kind == TransportKind::Host)
    throw Error("the host transport cannot move device data");
  if (kind == TransportKind::CudaAware) {
    std::string why;
    if (!mpi_cuda_aware(&why))
      throw NotAvailable("--gpu-transport cuda-aware: this MPI library is not CUDA-aware (" + why +
                         "); use --gpu-transport staged or nccl");
  }
  if (kind == TransportKind::Nccl) {
#if defined(BEATNIK_WITH_NCCL)
    ncclUniqueId id;
    if (ctx.rank() == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    check_mpi(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, ctx.comm()), "MPI_Bcast (NCCL id)");
    ncclComm_t c;
    nccl_check(ncclCommInitRank(&c, ctx.size(), id, ctx.rank()), "ncclCommInitRank");
    nccl_comm_ = c;
    // Non-blocking, so that stream 0 (every kernel) does not wait for it implicitly: the order
    // is explicit (events), which lets a kernel run while a transfer is in flight.
    cudaStream_t s;
    cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    stream_ = s;
    cudaEvent_t e[2];
    for (cudaEvent_t& x : e) cuda_check(cudaEventCreateWithFlags(&x, cudaEventDisableTiming), "cudaEventCreate");
    ready_ = e[0];
    done_ = e[1];
#else
    throw NotAvailable("--gpu-transport nccl: this beatnik was built without NCCL (install NCCL and "
                       "rebuild the 'cuda' preset); use --gpu-transport staged");
#endif
  }
}

Transport::~Transport() {
#if defined(BEATNIK_WITH_NCCL)
  if (nccl_comm_) ncclCommDestroy(static_cast<ncclComm_t>(nccl_comm_));
  if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  if (ready_) cudaEventDestroy(static_cast<cudaEvent_t>(ready_));
  if (done_) cudaEventDestroy(static_cast<cudaEvent_t>(done_));
#endif
}

std::string Transport::describe() const {
  switch (kind_) {
    case TransportKind::Host: return "host memory, MPI";
    case TransportKind::Staged: return "staged: device -> pinned host -> MPI -> device";
    case TransportKind::CudaAware: return "cuda-aware MPI on device buffers";
    case TransportKind::Nccl: {
#if defined(BEATNIK_WITH_NCCL)
      int v = 0;
      ncclGetVersion(&v);
      return "nccl " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
             std::to_string(v % 100) + ", grouped send/recv on a CUDA stream";
#else
      return "nccl";
#endif
    }
  }
  return "?";
}

const void* Transport::mpi_send_buffer(const void* send, std::size_t bytes, PinnedBuffer& staging) const {
  switch (kind_) {
    case TransportKind::Host: return send;
    case TransportKind::CudaAware:
      exec::fence(exec::Space::Device);  // MPI reads what the kernels wrote
      return send;
    case TransportKind::Staged:
      staging.reserve(bytes);
      exec::copy_bytes(staging.data(), exec::Space::Host, send, exec::Space::Device, bytes);
      return staging.data();
    case TransportKind::Nccl: break;
  }
  throw Error("transport: MPI buffers asked of the nccl transport");
}

void* Transport::mpi_recv_buffer(void* recv, std::size_t bytes, PinnedBuffer& staging) const {
  if (kind_ != TransportKind::Staged) return recv;
  staging.reserve(bytes);
  return staging.data();
}

void Transport::mpi_received(void* recv, const void* mpi_recv, std::size_t bytes) const {
  if (kind_ == TransportKind::Staged)
    exec::copy_bytes(recv, exec::Space::Device, mpi_recv, exec::Space::Host, bytes);
}

void Transport::nccl_exchange(MPI_Comm comm, const void* send, const Message* sends, int nsends,
                              void* recv, const Message* recvs, int nrecvs, bool join) {
#if defined(BEATNIK_WITH_NCCL)
  if (!nccl_comm_) throw Error("transport: nccl_exchange on a transport without NCCL");
  std::vector<int> to(nsends), from(nrecvs);
  for (int k = 0; k < nsends; ++k) to[k] = sends[k].peer;
  for (int k = 0; k < nrecvs; ++k) from[k] = recvs[k].peer;
  if (comm != world_) {
    translate(comm, world_, to);
    translate(comm, world_, from);
  }
  auto c = static_cast<ncclComm_t>(nccl_comm_);
  auto s = static_cast<cudaStream_t>(stream_);
  // After the device work that wrote the send buffers and read the receive buffers.
  cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(ready_), kernel_stream()), "cudaEventRecord");
  cuda_check(cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(ready_), 0), "cudaStreamWaitEvent");
  nccl_check(ncclGroupStart(), "ncclGroupStart");
  for (int k = 0; k < nrecvs; ++k)
    if (recvs[k].bytes > 0)
      nccl_check(ncclRecv(static_cast<char*>(recv) + recvs[k].offset, static_cast<size_t>(recvs[k].bytes),
                          ncclUint8, from[k], c, s),
                 "ncclRecv");
  for (int k = 0; k < nsends; ++k)
    if (sends[k].bytes > 0)
      nccl_check(ncclSend(static_cast<const char*>(send) + sends[k].offset,
                          static_cast<size_t>(sends[k].bytes), ncclUint8, to[k], c, s),
                 "ncclSend");
  nccl_check(ncclGroupEnd(), "ncclGroupEnd");
  cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(done_), s), "cudaEventRecord");
  if (join) nccl_join();
#else
  (void)comm, (void)send, (void)sends, (void)nsends, (void)recv, (void)recvs, (void)nrecvs, (void)join;
  throw NotAvailable("nccl transport: this beatnik was built without NCCL");
#endif
}

void Transport::nccl_join() {
#if defined(BEATNIK_WITH_NCCL)
  // The stream is in order, so its last event covers every exchange queued before it.
  if (done_) cuda_check(cudaStreamWaitEvent(kernel_stream(), static_cast<cudaEvent_t>(done_), 0), "cudaStreamWaitEvent");
#else
  throw NotAvailable("nccl transport: this beatnik was built without NCCL");
#endif
}

Transport& basic_transport(exec::Space space) {
  static Transport host(exec::Space::Host), staged(exec::Space::Device);
  return space == exec::Space::Host ? host : staged;
}

}  // namespace beatnik::comm
