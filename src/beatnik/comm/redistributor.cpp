#include "beatnik/comm/redistributor.hpp"

#include <algorithm>
#include <climits>

#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::comm {
namespace {

// My box cut by every peer's box, in peer order: the runs I send (or receive).
void build_side(SegmentTable& t, const Box2& mine, const std::vector<Box2>& theirs,
                exec::Space space) {
  std::vector<Segment> segs;
  const int p = static_cast<int>(theirs.size());
  t.peer_count.assign(p, 0);
  t.peer_offset.assign(p, 0);
  long off = 0;
  for (int r = 0; r < p; ++r) {
    const Box2 b = intersect(mine, theirs[r]);
    t.peer_offset[r] = off;
    if (b.empty()) continue;
    t.peer.push_back(r);
    t.peer_count[r] = b.count();
    segs.push_back(Segment{b.lo[0], b.lo[1], b.extent(1), off});
    off += b.count();
  }
  t.total = off;
  t.count = static_cast<int>(segs.size());
  t.segments = exec::Buffer<Segment>(space, std::max<size_t>(segs.size(), 1));
  if (!segs.empty())
    exec::copy(t.segments.data(), space, segs.data(), exec::Space::Host, segs.size());
}

}  // namespace

const char* to_string(ExchangeAlgorithm a) {
  switch (a) {
    case ExchangeAlgorithm::Alltoallv: return "alltoallv";
    case ExchangeAlgorithm::P2P: return "p2p";
  }
  return "?";
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
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  if (static_cast<int>(from.size()) != size_ || static_cast<int>(to.size()) != size_)
    throw Error("redistributor: one box per rank expected");
  build_side(from_side_, from[rank_], to, space);
  build_side(to_side_, to[rank_], from, space);
  self_only_ = size_ == 1;
  counts_.resize(size_);
  displs_.resize(size_);
  rcounts_.resize(size_);
  rdispls_.resize(size_);
  requests_.resize(2 * size_);
}

Redistributor::~Redistributor() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (type_ != MPI_DATATYPE_NULL && !finalized) MPI_Type_free(&type_);
}

long Redistributor::buffer_elements() const { return std::max(from_side_.total, to_side_.total); }

MPI_Datatype Redistributor::element_type(int bytes) {
  if (bytes != type_bytes_) {
    if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
    check_mpi(MPI_Type_contiguous(bytes, MPI_BYTE, &type_), "MPI_Type_contiguous");
    check_mpi(MPI_Type_commit(&type_), "MPI_Type_commit");
    type_bytes_ = bytes;
  }
  return type_;
}

void Redistributor::transfer(const void* send, void* recv, int elem_bytes, bool reverse) {
  const SegmentTable& out = reverse ? to_side_ : from_side_;
  const SegmentTable& in = reverse ? from_side_ : to_side_;
  if (transport_->uses_nccl()) {
    nccl_transfer(send, recv, elem_bytes, out, in);
    return;
  }
  // Where MPI reads and writes: the buffers themselves, or pinned host copies (staged).
  const size_t need = static_cast<size_t>(buffer_elements()) * elem_bytes;
  const char* sp = static_cast<const char*>(
      transport_->mpi_send_buffer(send, static_cast<size_t>(out.total) * elem_bytes, host_send_));
  char* rp = static_cast<char*>(transport_->mpi_recv_buffer(recv, need, host_recv_));
  MPI_Datatype t = element_type(elem_bytes);
  for (int r = 0; r < size_; ++r) {
    if (out.peer_count[r] > INT_MAX || in.peer_count[r] > INT_MAX || out.total > INT_MAX)
      throw Error("redistributor: message too large for MPI int counts");
    counts_[r] = static_cast<int>(out.peer_count[r]);
    displs_[r] = static_cast<int>(out.peer_offset[r]);
    rcounts_[r] = static_cast<int>(in.peer_count[r]);
    rdispls_[r] = static_cast<int>(in.peer_offset[r]);
  }
  switch (algorithm_) {
    case ExchangeAlgorithm::Alltoallv:
      check_mpi(MPI_Alltoallv(sp, counts_.data(), displs_.data(), t, rp, rcounts_.data(),
                              rdispls_.data(), t, comm_),
                "MPI_Alltoallv");
      break;
    case ExchangeAlgorithm::P2P: {
      int n = 0;
      for (int r : in.peer)
        check_mpi(MPI_Irecv(rp + in.peer_offset[r] * elem_bytes, rcounts_[r], t, r, 7, comm_,
                            &requests_[n++]),
                  "MPI_Irecv");
      for (int r : out.peer)
        check_mpi(MPI_Isend(sp + out.peer_offset[r] * elem_bytes, counts_[r], t, r, 7, comm_,
                            &requests_[n++]),
                  "MPI_Isend");
      check_mpi(MPI_Waitall(n, requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
      break;
    }
  }
  if (stats_) {
    stats_->add_call(pattern_);
    for (int r : out.peer) stats_->add_message(pattern_, locality_[r], out.peer_count[r] * elem_bytes);
  }
  transport_->mpi_received(recv, rp, static_cast<size_t>(in.total) * elem_bytes);
}

void Redistributor::nccl_transfer(const void* send, void* recv, int elem_bytes, const SegmentTable& out,
                                  const SegmentTable& in) {
  // Alltoallv and p2p alike become one grouped ncclSend/ncclRecv over the peers that share
  // data (NCCL has no alltoallv); one message per peer pair, so posting order cannot mismatch.
  nccl_sends_.clear();
  nccl_recvs_.clear();
  for (int r : out.peer) nccl_sends_.push_back(Message{r, out.peer_offset[r] * elem_bytes, out.peer_count[r] * elem_bytes});
  for (int r : in.peer) nccl_recvs_.push_back(Message{r, in.peer_offset[r] * elem_bytes, in.peer_count[r] * elem_bytes});
  transport_->nccl_exchange(comm_, send, nccl_sends_.data(), static_cast<int>(nccl_sends_.size()), recv,
                            nccl_recvs_.data(), static_cast<int>(nccl_recvs_.size()));
  if (stats_) {
    stats_->add_call(pattern_);
    for (int r : out.peer) stats_->add_message(pattern_, locality_[r], out.peer_count[r] * elem_bytes);
  }
}

}  // namespace beatnik::comm
