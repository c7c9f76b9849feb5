#include "beatnik/comm/ring_pass.hpp"

#include <algorithm>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::comm {

RingPass::RingPass(MPI_Comm comm, long own_count, exec::Space space, RingStrategy strategy,
                   std::vector<int> locality, CommStats* stats, Timers* timers,
                   std::string timer_prefix, Transport* transport)
    : comm_(comm),
      space_(space),
      strategy_(strategy),
      transport_(transport ? transport : &basic_transport(space)),
      staged_(transport_->kind() == TransportKind::Staged),
      nccl_(transport_->uses_nccl()),
      locality_(std::move(locality)),
      stats_(stats),
      timers_(timers),
      compute_name_(timer_prefix + ".compute"),
      ring_name_(timer_prefix + ".ring"),
      hidden_name_(timer_prefix + ".ring.hidden") {
  if (transport_->space() != space) throw Error("ring pass: transport and blocks live in different spaces");
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  next_ = (rank_ + 1) % size_;
  prev_ = (rank_ - 1 + size_) % size_;
  counts_.resize(size_);
  check_mpi(MPI_Allgather(&own_count, 1, MPI_LONG, counts_.data(), 1, MPI_LONG, comm), "MPI_Allgather (ring sizes)");
  const long cap = *std::max_element(counts_.begin(), counts_.end());
  own_ = exec::Buffer<double>(space, own_count);
  if (size_ > 1) {
    for (int k = 0; k < 2; ++k) {
      if (staged_) {  // page-locked, so the staging copies run at full speed
        pinned_[k].reserve(std::size_t(std::max(cap, 1L)) * sizeof(double));
        wire_[k] = reinterpret_cast<double*>(pinned_[k].data());
      } else {
        wire_store_[k] = exec::Buffer<double>(space, cap);
        wire_[k] = wire_store_[k].data();
      }
    }
    if (staged_) landed_ = exec::Buffer<double>(space, cap);
  }
}

void RingPass::begin() {
  if (size_ > 1 && staged_) {
    Timers::Scope t(timers_, ring_name_);
    exec::copy(wire_[1], exec::Space::Host, own_.data(), space_, counts_[rank_]);
  }
}

const double* RingPass::block_for(int r) {
  if (r == 0) return own_.data();
  const double* w = wire_[(r - 1) % 2];
  if (!staged_) return w;
  Timers::Scope t(timers_, ring_name_);
  exec::copy(landed_.data(), space_, w, exec::Space::Host, counts_[origin(r)]);
  return landed_.data();
}

const double* RingPass::send_ptr(int r) const {
  if (r == 0) return staged_ ? wire_[1] : own_.data();
  return wire_[(r - 1) % 2];
}
double* RingPass::recv_ptr(int r) const { return wire_[r % 2]; }

// One grouped NCCL send/receive on the transport's stream. It starts after the device work
// queued so far (the kernel that read the receive buffer in round r−1, the pack that wrote the
// own block); join = false leaves the kernel stream free to run the round's computation
// concurrently, and complete() joins it before round r+1 reads the received block.
void RingPass::nccl_round(int r, bool join) {
  const long ns = counts_[origin(r)], nr = counts_[origin(r + 1)];
  const Message send{next_, 0, ns * long(sizeof(double))};
  const Message recv{prev_, 0, nr * long(sizeof(double))};
  transport_->nccl_exchange(comm_, send_ptr(r), &send, 1, recv_ptr(r), &recv, 1, join);
  if (stats_) stats_->add_message("ring", locality_[next_], ns * long(sizeof(double)));
}

void RingPass::post(int r) {
  const double t0 = wall_seconds();
  if (nccl_) {
    nccl_round(r, false);
    done_ = false;
    t_post_ = wall_seconds();
    if (timers_) timers_->add(ring_name_, t_post_ - t0, 0);
    return;
  }
  const long ns = counts_[origin(r)], nr = counts_[origin(r + 1)];
  // cuda-aware: waits for the device (the kernel of round r−1 read the receive buffer, the
  // pack wrote the own block); host and staged wire buffers are host memory already.
  if (transport_->kind() == TransportKind::CudaAware) exec::fence(space_);
  check_mpi(MPI_Irecv(recv_ptr(r), static_cast<int>(nr), MPI_DOUBLE, prev_, r, comm_, &req_[0]), "MPI_Irecv (ring)");
  check_mpi(MPI_Isend(send_ptr(r), static_cast<int>(ns), MPI_DOUBLE, next_, r, comm_, &req_[1]), "MPI_Isend (ring)");
  if (stats_) stats_->add_message("ring", locality_[next_], ns * long(sizeof(double)));
  done_ = false;
  t_post_ = wall_seconds();
  if (timers_) timers_->add(ring_name_, t_post_ - t0, 0);  // one call per round, counted in complete()
}

void RingPass::poll() {
  if (done_) return;
  int flag = 0;
  check_mpi(MPI_Testall(2, req_, &flag, MPI_STATUSES_IGNORE), "MPI_Testall (ring)");
  if (flag) {
    done_ = true;
    t_done_ = wall_seconds();
  }
}

void RingPass::complete(int) {
  const double t0 = wall_seconds();
  if (nccl_) {  // queued: the kernel stream waits for the transfer, the host does not
    transport_->nccl_join();
    if (timers_) timers_->add(ring_name_, wall_seconds() - t0);
    return;
  }
  if (!done_) {
    check_mpi(MPI_Waitall(2, req_, MPI_STATUSES_IGNORE), "MPI_Waitall (ring)");
    t_done_ = wall_seconds();
  }
  if (timers_) {
    timers_->add(ring_name_, wall_seconds() - t0);
    // The transfer ran from t_post_ to t_done_; the part before the computation ended (t0)
    // was hidden behind it.
    if (space_ == exec::Space::Host) timers_->add(hidden_name_, std::max(0.0, std::min(t_done_, t0) - t_post_));
  }
}

void RingPass::exchange(int r) {
  Timers::Scope t(timers_, ring_name_);
  if (nccl_) {
    nccl_round(r, true);
    return;
  }
  if (transport_->kind() == TransportKind::CudaAware) exec::fence(space_);  // MPI reads device data
  const long ns = counts_[origin(r)], nr = counts_[origin(r + 1)];
  check_mpi(MPI_Sendrecv(send_ptr(r), static_cast<int>(ns), MPI_DOUBLE, next_, r, recv_ptr(r),
                         static_cast<int>(nr), MPI_DOUBLE, prev_, r, comm_, MPI_STATUS_IGNORE),
            "MPI_Sendrecv (ring)");
  if (stats_) stats_->add_message("ring", locality_[next_], ns * long(sizeof(double)));
  if (timers_ && space_ == exec::Space::Host) timers_->add(hidden_name_, 0.0, 0);
}

}  // namespace beatnik::comm
