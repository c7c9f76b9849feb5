#pragma once
// Moves a distributed 2D array from one box layout to another (e.g. blocks -> x-lines), the
// reshape step of the distributed FFT. Which rank owns which box is all it needs; the exchange
// algorithm is a run-time strategy, and packing/unpacking are caller-supplied element functions
// so that type conversion or transposition happens during the copy.
//
// Invariant of every algorithm: all packing (reads of the source) finishes before the first
// unpack (write of the destination), so source and destination may share one array.
#include <mpi.h>

#include <climits>
#include <string>
#include <utility>
#include <vector>

#include "beatnik/base/box.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/parallel_for.hpp"

namespace beatnik::comm {

// How the packed runs travel. New transports (e.g. a device-resident NCCL exchange) add an
// enumerator here, a name in to_string/parse_exchange_algorithm, a reason in
// exchange_unavailable_reason, and a case in Redistributor::transfer (or their own execute path
// like P2PPipelined).
enum class ExchangeAlgorithm {
  Alltoallv,     // MPI_Alltoallv with the exact per-pair counts
  Alltoall,      // MPI_Alltoall with every pair padded to the largest per-pair count
  P2P,           // pack all, MPI_Irecv/MPI_Isend to every partner, wait all, unpack all
  P2PPipelined,  // post receives; pack and send partner by partner; unpack each arrival
  Nccl,          // NCCL send/recv on device buffers (CUDA build with NCCL; not implemented yet)
};

const char* to_string(ExchangeAlgorithm a);
// Accepts the names to_string prints; false for anything else.
bool parse_exchange_algorithm(const std::string& name, ExchangeAlgorithm& out);
// "alltoallv, alltoall, p2p, p2p-pipelined or nccl" (for messages).
const char* exchange_algorithm_names();
// Empty when `a` can run with data in `space` in this build; otherwise why not (for NotAvailable).
std::string exchange_unavailable_reason(ExchangeAlgorithm a, exec::Space space);

// A run of the packed buffer: the elements of a box in (i outer, j inner) order.
struct Segment {
  int i0, j0, width;  // box origin and j-extent
  long offset;        // first element in the dense packed order (0..total)
  long slot;          // first element in the message buffer (== offset unless padded)
};

// All runs of one direction of an exchange: one run per partner (two boxes meet in one box).
struct SegmentTable {
  exec::Buffer<Segment> segments;  // in the exchange's memory space
  std::vector<Segment> host;       // the same, readable on the host
  int count = 0;
  long total = 0;  // elements
  std::vector<int> peer;
  std::vector<int> peer_segment;              // run index of each communicator rank, or -1
  std::vector<long> peer_count, peer_offset;  // per peer (indexed by communicator rank)
};

// Planning, pure (the Redistributor and the dry run, app/dry_run.hpp, both use it):
// `mine` cut by every box of `theirs`, in rank order: the runs this rank sends (or receives).
void plan_side(SegmentTable& t, const Box2& mine, const std::vector<Box2>& theirs);
// The per-pair count of the padded all-to-all over these layouts: the largest run any pair
// exchanges in either direction (at least 1).
long plan_pad(const std::vector<Box2>& from, const std::vector<Box2>& to);
// The messages (peer, elements) one exchange sends, as the accounting counts them: one per run;
// or, padded (the padded all-to-all on 2+ ranks), `pad` to every one of `size` ranks.
std::vector<std::pair<int, long>> planned_messages(const SegmentTable& out, bool padded, long pad, int size);

class Redistributor {
 public:
  // Collective over `comm` (the padded all-to-all agrees on its message size here).
  Redistributor(MPI_Comm comm, const std::vector<Box2>& from, const std::vector<Box2>& to,
                exec::Space space, std::vector<int> locality, CommStats* stats, std::string pattern,
                ExchangeAlgorithm algorithm = ExchangeAlgorithm::Alltoallv,
                Transport* transport = nullptr);
  ~Redistributor();
  Redistributor(const Redistributor&) = delete;
  Redistributor& operator=(const Redistributor&) = delete;

  // Elements the caller's send and receive buffers must hold (for either direction; the padded
  // all-to-all needs communicator size x padded count).
  long buffer_elements() const;

  // Forward: data laid out by `from` -> `to`; reverse: the other way. pack(i, j) returns the
  // source element at global (i, j); unpack(i, j, value) stores it in the destination.
  template <class T, class Pack, class Unpack>
  void execute(T* sendbuf, T* recvbuf, Pack pack, Unpack unpack, bool reverse = false);

  // The message exchange alone, with this object's counts and transport, on buffers of
  // buffer_elements() elements of `elem_bytes` (benchmark baseline; pipelined runs as p2p; the own
  // run stays out of the MPI call as in execute()).
  // Not counted in the CommStats.
  void exchange_only(const void* send, void* recv, int elem_bytes, bool reverse);

  // Useful bytes this rank sends to other ranks in one direction (no padding, no self copy).
  long payload_bytes_to_others(bool reverse, int elem_bytes) const;
  ExchangeAlgorithm algorithm() const { return algorithm_; }
  // The exchange leaves this rank's own run out of the MPI call (alltoallv and p2p over MPI):
  // execute() unpacks it from the send buffer, one copy less. Counted as before.
  bool skips_self() const {
    return (algorithm_ == ExchangeAlgorithm::Alltoallv || algorithm_ == ExchangeAlgorithm::P2P) &&
           !transport_->uses_nccl();
  }
  MPI_Comm comm() const { return comm_; }

 private:
  void transfer(const void* send, void* recv, int elem_bytes, bool reverse, bool count_stats);
  void nccl_transfer(const void* send, void* recv, int elem_bytes, const SegmentTable& out,
                     const SegmentTable& in, bool count_stats);
  // The exchange's accounting (and, with --trace, its messages, started at mark_start()).
  void record(const SegmentTable& out, const SegmentTable& in, int elem_bytes, bool padded);
  void mark_start();
  MPI_Datatype element_type(int bytes);
  char* stage(bool send, size_t bytes);

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  exec::Space space_;
  std::vector<int> locality_;
  CommStats* stats_;
  std::string pattern_;
  ExchangeAlgorithm algorithm_;
  SegmentTable from_side_, to_side_;  // my from-box cut by every to-box, and vice versa
  long pad_ = 0;                      // per-pair message size of the padded all-to-all
  bool self_only_ = false;
  // How the bytes travel; MPI-based transports run `algorithm_`, nccl one grouped send/recv.
  Transport* transport_;
  PinnedBuffer host_send_, host_recv_;  // staged transport: pinned copies, grown once
  std::vector<Message> nccl_sends_, nccl_recvs_;
  std::vector<int> counts_, displs_, rcounts_, rdispls_;
  std::vector<MPI_Request> requests_;
  std::vector<int> request_peer_;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  int type_bytes_ = 0;
  double trace_t0_ = 0;  // --trace: when the exchange being recorded began

 public:
  // Pieces of the pipelined exchange (public only because nvcc's extended lambdas may not live
  // in private member functions).
  template <class T, class Pack, class Unpack>
  void execute_pipelined(T* sendbuf, T* recvbuf, Pack pack, Unpack unpack, bool reverse);
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

// All runs of a table into (pack) or out of (unpack) a message buffer.
// Host: calls f(row, i, j0, width) for every row of every run, rows in parallel; `row` points
// at the row's first element in buf.
template <class Ptr, class F>
void for_each_row(const SegmentTable& t, F f, Ptr buf) {
  for (int q = 0; q < t.count; ++q) {
    const Segment s = t.host[q];
    const long rows = ((q + 1 < t.count ? t.host[q + 1].offset : t.total) - s.offset) / s.width;
#pragma omp parallel
    {
      const F g = f;  // a thread-local copy: captures stay in registers (exec/parallel_for.hpp)
#pragma omp for schedule(static)
      for (long r = 0; r < rows; ++r) g(buf + s.slot + r * s.width, s.i0 + static_cast<int>(r), s.j0, s.width);
    }
  }
}

template <class T, class Pack>
void pack_runs(exec::Space space, const SegmentTable& t, T* buf, Pack pack) {
  if (space == exec::Space::Host) {  // row by row: contiguous inner loops, no per-element search
    for_each_row(t, [=](T* b, int i, int j0, int width) {
      for (int c = 0; c < width; ++c) b[c] = pack(i, j0 + c);
    }, buf);
    return;
  }
  const Segment* seg = t.segments.data();
  const int n = t.count;
  exec::parallel_for(space, t.total, [=] BEATNIK_HOST_DEVICE(long k) {
    const Segment s = seg[find_segment(seg, n, k)];
    const long e = k - s.offset;
    buf[s.slot + e] = pack(s.i0 + static_cast<int>(e / s.width), s.j0 + static_cast<int>(e % s.width));
  });
}
// Segment `self_seg` (if >= 0) is read from `self_buf` (its first element) instead of `buf`:
// this rank's own run, unpacked straight from the send buffer.
template <class T, class Unpack>
void unpack_runs(exec::Space space, const SegmentTable& t, const T* buf, Unpack unpack, int self_seg = -1,
                 const T* self_buf = nullptr) {
  if (space == exec::Space::Host) {
    for (int q = 0; q < t.count; ++q) {
      const Segment s = t.host[q];
      const T* base = q == self_seg ? self_buf : buf + s.slot;
      const long rows = ((q + 1 < t.count ? t.host[q + 1].offset : t.total) - s.offset) / s.width;
#pragma omp parallel
      {
        const Unpack u = unpack;  // a thread-local copy (exec/parallel_for.hpp)
#pragma omp for schedule(static)
        for (long r = 0; r < rows; ++r) {
          const T* b = base + r * s.width;
          const int i = s.i0 + static_cast<int>(r);
          for (int c = 0; c < s.width; ++c) u(i, s.j0 + c, b[c]);
        }
      }
    }
    return;
  }
  const Segment* seg = t.segments.data();
  const int n = t.count;
  exec::parallel_for(space, t.total, [=] BEATNIK_HOST_DEVICE(long k) {
    const int q = find_segment(seg, n, k);
    const Segment s = seg[q];
    const long e = k - s.offset;
    const T v = q == self_seg ? self_buf[e] : buf[s.slot + e];
    unpack(s.i0 + static_cast<int>(e / s.width), s.j0 + static_cast<int>(e % s.width), v);
  });
}

// One run (`count` elements) into or out of `buf`, which points at the run's first element.
template <class T, class Pack>
void pack_run(exec::Space space, Segment s, long count, T* buf, Pack pack) {
  exec::parallel_for(space, count, [=] BEATNIK_HOST_DEVICE(long e) {
    buf[e] = pack(s.i0 + static_cast<int>(e / s.width), s.j0 + static_cast<int>(e % s.width));
  });
}
template <class T, class Unpack>
void unpack_run(exec::Space space, Segment s, long count, const T* buf, Unpack unpack) {
  exec::parallel_for(space, count, [=] BEATNIK_HOST_DEVICE(long e) {
    unpack(s.i0 + static_cast<int>(e / s.width), s.j0 + static_cast<int>(e % s.width), buf[e]);
  });
}
}  // namespace detail

template <class T, class Pack, class Unpack>
void Redistributor::execute(T* sendbuf, T* recvbuf, Pack pack, Unpack unpack, bool reverse) {
  // Pipelining is an MPI schedule; over NCCL the exchange is one grouped call anyway.
  if (algorithm_ == ExchangeAlgorithm::P2PPipelined && !self_only_ && !transport_->uses_nccl()) {
    mark_start();
    execute_pipelined(sendbuf, recvbuf, pack, unpack, reverse);
    return;
  }
  const SegmentTable& out = reverse ? to_side_ : from_side_;
  const SegmentTable& in = reverse ? from_side_ : to_side_;
  mark_start();
  detail::pack_runs(space_, out, sendbuf, pack);
  const T* src = recvbuf;
  int self_seg = -1;
  if (self_only_) {
    src = sendbuf;  // one rank owns everything: unpack straight from the packed buffer
    record(out, in, sizeof(T), false);
  } else {
    transfer(sendbuf, recvbuf, sizeof(T), reverse, true);
    // The own run did not travel through MPI (transfer): unpack it from the packed buffer.
    if (skips_self() && in.peer_count[rank_] > 0) self_seg = in.peer_segment[rank_];
  }
  detail::unpack_runs(space_, in, src, unpack, self_seg, sendbuf + out.peer_offset[rank_]);
}

template <class T, class Pack, class Unpack>
void Redistributor::execute_pipelined(T* sendbuf, T* recvbuf, Pack pack, Unpack unpack, bool reverse) {
  const SegmentTable& out = reverse ? to_side_ : from_side_;
  const SegmentTable& in = reverse ? from_side_ : to_side_;
  const long E = sizeof(T);
  const bool staged = transport_->kind() == TransportKind::Staged;  // MPI sees host copies
  char* hs = staged ? stage(true, size_t(out.total) * E) : reinterpret_cast<char*>(sendbuf);
  char* hr = staged ? stage(false, size_t(in.total) * E) : reinterpret_cast<char*>(recvbuf);
  MPI_Datatype t = element_type(E);
  // 1. Every receive is posted before anything is sent.
  int nrecv = 0;
  for (int r : in.peer) {
    if (r == rank_) continue;
    if (in.peer_count[r] > INT_MAX) throw Error("redistributor: message too large for MPI int counts");
    request_peer_[nrecv] = r;
    check_mpi(MPI_Irecv(hr + in.peer_offset[r] * E, static_cast<int>(in.peer_count[r]), t, r, 8, comm_,
                        &requests_[nrecv]),
              "MPI_Irecv");
    ++nrecv;
  }
  // 2. Pack and send partner by partner, starting after this rank so that partners are not all
  // served in the same order; this rank's own run is packed last.
  int nsend = 0;
  for (int k = 1; k <= size_; ++k) {
    const int r = (rank_ + k) % size_;
    const long c = out.peer_count[r];
    if (c == 0) continue;
    T* run = sendbuf + out.peer_offset[r];
    detail::pack_run(space_, out.host[out.peer_segment[r]], c, run, pack);
    if (r == rank_) continue;
    if (c > INT_MAX) throw Error("redistributor: message too large for MPI int counts");
    if (staged) exec::copy_bytes(hs + out.peer_offset[r] * E, exec::Space::Host, run, space_, c * E);
    check_mpi(MPI_Isend(hs + out.peer_offset[r] * E, static_cast<int>(c), t, r, 8, comm_,
                        &requests_[size_ + nsend]),
              "MPI_Isend");
    ++nsend;
  }
  // 3. Unpack the own run (all packing is done, so source and destination may alias), then
  // every message as it arrives.
  if (in.peer_count[rank_] > 0)
    detail::unpack_run(space_, in.host[in.peer_segment[rank_]], in.peer_count[rank_],
                       sendbuf + out.peer_offset[rank_], unpack);
  for (int done = 0; done < nrecv; ++done) {
    int idx = MPI_UNDEFINED;
    check_mpi(MPI_Waitany(nrecv, requests_.data(), &idx, MPI_STATUS_IGNORE), "MPI_Waitany");
    if (idx == MPI_UNDEFINED) throw Error("redistributor: MPI_Waitany found no active request");
    const int r = request_peer_[idx];
    T* run = recvbuf + in.peer_offset[r];
    if (staged) exec::copy_bytes(run, space_, hr + in.peer_offset[r] * E, exec::Space::Host, in.peer_count[r] * E);
    detail::unpack_run(space_, in.host[in.peer_segment[r]], in.peer_count[r], run, unpack);
  }
  check_mpi(MPI_Waitall(nsend, requests_.data() + size_, MPI_STATUSES_IGNORE), "MPI_Waitall");
  record(out, in, E, false);
}

}  // namespace beatnik::comm
