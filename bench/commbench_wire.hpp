#pragma once
// beatnik-commbench's moving parts (docs/commbench.md): buffers of the kinds a run uses (host,
// pinned host, device), one exchange of a list of messages over MPI (device data staged through
// pinned host memory: there is no CUDA-aware MPI here) or NCCL, and the byte pattern -c checks.
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "beatnik/comm/transport.hpp"
#include "beatnik/exec/memory.hpp"

namespace beatnik::bench {

enum class BufferKind { Host, Pinned, Device };
BufferKind parse_buffer_kind(const std::string& s);  // InputError / NotAvailable
const char* to_string(BufferKind k);

// A communication buffer of one kind, with host images for filling and checking.
class Buf {
 public:
  Buf(BufferKind kind, std::size_t bytes);
  char* data() const { return ptr_; }
  std::size_t size() const { return bytes_; }
  BufferKind kind() const { return kind_; }
  exec::Space space() const { return kind_ == BufferKind::Device ? exec::Space::Device : exec::Space::Host; }
  void put(const unsigned char* host, std::size_t offset, std::size_t bytes);  // host -> buffer
  void get(unsigned char* host, std::size_t offset, std::size_t bytes) const;  // buffer -> host

 private:
  BufferKind kind_;
  std::size_t bytes_;
  exec::Buffer<char> plain_;   // host or device
  comm::PinnedBuffer pinned_;  // pinned
  char* ptr_ = nullptr;
};

// Where peers are ranks of `comm`; a message: `bytes` at byte `offset` of the buffer.
using Messages = std::vector<comm::Message>;
// The bytes a message list spans in its buffer.
long extent(const Messages& m);

class Wire {
 public:
  // nccl: grouped NCCL send/receives (device buffers only); else MPI point to point.
  Wire(MPI_Comm comm, BufferKind kind, bool nccl);
  ~Wire();
  // Every message of `sends` and `recvs` at once; returns when all arrived (device work fenced).
  void exchange(const Buf& send, const Messages& sends, Buf& recv, const Messages& recvs);
  // MPI_Alltoall(v) (NCCL: grouped send/receives): counts and displacements in bytes.
  void alltoallv(const Buf& send, const std::vector<int>& scount, const std::vector<int>& sdispl, Buf& recv,
                 const std::vector<int>& rcount, const std::vector<int>& rdispl, bool uniform);
  std::string describe() const;

 private:
  MPI_Comm comm_;
  BufferKind kind_;
  std::unique_ptr<comm::Context> ctx_;
  std::unique_ptr<comm::Transport> nccl_;
  comm::PinnedBuffer stage_send_, stage_recv_;
  std::vector<MPI_Request> req_;
};

// The byte -c expects at position k of message `msg` from rank `from` to rank `to` in iteration
// `iter` (OSU's -c, keyed so that a message from the wrong sender, iteration or place shows).
inline unsigned char pattern_byte(int from, int to, long iter, long msg, long k) {
  unsigned long h = 0x9E3779B97F4A7C15ul * static_cast<unsigned long>(from + 1);
  h ^= 0xC2B2AE3D27D4EB4Ful * static_cast<unsigned long>(to + 7);
  h ^= 0x165667B19E3779F9ul * static_cast<unsigned long>(iter + 3);
  h ^= 0x27D4EB2F165667C5ul * static_cast<unsigned long>(msg + 11);
  h ^= h >> 29;
  return static_cast<unsigned char>((h + static_cast<unsigned long>(k) * ((h >> 8 & 0x7e) | 1)) >> 3);
}

}  // namespace beatnik::bench
