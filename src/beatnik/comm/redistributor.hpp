#pragma once
// Moves a distributed 2D array from one box layout to another (e.g. blocks -> x-lines), the
// reshape step of the distributed FFT. Which rank owns which box is all it needs; the exchange
// algorithm is a run-time strategy, and packing/unpacking are caller-supplied element functions
// so that type conversion or transposition happens during the copy.
#include <mpi.h>

#include <string>
#include <vector>

#include "beatnik/base/box.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/parallel_for.hpp"

namespace beatnik::comm {

enum class ExchangeAlgorithm { Alltoallv, P2P };

const char* to_string(ExchangeAlgorithm a);

// A run of the packed buffer: the elements of `box` in (i outer, j inner) order.
struct Segment {
  int i0, j0, width;  // box origin and j-extent
  long offset;        // first element in the buffer
};

// All runs of one direction of an exchange.
struct SegmentTable {
  exec::Buffer<Segment> segments;  // in the exchange's memory space
  int count = 0;
  long total = 0;  // elements
  std::vector<int> peer;
  std::vector<long> peer_count, peer_offset;  // per peer (indexed by communicator rank)
};

class Redistributor {
 public:
  Redistributor(MPI_Comm comm, const std::vector<Box2>& from, const std::vector<Box2>& to,
                exec::Space space, std::vector<int> locality, CommStats* stats, std::string pattern,
                ExchangeAlgorithm algorithm = ExchangeAlgorithm::Alltoallv,
                Transport* transport = nullptr);
  ~Redistributor();
  Redistributor(const Redistributor&) = delete;
  Redistributor& operator=(const Redistributor&) = delete;

  // Elements the caller's send and receive buffers must hold (for either direction).
  long buffer_elements() const;

  // Forward: data laid out by `from` -> `to`; reverse: the other way. pack(i, j) returns the
  // source element at global (i, j); unpack(i, j, value) stores it in the destination.
  template <class T, class Pack, class Unpack>
  void execute(T* sendbuf, T* recvbuf, Pack pack, Unpack unpack, bool reverse = false);

 private:
  void transfer(const void* send, void* recv, int elem_bytes, bool reverse);
  void nccl_transfer(const void* send, void* recv, int elem_bytes, const SegmentTable& out,
                     const SegmentTable& in);
  MPI_Datatype element_type(int bytes);

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  exec::Space space_;
  std::vector<int> locality_;
  CommStats* stats_;
  std::string pattern_;
  ExchangeAlgorithm algorithm_;
  SegmentTable from_side_, to_side_;  // my from-box cut by every to-box, and vice versa
  bool self_only_ = false;
  // How the bytes travel; MPI-based transports run `algorithm_`, nccl one grouped send/recv.
  Transport* transport_;
  PinnedBuffer host_send_, host_recv_;  // staged transport: pinned copies, grown once
  std::vector<Message> nccl_sends_, nccl_recvs_;
  std::vector<int> counts_, displs_, rcounts_, rdispls_;
  std::vector<MPI_Request> requests_;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  int type_bytes_ = 0;
};

namespace detail {
BEATNIK_HOST_DEVICE inline int find_segment(const Segment* s, int n, long k) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (s[mid].offset <= k) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
}  // namespace detail

template <class T, class Pack, class Unpack>
void Redistributor::execute(T* sendbuf, T* recvbuf, Pack pack, Unpack unpack, bool reverse) {
  const SegmentTable& out = reverse ? to_side_ : from_side_;
  const SegmentTable& in = reverse ? from_side_ : to_side_;
  {
    const Segment* seg = out.segments.data();
    const int n = out.count;
    exec::parallel_for(space_, out.total, [=] BEATNIK_HOST_DEVICE(long k) {
      const Segment s = seg[detail::find_segment(seg, n, k)];
      const long e = k - s.offset;
      sendbuf[k] = pack(s.i0 + static_cast<int>(e / s.width), s.j0 + static_cast<int>(e % s.width));
    });
  }
  const T* src = recvbuf;
  if (self_only_) {
    src = sendbuf;  // one rank owns everything: unpack straight from the packed buffer
    if (stats_) {
      stats_->add_call(pattern_);
      stats_->add_message(pattern_, 0, out.total * long(sizeof(T)));
    }
  } else {
    transfer(sendbuf, recvbuf, sizeof(T), reverse);
  }
  {
    const Segment* seg = in.segments.data();
    const int n = in.count;
    exec::parallel_for(space_, in.total, [=] BEATNIK_HOST_DEVICE(long k) {
      const Segment s = seg[detail::find_segment(seg, n, k)];
      const long e = k - s.offset;
      unpack(s.i0 + static_cast<int>(e / s.width), s.j0 + static_cast<int>(e % s.width), src[k]);
    });
  }
}

}  // namespace beatnik::comm
