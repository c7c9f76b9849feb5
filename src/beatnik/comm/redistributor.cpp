#include "beatnik/comm/redistributor.hpp"

#include <algorithm>
#include <climits>

#include "beatnik/base/timers.hpp"
#include "beatnik/comm/message_trace.hpp"
#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::comm {

// My box cut by every peer's box, in peer order: the runs I send (or receive).
void plan_side(SegmentTable& t, const Box2& mine, const std::vector<Box2>& theirs) {
  const int p = static_cast<int>(theirs.size());
  t.host.clear();
  t.peer.clear();
  t.peer_count.assign(p, 0);
  t.peer_offset.assign(p, 0);
  t.peer_segment.assign(p, -1);
  long off = 0;
  for (int r = 0; r < p; ++r) {
    const Box2 b = intersect(mine, theirs[r]);
    t.peer_offset[r] = off;
    if (b.empty()) continue;
    t.peer.push_back(r);
    t.peer_count[r] = b.count();
    t.peer_segment[r] = static_cast<int>(t.host.size());
    t.host.push_back(Segment{b.lo[0], b.lo[1], b.extent(1), off, off});
    off += b.count();
  }
  t.total = off;
  t.count = static_cast<int>(t.host.size());
}

long plan_pad(const std::vector<Box2>& from, const std::vector<Box2>& to) {
  long pad = 1;
  for (const Box2& a : from)
    for (const Box2& b : to) {
      const Box2 c = intersect(a, b);
      if (!c.empty()) pad = std::max(pad, c.count());
    }
  return pad;
}

std::vector<std::pair<int, long>> planned_messages(const SegmentTable& out, bool padded, long pad, int size) {
  std::vector<std::pair<int, long>> m;
  if (padded) {
    for (int r = 0; r < size; ++r) m.emplace_back(r, pad);
  } else {
    for (int r : out.peer) m.emplace_back(r, out.peer_count[r]);
  }
  return m;
}

namespace {

// Message slots of the padded all-to-all: partner r's run starts at r * pad.
void pad_slots(SegmentTable& t, long pad) {
  for (int r : t.peer) t.host[t.peer_segment[r]].slot = r * pad;
}

void upload(SegmentTable& t, exec::Space space) {
  t.segments = exec::Buffer<Segment>(space, std::max<size_t>(t.host.size(), 1));
  if (!t.host.empty())
    exec::copy(t.segments.data(), space, t.host.data(), exec::Space::Host, t.host.size());
}

}  // namespace

const char* to_string(ExchangeAlgorithm a) {
  switch (a) {
    case ExchangeAlgorithm::Alltoallv: return "alltoallv";
    case ExchangeAlgorithm::Alltoall: return "alltoall";
    case ExchangeAlgorithm::P2P: return "p2p";
    case ExchangeAlgorithm::P2PPipelined: return "p2p-pipelined";
    case ExchangeAlgorithm::Nccl: return "nccl";
  }
  return "?";
}

bool parse_exchange_algorithm(const std::string& name, ExchangeAlgorithm& out) {
  for (ExchangeAlgorithm a : {ExchangeAlgorithm::Alltoallv, ExchangeAlgorithm::Alltoall, ExchangeAlgorithm::P2P,
                              ExchangeAlgorithm::P2PPipelined, ExchangeAlgorithm::Nccl})
    if (name == to_string(a)) {
      out = a;
      return true;
    }
  return false;
}

const char* exchange_algorithm_names() { return "alltoallv, alltoall, p2p, p2p-pipelined or nccl"; }

std::string exchange_unavailable_reason(ExchangeAlgorithm a, exec::Space space) {
  if (a != ExchangeAlgorithm::Nccl) return {};
  if (space != exec::Space::Device)
    return "--fft-exchange nccl: NCCL moves device data; run with -x cuda (or choose alltoallv, alltoall, "
           "p2p or p2p-pipelined)";
  if (!nccl_built())
    return "--fft-exchange nccl: this beatnik was built without NCCL (install NCCL and rebuild the cuda "
           "preset), or choose alltoallv, alltoall, p2p or p2p-pipelined";
  return {};
}

Redistributor::Redistributor(MPI_Comm comm, const std::vector<Box2>& from,
                             const std::vector<Box2>& to, exec::Space space,
                             std::vector<int> locality, CommStats* stats, std::string pattern,
                             ExchangeAlgorithm algorithm, Transport* transport)
    : comm_(comm),
      space_(space),
      locality_(std::move(locality)),
      stats_(stats),
      pattern_(std::move(pattern)),
      algorithm_(algorithm),
      transport_(transport ? transport : &basic_transport(space)) {
  if (const std::string why = exchange_unavailable_reason(algorithm, space); !why.empty())
    throw NotAvailable(why);
  if (algorithm == ExchangeAlgorithm::Nccl && !transport_->uses_nccl())
    throw NotAvailable("--fft-exchange nccl: the reshapes travel over NCCL only with the NCCL GPU transport "
                       "(--gpu-transport nccl, or auto with one GPU per rank and several ranks)");
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  if (static_cast<int>(from.size()) != size_ || static_cast<int>(to.size()) != size_)
    throw Error("redistributor: one box per rank expected");
  plan_side(from_side_, from[rank_], to);
  plan_side(to_side_, to[rank_], from);
  self_only_ = size_ == 1;
  if (algorithm_ == ExchangeAlgorithm::Alltoall) {
    // Every pair exchanges the same count: the largest any pair of the communicator needs.
    long mine = 0;
    for (long c : from_side_.peer_count) mine = std::max(mine, c);
    for (long c : to_side_.peer_count) mine = std::max(mine, c);
    check_mpi(MPI_Allreduce(&mine, &pad_, 1, MPI_LONG, MPI_MAX, comm_), "MPI_Allreduce");
    pad_ = std::max(pad_, 1L);
    pad_slots(from_side_, pad_);
    pad_slots(to_side_, pad_);
  }
  upload(from_side_, space);
  upload(to_side_, space);
  counts_.resize(size_);
  displs_.resize(size_);
  rcounts_.resize(size_);
  rdispls_.resize(size_);
  requests_.resize(2 * size_);
  request_peer_.resize(size_);
}

Redistributor::~Redistributor() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (type_ != MPI_DATATYPE_NULL && !finalized) MPI_Type_free(&type_);
}

long Redistributor::buffer_elements() const {
  if (algorithm_ == ExchangeAlgorithm::Alltoall) return size_ * pad_;
  return std::max(from_side_.total, to_side_.total);
}

long Redistributor::payload_bytes_to_others(bool reverse, int elem_bytes) const {
  const SegmentTable& out = reverse ? to_side_ : from_side_;
  long b = 0;
  for (int r : out.peer)
    if (r != rank_) b += out.peer_count[r] * elem_bytes;
  return b;
}

MPI_Datatype Redistributor::element_type(int bytes) {
  if (bytes != type_bytes_) {
    if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
    check_mpi(MPI_Type_contiguous(bytes, MPI_BYTE, &type_), "MPI_Type_contiguous");
    check_mpi(MPI_Type_commit(&type_), "MPI_Type_commit");
    type_bytes_ = bytes;
  }
  return type_;
}

char* Redistributor::stage(bool send, size_t bytes) {
  PinnedBuffer& b = send ? host_send_ : host_recv_;
  b.reserve(bytes);
  return b.data();
}

void Redistributor::mark_start() {
  if (stats_ && stats_->trace()) trace_t0_ = wall_seconds();
}

void Redistributor::record(const SegmentTable& out, const SegmentTable& in, int elem_bytes, bool padded) {
  if (!stats_) return;
  stats_->add_call(pattern_);
  MessageTrace* tr = stats_->trace();
  // What travels: one message per run, or a padded message to every rank of the communicator.
  for (const auto& [r, count] : planned_messages(out, padded, pad_, size_)) {
    stats_->add_message(pattern_, locality_[r], count * elem_bytes);
    if (tr) tr->send(pattern_, this, comm_, r, count * elem_bytes, trace_t0_);
  }
  if (tr) {
    for (const auto& [r, count] : planned_messages(in, padded, pad_, size_))
      tr->recv(pattern_, this, comm_, r, count * elem_bytes, trace_t0_);
    tr->complete(pattern_, this, wall_seconds());
  }
}

void Redistributor::exchange_only(const void* send, void* recv, int elem_bytes, bool reverse) {
  if (self_only_) {  // what execute does with one rank: nothing to send
    return;
  }
  transfer(send, recv, elem_bytes, reverse, false);
}

void Redistributor::transfer(const void* send, void* recv, int elem_bytes, bool reverse, bool count_stats) {
  const SegmentTable& out = reverse ? to_side_ : from_side_;
  const SegmentTable& in = reverse ? from_side_ : to_side_;
  if (transport_->uses_nccl()) {  // every algorithm becomes one grouped NCCL exchange
    nccl_transfer(send, recv, elem_bytes, out, in, count_stats);
    return;
  }
  const bool padded = algorithm_ == ExchangeAlgorithm::Alltoall;
  const size_t send_bytes = size_t(padded ? size_ * pad_ : out.total) * elem_bytes;
  const size_t recv_bytes = size_t(padded ? size_ * pad_ : in.total) * elem_bytes;
  // Where MPI reads and writes: the buffers themselves, or pinned host copies (staged).
  const char* sp = static_cast<const char*>(transport_->mpi_send_buffer(send, send_bytes, host_send_));
  char* rp = static_cast<char*>(transport_->mpi_recv_buffer(recv, recv_bytes, host_recv_));
  MPI_Datatype t = element_type(elem_bytes);
  if (padded) {
    if (pad_ > INT_MAX) throw Error("redistributor: message too large for MPI int counts");
    check_mpi(MPI_Alltoall(sp, static_cast<int>(pad_), t, rp, static_cast<int>(pad_), t, comm_), "MPI_Alltoall");
  } else {
    for (int r = 0; r < size_; ++r) {
      if (out.peer_count[r] > INT_MAX || in.peer_count[r] > INT_MAX || out.total > INT_MAX || in.total > INT_MAX)
        throw Error("redistributor: message too large for MPI int counts");
      counts_[r] = static_cast<int>(out.peer_count[r]);
      displs_[r] = static_cast<int>(out.peer_offset[r]);
      rcounts_[r] = static_cast<int>(in.peer_count[r]);
      rdispls_[r] = static_cast<int>(in.peer_offset[r]);
    }
    if (skips_self()) counts_[rank_] = rcounts_[rank_] = 0;  // execute() unpacks the own run itself
    switch (algorithm_) {
      case ExchangeAlgorithm::Alltoallv:
        check_mpi(MPI_Alltoallv(sp, counts_.data(), displs_.data(), t, rp, rcounts_.data(),
                                rdispls_.data(), t, comm_),
                  "MPI_Alltoallv");
        break;
      case ExchangeAlgorithm::P2P:
      case ExchangeAlgorithm::P2PPipelined: {  // the pipelined execute path does not come here
        int n = 0;
        for (int r : in.peer) {
          if (rcounts_[r] == 0) continue;  // the own run, when skipped
          check_mpi(MPI_Irecv(rp + in.peer_offset[r] * elem_bytes, rcounts_[r], t, r, 7, comm_, &requests_[n++]),
                    "MPI_Irecv");
        }
        for (int r : out.peer) {
          if (counts_[r] == 0) continue;
          check_mpi(MPI_Isend(sp + out.peer_offset[r] * elem_bytes, counts_[r], t, r, 7, comm_, &requests_[n++]),
                    "MPI_Isend");
        }
        check_mpi(MPI_Waitall(n, requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
        break;
      }
      case ExchangeAlgorithm::Nccl:  // needs the NCCL transport, handled above
      case ExchangeAlgorithm::Alltoall:  // handled above
        throw Error(std::string("redistributor: no MPI transfer for ") + to_string(algorithm_));
    }
  }
  if (count_stats) record(out, in, elem_bytes, padded);
  transport_->mpi_received(recv, rp, recv_bytes);
}

void Redistributor::nccl_transfer(const void* send, void* recv, int elem_bytes, const SegmentTable& out,
                                  const SegmentTable& in, bool count_stats) {
  // NCCL has no alltoallv: one grouped ncclSend/ncclRecv over the peers that share data, one
  // message per peer pair (so posting order cannot mismatch). Offsets are the algorithm's (padded
  // for alltoall), counts the real ones.
  nccl_sends_.clear();
  nccl_recvs_.clear();
  for (int r : out.peer) nccl_sends_.push_back(Message{r, out.peer_offset[r] * elem_bytes, out.peer_count[r] * elem_bytes});
  for (int r : in.peer) nccl_recvs_.push_back(Message{r, in.peer_offset[r] * elem_bytes, in.peer_count[r] * elem_bytes});
  transport_->nccl_exchange(comm_, send, nccl_sends_.data(), static_cast<int>(nccl_sends_.size()), recv,
                            nccl_recvs_.data(), static_cast<int>(nccl_recvs_.size()));
  if (count_stats) record(out, in, elem_bytes, false);
}

}  // namespace beatnik::comm
