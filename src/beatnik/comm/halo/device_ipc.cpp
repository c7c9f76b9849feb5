// device-ipc: one-sided halo exchange between GPUs of one node. Each rank maps its neighbours'
// device receive buffers once (CUDA IPC memory handles); the pack kernel writes every message
// straight into the neighbour's buffer, and the neighbour learns it has arrived from an IPC
// event plus a zero-byte MPI message (MPI carries only the signal, never the data):
//
//   sender                                      receiver
//   before_pack: wait "ready" (k > 0), then     ...
//     the kernel stream waits the receiver's
//     "unpacked" event
//   pack kernel -> remote buffer
//   start: record "packed", send "arrived"  ->  finish: wait "arrived", the kernel stream waits
//                                                 the sender's "packed" event; unpack kernel
//                                          <-   after_unpack: record "unpacked", send "ready"
//
// Every signal is per link (peer and direction tag), so neighbours that repeat on grids of
// extent 1 or 2 are told apart. No host-device synchronisation on either side: the host only
// orders event records against MPI messages. Ranks must share a node (CUDA IPC), and their
// GPUs must be the same or able to reach each other (peer access); both are checked when the
// exchange is made, alike on every rank.
#include <mpi.h>

#include <map>
#include <memory>
#include <vector>

#include "beatnik/comm/halo/halo_strategy.hpp"
#include "beatnik/exec/stream.hpp"

#if defined(BEATNIK_WITH_CUDA)
#include <cuda_runtime.h>
#endif

namespace beatnik::comm::halo {

#if defined(BEATNIK_WITH_CUDA)
namespace {

// The stream the kernels run on (stream 0 unless a graph's step runs: exec/stream.hpp).
cudaStream_t kernels() { return static_cast<cudaStream_t>(exec::work_stream()); }

// MPI tags of the three messages, offset by the link's direction tag (0..7).
constexpr int kTagHandles = 100, kTagArrived = 200, kTagReady = 300, kTagPackedEvent = 400;

// What a receiver tells the sender of each receive link once: where the message goes, and
// the event the receiver records after unpacking.
struct RecvInfo {
  cudaIpcMemHandle_t buffer;
  cudaIpcEventHandle_t unpacked;
  long offset;  // doubles from the start of the receiver's buffer
};

class DeviceIpc final : public Strategy {
 public:
  explicit DeviceIpc(const Setup& s) : s_(s) {
    MPI_Comm_dup(s.comm, &comm_);
    // One node only: CUDA IPC does not cross nodes. Decided alike on every rank.
    MPI_Comm node;
    MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_size = 0, size = 0;
    MPI_Comm_size(node, &node_size);
    MPI_Comm_size(comm_, &size);
    MPI_Comm_free(&node);
    if (node_size != size) {
      MPI_Comm_free(&comm_);
      throw NotAvailable("halo strategy device-ipc: CUDA IPC reaches GPUs of one node only, and this run spans " +
                         std::string("several nodes; use --gpu-transport nccl or another halo strategy"));
    }
    bool ok = cudaEventCreateWithFlags(&packed_, cudaEventDisableTiming | cudaEventInterprocess) == cudaSuccess &&
              cudaEventCreateWithFlags(&unpacked_, cudaEventDisableTiming | cudaEventInterprocess) == cudaSuccess;
    // Handles of this rank's receive buffer and events, to the sender of each receive link.
    RecvInfo mine{};
    cudaIpcEventHandle_t packed_handle{};
    if (ok && s.recv_size > 0) ok = cudaIpcGetMemHandle(&mine.buffer, s.recv) == cudaSuccess;
    if (ok) ok = cudaIpcGetEventHandle(&mine.unpacked, unpacked_) == cudaSuccess;
    if (ok) ok = cudaIpcGetEventHandle(&packed_handle, packed_) == cudaSuccess;
    std::vector<RecvInfo> out(s.recvs.size(), mine), in(s.sends.size());
    std::vector<cudaIpcEventHandle_t> packed_in(s.recvs.size());
    std::vector<MPI_Request> reqs;
    for (size_t r = 0; r < s.recvs.size(); ++r) {
      out[r].offset = s.recvs[r].offset;
      reqs.emplace_back();
      MPI_Isend(&out[r], sizeof(RecvInfo), MPI_BYTE, s.recvs[r].peer, kTagHandles + s.recvs[r].tag, comm_,
                &reqs.back());
      reqs.emplace_back();
      MPI_Irecv(&packed_in[r], sizeof(cudaIpcEventHandle_t), MPI_BYTE, s.recvs[r].peer, kTagPackedEvent + s.recvs[r].tag,
                comm_, &reqs.back());
    }
    for (size_t k = 0; k < s.sends.size(); ++k) {
      reqs.emplace_back();
      MPI_Irecv(&in[k], sizeof(RecvInfo), MPI_BYTE, s.sends[k].peer, kTagHandles + s.sends[k].tag, comm_,
                &reqs.back());
      reqs.emplace_back();
      MPI_Isend(&packed_handle, sizeof(cudaIpcEventHandle_t), MPI_BYTE, s.sends[k].peer,
                kTagPackedEvent + s.sends[k].tag, comm_, &reqs.back());
    }
    MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    // Map every peer once (a peer may be several links' neighbour).
    std::string why;
    for (size_t k = 0; k < s.sends.size() && ok; ++k) {
      const int peer = s.sends[k].peer;
      if (!buffer_of_.count(peer)) {
        void* p = nullptr;
        if (cudaIpcOpenMemHandle(&p, in[k].buffer, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
          why = std::string("cudaIpcOpenMemHandle: ") + cudaGetErrorString(cudaGetLastError());
          ok = false;
          break;
        }
        buffer_of_[peer] = static_cast<double*>(p);
        cudaEvent_t e;
        if (cudaIpcOpenEventHandle(&e, in[k].unpacked) != cudaSuccess) {
          why = std::string("cudaIpcOpenEventHandle: ") + cudaGetErrorString(cudaGetLastError());
          ok = false;
          break;
        }
        unpacked_of_[peer] = e;
      }
      targets_.push_back(buffer_of_[peer] + in[k].offset);
    }
    for (size_t r = 0; r < s.recvs.size() && ok; ++r) {
      const int peer = s.recvs[r].peer;
      if (packed_of_.count(peer)) continue;
      cudaEvent_t e;
      if (cudaIpcOpenEventHandle(&e, packed_in[r]) != cudaSuccess) {
        why = std::string("cudaIpcOpenEventHandle: ") + cudaGetErrorString(cudaGetLastError());
        ok = false;
        break;
      }
      packed_of_[peer] = e;
    }
    int all_ok = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, comm_);
    if (!all_ok) {
      release();
      throw NotAvailable("halo strategy device-ipc: the GPUs of neighbouring ranks cannot map each other's memory" +
                         (why.empty() ? std::string() : " (" + why + ")") +
                         "; use --halo-strategy isend or --gpu-transport nccl");
    }
  }

  ~DeviceIpc() override {
    // The senders' last "ready" messages are still unreceived: take them, so that no message
    // is left behind on the communicator, then let go of the mappings.
    if (mpi_alive()) {
      if (!first_) wait_ready();
      MPI_Waitall(static_cast<int>(ready_sent_.size()), ready_sent_.data(), MPI_STATUSES_IGNORE);
      MPI_Barrier(comm_);  // nobody unmaps a buffer a neighbour's kernel may still be writing
    }
    release();
  }

  double* remote_target(int k) const override { return targets_[k]; }

  void before_pack() override {
    if (!first_) wait_ready();
    first_ = false;
    for (const auto& [peer, e] : unpacked_of_) cudaStreamWaitEvent(kernels(), e, 0);
  }

  void start() override {
    cudaEventRecord(packed_, kernels());
    arrived_.assign(s_.sends.size() + s_.recvs.size(), MPI_REQUEST_NULL);
    for (size_t k = 0; k < s_.sends.size(); ++k)
      MPI_Isend(nullptr, 0, MPI_BYTE, s_.sends[k].peer, kTagArrived + s_.sends[k].tag, comm_, &arrived_[k]);
    for (size_t r = 0; r < s_.recvs.size(); ++r)
      MPI_Irecv(nullptr, 0, MPI_BYTE, s_.recvs[r].peer, kTagArrived + s_.recvs[r].tag, comm_,
                &arrived_[s_.sends.size() + r]);
  }

  void finish() override {
    MPI_Waitall(static_cast<int>(arrived_.size()), arrived_.data(), MPI_STATUSES_IGNORE);
    for (const auto& [peer, e] : packed_of_) cudaStreamWaitEvent(kernels(), e, 0);
  }

  void after_unpack() override {
    cudaEventRecord(unpacked_, kernels());
    MPI_Waitall(static_cast<int>(ready_sent_.size()), ready_sent_.data(), MPI_STATUSES_IGNORE);
    ready_sent_.assign(s_.recvs.size(), MPI_REQUEST_NULL);
    for (size_t r = 0; r < s_.recvs.size(); ++r)
      MPI_Isend(nullptr, 0, MPI_BYTE, s_.recvs[r].peer, kTagReady + s_.recvs[r].tag, comm_, &ready_sent_[r]);
  }

 private:
  // The receivers of every send link have unpacked the last exchange (their "ready").
  void wait_ready() {
    std::vector<MPI_Request> req(s_.sends.size(), MPI_REQUEST_NULL);
    for (size_t k = 0; k < s_.sends.size(); ++k)
      MPI_Irecv(nullptr, 0, MPI_BYTE, s_.sends[k].peer, kTagReady + s_.sends[k].tag, comm_, &req[k]);
    MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE);
  }

  void release() noexcept {
    for (auto& [peer, p] : buffer_of_) cudaIpcCloseMemHandle(p);
    for (auto& [peer, e] : unpacked_of_) cudaEventDestroy(e);
    for (auto& [peer, e] : packed_of_) cudaEventDestroy(e);
    buffer_of_.clear();
    unpacked_of_.clear();
    packed_of_.clear();
    if (packed_) cudaEventDestroy(packed_);
    if (unpacked_) cudaEventDestroy(unpacked_);
    packed_ = unpacked_ = nullptr;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
  }

  Setup s_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  cudaEvent_t packed_ = nullptr, unpacked_ = nullptr;  // this rank's, shared with its neighbours
  std::map<int, double*> buffer_of_;                    // peer -> its mapped receive buffer
  std::map<int, cudaEvent_t> unpacked_of_, packed_of_;  // peer -> its events, mapped
  std::vector<double*> targets_;                        // per send link
  std::vector<MPI_Request> arrived_, ready_sent_;
  bool first_ = true;  // no exchange yet: no "ready" to wait for
};

}  // namespace

std::unique_ptr<Strategy> make_device_ipc(const Setup& s) { return std::make_unique<DeviceIpc>(s); }

#else

std::unique_ptr<Strategy> make_device_ipc(const Setup&) {
  throw NotAvailable("halo strategy device-ipc: this beatnik was built without the CUDA backend");
}

#endif

}  // namespace beatnik::comm::halo
