#include "beatnik/fft/distributed_fft.hpp"

#include <algorithm>

#include "beatnik/comm/message_trace.hpp"
#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/fft/fft_plan.hpp"
#include "beatnik/fft/local_c2r.hpp"
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
      if (ps.is_real_fft) {
        steps_.back().real = true;
        steps_.back().from = ps.from_layout;
        steps_.back().to = ps.to_layout;
      }
    } else if (ps.local) {  // nothing leaves this rank: a redistributor of one
      add_reshape(MPI_COMM_SELF, {ps.from[plan_group_index(ps.group, procs, rank)]},
                  {ps.to[plan_group_index(ps.group, procs, rank)]}, ps.from_layout, ps.to_layout);
    } else {
      const MPI_Comm c = ps.group == PlanGroup::All ? grid_comm : ps.group == PlanGroup::Column ? col : row;
      add_reshape(c, ps.from, ps.to, ps.from_layout, ps.to_layout);
    }
    steps_.back().half = ps.half;
  }
  spectral_ = plan_.spectral;
  // The 2-D plan is a full complex transform: the half spectrum keeps its two passes.
  plan_2d_ = options.plan_2d && !plan_.half && merge_whole_array_passes(mine);

  // Buffers: the work array holds any full layout this rank passes through, the half array two
  // fields of any half layout; the message buffers the largest reshape (two fields forward on
  // the half array).
  long work = mine.count(), half = 0, comm_elems = 0;
  for (const Step& s : steps_) {
    long& n = s.half ? half : work;
    if (s.reshape >= 0) n = std::max({n, s.to.box.count(), s.from.box.count()});
    if (s.reshape >= 0) comm_elems = std::max(comm_elems, (s.half ? 2 : 1) * reshapes_[s.reshape]->buffer_elements());
  }
  if (plan_.half) {
    for (const Step& s : steps_)
      if (s.real) half = std::max(half, s.to.box.count());
    half = std::max(half, spectral_.box.count());
    field_ = half;
    half_ = exec::Buffer<cplx>(space, std::max(2 * half, 1L));
  }
  work_ = exec::Buffer<cplx>(space, std::max(work, 1L));
  send_ = exec::Buffer<cplx>(space, std::max(comm_elems, 1L));
  recv_ = exec::Buffer<cplx>(space, std::max(comm_elems, 1L));
  if (plan_2d_)
    ffts_.push_back(make_local_fft_2d(space, global[0], global[1], work_.data(), options.effort));
  else
    for (const Step& s : steps_)
      if (s.fft >= 0)
        ffts_.push_back(make_local_fft(space, shapes_[s.fft], s.half ? half_.data() : work_.data(), options.effort));
  if (plan_2d_ && options.inverse_2d != Inverse2D::C2C) choose_c2r_2d();
  // Host: the half plan's last inverse runs complex to real, from the half lines straight into
  // the work array's real parts (what the last reshape reads), instead of rebuilding the whole
  // Hermitian lines and transforming them complex: half the transform work, one pass less.
  if (plan_.half && space == exec::Space::Host)
    for (const Step& s : steps_)
      if (s.real) choose_c2r(s);
}

// FFTW's c2r is the faster way for awkward line lengths (255, 511: 20-25 % of fft.local at n = 512
// of the beatnik profile) but can be twice as slow as the complex inverse for powers of two
// (docs/fft.md). With measure/patient planning both are timed here, as FFTW times its own
// candidates, and the faster kept; with estimate, c2r where the length has a prime factor > 7.
void DistributedFFT::choose_c2r(const Step& s) {
  const int n = global_[plan_.first_dim];
  auto c2r = make_fftw_c2r(c2r_shape(s), half_.data() + s.to.offset,
                           reinterpret_cast<double*>(work_.data()) + 2 * s.from.offset, options_.effort);
  if (options_.effort == PlanEffort::Estimate) {
    int m = n;
    for (int p : {2, 3, 5, 7})
      while (m % p == 0) m /= p;
    if (m > 1) c2r_ = std::move(c2r);
    return;
  }
  LocalFFT& f = *ffts_[s.fft];
  auto seconds = [&](auto run) {
    half_.zero();  // planning left arbitrary values: no denormals or NaNs in the timing
    run();
    const double t0 = wall_seconds();
    for (int k = 0; k < 3; ++k) run();
    return wall_seconds() - t0;
  };
  const double t_c2r = seconds([&] { c2r->run(); });
  const double t_complex = seconds([&] {
    hermitian_lines(s);
    f.inverse(work_.data());
  });
  if (t_c2r < t_complex) c2r_ = std::move(c2r);
}

// The 2-D plan's real inverse: complex to real from the Hermitian half (half_) into the work
// array's doubles, or the complex inverse of the whole spectrum. auto on the device: c2r, a rule
// and not a timing, so that every run of a configuration takes the same path (a graph run must
// equal its plain run bit for bit); cuFFT's Z2D 2-D plan beat the Z2Z inverse at every size
// measured on one H100 (docs/gpu-small.md). auto on the host times both, as choose_c2r does
// (after a warm-up, on zeroed arrays: no denormals or NaNs), with estimate planning c2r.
void DistributedFFT::choose_c2r_2d() {
  const int n0 = global_[0], n1 = global_[1];
  half_ = exec::Buffer<cplx>(space_, long(n0) * (n1 / 2 + 1));
  auto c2r = make_c2r_2d(space_, n0, n1, half_.data(), reinterpret_cast<double*>(work_.data()), options_.effort);
  const bool timed = options_.inverse_2d == Inverse2D::Auto && space_ == exec::Space::Host &&
                     options_.effort != PlanEffort::Estimate;
  if (timed) {
    auto seconds = [&](auto run) {
      half_.zero();
      work_.zero();
      run();
      const double t0 = wall_seconds();
      for (int k = 0; k < 3; ++k) run();
      return wall_seconds() - t0;
    };
    const double t_c2r = seconds([&] { c2r->run(); });
    const double t_complex = seconds([&] { ffts_[0]->inverse(work_.data()); });
    if (t_complex <= t_c2r) {
      half_ = exec::Buffer<cplx>();
      return;
    }
  }
  c2r_2d_ = std::move(c2r);
}

// The real step's lines along the first dimension d: half lines of the half array in, full
// lines of reals out (every other double: the work array's real parts).
C2RShape DistributedFFT::c2r_shape(const Step& s) const {
  const int d = plan_.first_dim, o = 1 - d;
  auto along = [](const ArrayLayout2& l, int dim) { return dim == 0 ? l.si : l.sj; };
  if (s.from.box.lo[d] != 0 || s.to.box.lo[d] != 0 || s.from.box.extent(o) != s.to.box.extent(o))
    throw Error("DistributedFFT: the real step's layouts are not whole and half lines");
  return C2RShape{global_[d], s.from.box.extent(o), along(s.to, d), along(s.to, o), 2 * along(s.from, d),
                  2 * along(s.from, o)};
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

void DistributedFFT::half_to_half(const Step& s, bool reverse) {
  if (s.local && same_layout(s.from, s.to)) {
    count_local(s, reverse ? sizeof(cplx) : sizeof(CplxPair));
    return;
  }
  Timers::Scope t(timers_, "fft.reshape");
  cplx* h = half_.data();
  const long f = field_;
  const StridedIndex src = indexer(reverse ? s.to : s.from);
  const StridedIndex dst = indexer(reverse ? s.from : s.to);
  if (reverse) {  // the inverse transforms one field
    reshapes_[s.reshape]->execute(
        send_.data(), recv_.data(), [=] BEATNIK_HOST_DEVICE(int i, int j) { return h[src(i, j)]; },
        [=] BEATNIK_HOST_DEVICE(int i, int j, cplx v) { h[dst(i, j)] = v; }, true);
    return;
  }
  reshapes_[s.reshape]->execute(
      reinterpret_cast<CplxPair*>(send_.data()), reinterpret_cast<CplxPair*>(recv_.data()),
      [=] BEATNIK_HOST_DEVICE(int i, int j) {
        const long k = src(i, j);
        return CplxPair{h[k], h[k + f]};
      },
      [=] BEATNIK_HOST_DEVICE(int i, int j, CplxPair v) {
        const long k = dst(i, j);
        h[k] = v.a;
        h[k + f] = v.b;
      },
      false);
}

void DistributedFFT::local_fft(const Step& s, bool inverse) {
  Timers::Scope t(timers_, "fft.local");
  if (!computes(gate_)) {
    gate_->stand_in("fft.local");
    return;
  }
  LocalFFT& f = *ffts_[s.fft];
  if (s.real) {
    if (inverse && c2r_) {
      c2r_->run();
    } else if (inverse) {
      hermitian_lines(s);
      f.inverse(work_.data());
    } else {
      f.forward(work_.data());
      split_halves(s);
    }
    return;
  }
  cplx* a = s.half ? half_.data() : work_.data();
  if (inverse) {
    f.inverse(a);  // on the half array: the one field the inverse carries
    return;
  }
  f.forward(a);
  if (s.half) f.forward(a + field_);
}

// Two real fields a, b as one complex line C = a + i·b: Â(k) = (C(k) + conj C(−k))/2 and
// B̂(k) = (C(k) − conj C(−k))/(2i), for k in the half [0, n/2 + 1) of the first dimension d.
void DistributedFFT::split_halves(const Step& s) {
  const cplx* w = work_.data();
  cplx* h = half_.data();
  const long f = field_;
  const int d = plan_.first_dim, n = global_[d];
  const StridedIndex full = indexer(s.from), hi = indexer(s.to);
  const Box2 b = s.to.box;
  exec::parallel_for(space_, exec::Range2{b.lo[0], b.hi[0], b.lo[1], b.hi[1]}, [=] BEATNIK_HOST_DEVICE(int i, int j) {
    const int k = d == 0 ? i : j, m = k == 0 ? 0 : n - k;
    const cplx c = w[full(i, j)], cm = w[d == 0 ? full(m, j) : full(i, m)];
    const long at = hi(i, j);
    h[at] = cplx{0.5 * (c.re + cm.re), 0.5 * (c.im - cm.im)};
    h[at + f] = cplx{0.5 * (c.im + cm.im), -0.5 * (c.re - cm.re)};
  });
}

// The whole Hermitian line from its half H: Z(k) = H(k) for k < n/2 + 1, conj H(n − k) above.
void DistributedFFT::hermitian_lines(const Step& s) {
  cplx* w = work_.data();
  const cplx* h = half_.data();
  const int d = plan_.first_dim, n = global_[d], nh = n / 2 + 1;
  const StridedIndex full = indexer(s.from), hi = indexer(s.to);
  const Box2 b = s.from.box;
  exec::parallel_for(space_, exec::Range2{b.lo[0], b.hi[0], b.lo[1], b.hi[1]}, [=] BEATNIK_HOST_DEVICE(int i, int j) {
    const int k = d == 0 ? i : j;
    if (k < nh) {
      w[full(i, j)] = h[hi(i, j)];
      return;
    }
    const cplx v = h[d == 0 ? hi(n - k, j) : hi(i, n - k)];
    w[full(i, j)] = cplx{v.re, -v.im};
  });
}

size_t DistributedFFT::buffer_bytes() const {
  return (work_.size() + send_.size() + recv_.size() + half_.size()) * sizeof(cplx);
}

}  // namespace beatnik::fft
