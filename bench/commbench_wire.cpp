#include "commbench_wire.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/context.hpp"
#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::bench {

BufferKind parse_buffer_kind(const std::string& s) {
  BufferKind k;
  if (s == "host") k = BufferKind::Host;
  else if (s == "pinned") k = BufferKind::Pinned;
  else if (s == "device") k = BufferKind::Device;
  else throw InputError("--buffer " + s + ": expected host, pinned or device");
  if (k != BufferKind::Host && !exec::cuda_built())
    throw NotAvailable("--buffer " + s + ": this beatnik-commbench was built without CUDA (cmake --preset cuda)");
  return k;
}

const char* to_string(BufferKind k) {
  return k == BufferKind::Host ? "host" : k == BufferKind::Pinned ? "pinned" : "device";
}

Buf::Buf(BufferKind kind, std::size_t bytes) : kind_(kind), bytes_(bytes) {
  const std::size_t n = std::max<std::size_t>(bytes, 1);
  if (kind == BufferKind::Pinned) {
    pinned_.reserve(n);
    ptr_ = pinned_.data();
  } else {
    plain_ = exec::Buffer<char>(space(), n);
    ptr_ = plain_.data();
  }
}

void Buf::put(const unsigned char* host, std::size_t offset, std::size_t bytes) {
  exec::copy_bytes(ptr_ + offset, space(), host, exec::Space::Host, bytes);
}

void Buf::get(unsigned char* host, std::size_t offset, std::size_t bytes) const {
  exec::copy_bytes(host, exec::Space::Host, ptr_ + offset, space(), bytes);
}

Wire::Wire(MPI_Comm comm, BufferKind kind, bool nccl) : comm_(comm), kind_(kind) {
  if (nccl) {
    if (kind != BufferKind::Device)
      throw InputError("--transport nccl moves device buffers: add --buffer device");
    ctx_ = std::make_unique<comm::Context>(comm);
    nccl_ = std::make_unique<comm::Transport>(*ctx_, exec::Space::Device, comm::TransportKind::Nccl);
  }
}

Wire::~Wire() = default;

std::string Wire::describe() const {
  if (nccl_) return "NCCL grouped send/receive, device buffers";
  if (kind_ == BufferKind::Device) return "MPI, device buffers staged through pinned host memory";
  return fmt::format("MPI, {} buffers", to_string(kind_));
}

long extent(const Messages& m) {
  long e = 0;
  for (const auto& x : m) e = std::max(e, x.offset + x.bytes);
  return e;
}

void Wire::exchange(const Buf& send, const Messages& sends, Buf& recv, const Messages& recvs) {
  if (nccl_) {
    nccl_->nccl_exchange(comm_, send.data(), sends.data(), static_cast<int>(sends.size()), recv.data(), recvs.data(),
                         static_cast<int>(recvs.size()));
    exec::fence(exec::Space::Device);
    return;
  }
  const bool staged = kind_ == BufferKind::Device;
  const std::size_t se = extent(sends), re = extent(recvs);
  const comm::Transport& t = comm::basic_transport(staged ? exec::Space::Device : exec::Space::Host);
  const char* s = static_cast<const char*>(staged ? t.mpi_send_buffer(send.data(), se, stage_send_) : send.data());
  char* r = static_cast<char*>(staged ? t.mpi_recv_buffer(recv.data(), re, stage_recv_) : recv.data());
  req_.assign(sends.size() + recvs.size(), MPI_REQUEST_NULL);
  size_t q = 0;
  for (const auto& m : recvs)
    comm::check_mpi(MPI_Irecv(r + m.offset, static_cast<int>(m.bytes), MPI_BYTE, m.peer, 0, comm_, &req_[q++]), "MPI_Irecv");
  for (const auto& m : sends)
    comm::check_mpi(MPI_Isend(s + m.offset, static_cast<int>(m.bytes), MPI_BYTE, m.peer, 0, comm_, &req_[q++]), "MPI_Isend");
  comm::check_mpi(MPI_Waitall(static_cast<int>(req_.size()), req_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  if (staged) t.mpi_received(recv.data(), r, re);
}

void Wire::alltoallv(const Buf& send, const std::vector<int>& sc, const std::vector<int>& sd, Buf& recv,
                     const std::vector<int>& rc, const std::vector<int>& rd, bool uniform) {
  if (nccl_) {  // NCCL has no all-to-all(v): one grouped send/receive per peer
    Messages s, r;
    for (size_t p = 0; p < sc.size(); ++p) {
      s.push_back({static_cast<int>(p), sd[p], sc[p]});
      r.push_back({static_cast<int>(p), rd[p], rc[p]});
    }
    exchange(send, s, recv, r);
    return;
  }
  const bool staged = kind_ == BufferKind::Device;
  long se = 0, re = 0;
  for (size_t p = 0; p < sc.size(); ++p) {
    se = std::max<long>(se, long(sd[p]) + sc[p]);
    re = std::max<long>(re, long(rd[p]) + rc[p]);
  }
  const comm::Transport& t = comm::basic_transport(staged ? exec::Space::Device : exec::Space::Host);
  const void* s = staged ? t.mpi_send_buffer(send.data(), se, stage_send_) : send.data();
  void* r = staged ? t.mpi_recv_buffer(recv.data(), re, stage_recv_) : recv.data();
  if (uniform)
    comm::check_mpi(MPI_Alltoall(s, sc[0], MPI_BYTE, r, rc[0], MPI_BYTE, comm_), "MPI_Alltoall");
  else
    comm::check_mpi(MPI_Alltoallv(s, sc.data(), sd.data(), MPI_BYTE, r, rc.data(), rd.data(), MPI_BYTE, comm_),
              "MPI_Alltoallv");
  if (staged) t.mpi_received(recv.data(), r, re);
}

}  // namespace beatnik::bench
