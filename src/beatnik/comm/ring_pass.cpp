#include "beatnik/comm/ring_pass.hpp"

#include <algorithm>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/message_trace.hpp"
#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/comm/ring/registry.hpp"

namespace beatnik::comm {

std::vector<std::pair<int, long>> plan_ring(int rank, const std::vector<long>& counts) {
  const int p = static_cast<int>(counts.size());
  std::vector<std::pair<int, long>> m;
  for (int r = 0; r + 1 < p; ++r) m.emplace_back((rank + 1) % p, counts[(rank - r % p + p) % p]);
  return m;
}

RingPass::RingPass(MPI_Comm comm, long own_count, exec::Space space, const std::string& strategy,
                   std::vector<int> locality, CommStats* stats, Timers* timers, std::string timer_prefix,
                   Transport* transport)
    : comm_(comm),
      space_(space),
      strategy_name_(strategy),
      transport_(transport ? transport : &basic_transport(space)),
      staged_(transport_->kind() == TransportKind::Staged),
      locality_(std::move(locality)),
      stats_(stats),
      timers_(timers),
      compute_name_(timer_prefix + ".compute"),
      ring_name_(timer_prefix + ".ring"),
      hidden_name_(timer_prefix + ".ring.hidden") {
  if (transport_->space() != space) throw Error("ring pass: transport and blocks live in different spaces");
  // Before any collective: every rank refuses alike (the transport kind is the same everywhere).
  const ring::StrategyEntry& entry = ring::find_strategy(strategy, transport_->kind());
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  next_ = (rank_ + 1) % size_;
  prev_ = (rank_ - 1 + size_) % size_;
  counts_.resize(size_);
  check_mpi(MPI_Allgather(&own_count, 1, MPI_LONG, counts_.data(), 1, MPI_LONG, comm), "MPI_Allgather (ring sizes)");
  plan_ = plan_ring(rank_, counts_);
  own_ = exec::Buffer<double>(space, own_count);
  if (size_ == 1) return;  // no transfers, no strategy
  cap_ = std::max(*std::max_element(counts_.begin(), counts_.end()), 1L);
  double* wire = nullptr;
  if (staged_) {  // page-locked, so the staging copies run at full speed
    pinned_.reserve(std::size_t(2 * cap_) * sizeof(double));
    wire = reinterpret_cast<double*>(pinned_.data());
    landed_ = exec::Buffer<double>(space, cap_);
  } else {
    wire_store_ = exec::Buffer<double>(space, 2 * cap_);
    wire = wire_store_.data();
  }
  wire_[0] = wire;
  wire_[1] = wire + cap_;
  ring::Setup setup{comm, next_, prev_, transport_, wire, cap_, {}};
  for (int r = 0; r + 1 < size_; ++r)
    setup.rounds.push_back({send_ptr(r), counts_[origin(r)], recv_ptr(r), counts_[origin(r + 1)], r % 2});
  strategy_ = entry.make(setup);
}

RingPass::~RingPass() = default;

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

// What every strategy needs before its transfer: cuda-aware MPI reads device memory, so the
// device must have finished with the buffers (the kernel of round r−1 read the receive buffer,
// the pack wrote the own block); host and staged wire buffers are host memory already, and
// NCCL orders itself after the kernel stream. The bytes sent count as pattern "ring" with the
// receiver's locality, the same for every strategy and transport.
void RingPass::begin_round(int r) {
  if (transport_->kind() == TransportKind::CudaAware) exec::fence(space_);
  if (stats_) stats_->add_message("ring", locality_[plan_[r].first], plan_[r].second * long(sizeof(double)));
  if (MessageTrace* tr = stats_ ? stats_->trace() : nullptr) {  // open until complete() / exchange()
    const double t = wall_seconds();
    tr->send("ring", this, comm_, next_, counts_[origin(r)] * long(sizeof(double)), t);
    tr->recv("ring", this, comm_, prev_, counts_[origin(r + 1)] * long(sizeof(double)), t);
  }
}

void RingPass::end_round() {
  if (MessageTrace* tr = stats_ ? stats_->trace() : nullptr) tr->complete("ring", this, wall_seconds());
}

void RingPass::post(int r) {
  const double t0 = wall_seconds();
  begin_round(r);
  strategy_->start(r);
  done_ = false;
  t_post_ = wall_seconds();
  if (timers_) timers_->add(ring_name_, t_post_ - t0, 0);  // one call per round, counted in complete()
}

void RingPass::poll() {
  if (done_ || !strategy_->test()) return;
  done_ = true;
  t_done_ = wall_seconds();
}

void RingPass::complete(int r) {
  const double t0 = wall_seconds();
  strategy_->finish(r);
  end_round();
  if (!done_) t_done_ = wall_seconds();
  if (timers_) {
    timers_->add(ring_name_, wall_seconds() - t0);
    // The transfer ran from t_post_ to t_done_; the part before the computation ended (t0)
    // was hidden behind it. (On the device the host does not see the transfer end.)
    if (space_ == exec::Space::Host) timers_->add(hidden_name_, std::max(0.0, std::min(t_done_, t0) - t_post_));
  }
}

void RingPass::exchange(int r) {
  Timers::Scope t(timers_, ring_name_);
  begin_round(r);
  strategy_->start(r);
  strategy_->finish(r);
  end_round();
  if (timers_ && space_ == exec::Space::Host) timers_->add(hidden_name_, 0.0, 0);
}

}  // namespace beatnik::comm
