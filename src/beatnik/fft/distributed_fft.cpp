#include "beatnik/fft/distributed_fft.hpp"

#include <algorithm>

#include "beatnik/comm/message_trace.hpp"
#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/fft/fft_plan.hpp"
#include "beatnik/fft/local_fft_2d.hpp"

namespace beatnik::fft {

DistributedFFT::DistributedFFT(const comm::Context& ctx, MPI_Comm grid_comm,
                               std::array<int, 2> global, std::array<int, 2> procs,
                               const std::vector<Box2>& blocks, exec::Space space,
                               const FftOptions& options, comm::CommStats* stats, Timers* timers,
                               comm::Transport* transport, const ComputeGate* gate)
    : global_(global),
      space_(space),
      options_(options),
      timers_(timers),
      ctx_(ctx),
      stats_(stats),
      transport_(transport),
      gate_(gate) {
  int rank = 0;
  MPI_Comm_rank(grid_comm, &rank);
  const Box2 mine = blocks[rank];
  plan_ = make_fft_plan(global, procs, blocks, options, rank);

  MPI_Comm col = MPI_COMM_NULL, row = MPI_COMM_NULL;
  if (options.intermediate == Intermediate::Pencil) {
    // Column group: the Px ranks sharing this rank's j-range; row group: the Py sharing i.
    const int a = rank / procs[1], b = rank % procs[1];
    comm::check_mpi(MPI_Comm_split(grid_comm, b, a, &col), "MPI_Comm_split");
    comm::check_mpi(MPI_Comm_split(grid_comm, a, b, &row), "MPI_Comm_split");
    owned_comms_ = {col, row};
  }
  for (const PlanStep& ps : plan_.steps) {
    if (ps.is_fft) {
      add_fft(ps.shape);
      continue;
    }
    if (ps.local) {  // nothing leaves this rank: a redistributor of one
      add_reshape(MPI_COMM_SELF, {ps.from[plan_group_index(ps.group, procs, rank)]},
                  {ps.to[plan_group_index(ps.group, procs, rank)]}, ps.from_layout, ps.to_layout);
      continue;
    }
    const MPI_Comm c = ps.group == PlanGroup::All ? grid_comm : ps.group == PlanGroup::Column ? col : row;
    add_reshape(c, ps.from, ps.to, ps.from_layout, ps.to_layout);
  }
  spectral_ = plan_.spectral;
  plan_2d_ = options.plan_2d && merge_whole_array_passes(mine);

  // Buffers: the work array holds any layout this rank passes through; the message buffers
  // the largest reshape.
  long work = mine.count(), comm_elems = 0;
  for (const Step& s : steps_) work = std::max({work, s.to.box.count(), s.from.box.count()});
  for (const auto& r : reshapes_) comm_elems = std::max(comm_elems, r->buffer_elements());
  work_ = exec::Buffer<cplx>(space, std::max(work, 1L));
  send_ = exec::Buffer<cplx>(space, std::max(comm_elems, 1L));
  recv_ = exec::Buffer<cplx>(space, std::max(comm_elems, 1L));
  if (plan_2d_)
    ffts_.push_back(make_local_fft_2d(space, global[0], global[1], work_.data(), options.effort));
  else
    for (const BatchShape& sh : shapes_) ffts_.push_back(make_local_fft(space, sh, work_.data(), options.effort));
}

DistributedFFT::~DistributedFFT() {
  reshapes_.clear();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    for (MPI_Comm& c : owned_comms_) MPI_Comm_free(&c);
}

void DistributedFFT::add_reshape(MPI_Comm comm, const std::vector<Box2>& from,
                                 const std::vector<Box2>& to, const ArrayLayout2& from_layout,
                                 const ArrayLayout2& to_layout) {
  Step s;
  s.reshape = static_cast<int>(reshapes_.size());
  s.from = from_layout;
  s.to = to_layout;
  int comm_size = 0;
  MPI_Comm_size(comm, &comm_size);
  s.local = comm_size == 1;
  reshapes_.push_back(std::make_unique<comm::Redistributor>(comm, from, to, space_, ctx_.locality(comm),
                                                            stats_, "fft", options_.algorithm, transport_));
  steps_.push_back(s);
}

void DistributedFFT::add_fft(const BatchShape& shape) {
  Step s;
  s.fft = static_cast<int>(shapes_.size());
  shapes_.push_back(shape);
  steps_.push_back(s);
}

namespace {
bool same_layout(const ArrayLayout2& a, const ArrayLayout2& b) {
  return a.box.lo == b.box.lo && a.box.hi == b.box.hi && a.si == b.si && a.sj == b.sj && a.offset == b.offset;
}
}  // namespace

// The whole array on this rank, built by the first (local) reshape in the i-slow, j-fast layout
// and transformed along both dimensions in place with no reshape between (one rank: the slab
// plan, and the pencil plan with strided x transforms): the two passes are one 2-D transform of
// the global[0] x global[1] array, which both backends run faster than a contiguous and a
// strided batch (docs/gpu-small.md). The spectrum stays where it was.
bool DistributedFFT::merge_whole_array_passes(const Box2& mine) {
  const Box2 whole{{0, 0}, {global_[0], global_[1]}};
  const ArrayLayout2 w = j_fastest(whole);
  if (!(mine == whole) || steps_.size() != 3) return false;
  if (steps_[0].reshape < 0 || !steps_[0].local || !same_layout(steps_[0].to, w)) return false;
  if (steps_[1].fft < 0 || steps_[2].fft < 0 || !same_layout(spectral_, w)) return false;
  steps_.pop_back();
  shapes_.resize(1);
  return true;
}

void DistributedFFT::count_local(const Step& s, long elem_bytes) const {
  if (!stats_) return;
  stats_->add_call("fft");
  stats_->add_message("fft", 0, s.to.box.count() * elem_bytes);
  if (comm::MessageTrace* tr = stats_->trace()) {  // a local reshape: to this rank itself, at once
    const double t = wall_seconds();
    tr->send("fft", this, MPI_COMM_SELF, 0, s.to.box.count() * elem_bytes, t);
    tr->recv("fft", this, MPI_COMM_SELF, 0, s.to.box.count() * elem_bytes, t);
    tr->complete("fft", this, t);
  }
}

void DistributedFFT::work_to_work(const Step& s, bool reverse) {
  if (s.local && same_layout(s.from, s.to)) {  // nothing moves and nothing is reordered
    count_local(s);
    return;
  }
  Timers::Scope t(timers_, "fft.reshape");
  cplx* w = work_.data();
  const StridedIndex src = indexer(reverse ? s.to : s.from);
  const StridedIndex dst = indexer(reverse ? s.from : s.to);
  // Packing reads the whole source before any unpacking writes, so one array serves both.
  reshapes_[s.reshape]->execute(
      send_.data(), recv_.data(), [=] BEATNIK_HOST_DEVICE(int i, int j) { return w[src(i, j)]; },
      [=] BEATNIK_HOST_DEVICE(int i, int j, cplx v) { w[dst(i, j)] = v; }, reverse);
}

size_t DistributedFFT::buffer_bytes() const {
  return (work_.size() + send_.size() + recv_.size()) * sizeof(cplx);
}

}  // namespace beatnik::fft
