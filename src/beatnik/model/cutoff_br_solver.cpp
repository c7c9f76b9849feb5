#include "beatnik/model/cutoff_br_solver.hpp"

#include <cmath>
#include <limits>

#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/exec/scratch.hpp"
#include "beatnik/model/br_cutoff_block.hpp"
#include "beatnik/model/br_migrate.hpp"
#include "beatnik/model/br_particles.hpp"
#include "beatnik/model/state.hpp"

namespace beatnik::model {
namespace {

long sum(const std::vector<long>& v) {
  long s = 0;
  for (long x : v) s += x;
  return s;
}

// Records of `width` bytes sent to ranks other than `self`.
long bytes_to_others(const std::vector<long>& counts, int self, int width) {
  long s = 0;
  for (size_t r = 0; r < counts.size(); ++r)
    if (static_cast<int>(r) != self) s += counts[r];
  return s * width * long(sizeof(double));
}

}  // namespace

CutoffBRSolver::CutoffBRSolver(const mesh::SurfaceMesh& mesh, exec::Space space, const BRSettings& settings,
                               double epsilon, comm::CommStats* stats, Timers* timers, const ComputeGate* gate)
    : mesh_(mesh),
      space_(space),
      settings_(settings),
      eps_(epsilon),
      stats_(stats),
      timers_(timers),
      gate_(gate),
      spatial_(mesh.grid().comm(), mesh.grid().dims(),
               {-0.5 * mesh.geometry().period[0], -0.5 * mesh.geometry().period[1]},
               {0.5 * mesh.geometry().period[0], 0.5 * mesh.geometry().period[1]}, settings.partition, space),
      by_dest_(space),
      by_ghost_dest_(space),
      scan_(space),
      cells_(space),
      recv_(space, 0),
      ghost_recv_(space, 0),
      pairs_(space, 1) {
  rank_ = mesh.grid().rank();
  size_ = mesh.grid().size();
  n_ = mesh.layout().owned_count();
  reach_ = cutoff_reach(settings.cutoff, mesh.geometry());
  migrator_ = std::make_unique<comm::Migrator>(mesh.grid().comm(), space, settings.migrate_strategy,
                                               mesh.locality(), stats, mesh.transport());
  pts_ = exec::Buffer<double>(space, kParticleWidth * n_);
  keys_ = exec::Buffer<int>(space, n_);
  send_ = exec::Buffer<double>(space, kParticleWidth * n_);
  back_recv_ = exec::Buffer<double>(space, kVelocityWidth * n_);
  for (auto* b : {&ghost_send_, &xyz_, &sorted_, &acc_, &back_send_, &ghost_shift_})
    *b = exec::Buffer<double>(space, 0);
  for (auto* b : {&ghost_count_, &ghost_start_, &ghost_src_}) *b = exec::Buffer<long>(space, 0);
  ghost_dest_ = exec::Buffer<int>(space, 0);
}

CutoffBRSolver::~CutoffBRSolver() = default;

std::vector<CutoffLoad> CutoffBRSolver::take_loads() {
  std::vector<CutoffLoad> out;
  out.swap(loads_);
  return out;
}

size_t CutoffBRSolver::buffer_bytes() const {
  size_t b = 0;
  for (const auto* x : {&pts_, &send_, &recv_, &ghost_shift_, &ghost_send_, &ghost_recv_, &xyz_, &sorted_, &acc_,
                        &back_send_, &back_recv_})
    b += x->size() * sizeof(double);
  for (const auto* x : {&ghost_count_, &ghost_start_, &ghost_src_}) b += x->size() * sizeof(long);
  return b + (keys_.size() + ghost_dest_.size()) * sizeof(int);
}

void CutoffBRSolver::velocity(const mesh::Field& state, const mesh::Field& omega, const mesh::Field& out) {
  CutoffLoad load;
  load.surface = n_;
  {
    Timers::Scope t(timers_, "br.cutoff.to_spatial");
    pack_br_particles(mesh_, settings_, space_, state, omega, pts_.data());
    to_spatial();
  }
  if (broken_) {
    // Non-finite positions (the health check stops the run after this step): NaN velocities.
    const mesh::FieldView o = out.view();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    exec::parallel_for(space_, exec::Range2{0, mesh_.layout().ni, 0, mesh_.layout().nj},
                       [=] BEATNIK_HOST_DEVICE(int i, int j) { o(0, i, j) = o(1, i, j) = o(2, i, j) = nan; });
    loads_.push_back(load);
    return;
  }
  {
    Timers::Scope t(timers_, "br.cutoff.ghosts");
    make_ghosts();
  }
  {
    Timers::Scope t(timers_, "br.cutoff.bin");
    bin();
  }
  unsigned long long pairs = 0;
  {
    Timers::Scope t(timers_, "br.cutoff.compute");
    compute();
    exec::copy(&pairs, exec::Space::Host, pairs_.data(), space_, 1);
  }
  {
    Timers::Scope t(timers_, "br.cutoff.to_surface");
    to_surface(out);
  }
  load.particles = nown_;
  load.ghosts = nghost_;
  load.pairs = static_cast<long>(pairs) - nown_;  // every target finds itself once
  load.migrate_bytes = bytes_to_others(send_counts_, rank_, kParticleWidth) +
                       bytes_to_others(recv_counts_, rank_, kVelocityWidth);
  load.ghost_bytes = bytes_to_others(ghost_send_counts_, rank_, kParticleWidth);
  loads_.push_back(load);
}

// Cuts from the current positions, then every particle to the owner of its cell.
void CutoffBRSolver::to_spatial() {
  const long n = n_;
  const double* p = pts_.data();
  broken_ = !spatial_.update(p, p + n, n);
  if (broken_) return;
  int* key = keys_.data();
  br_owner_keys(space_, spatial_.view(), p, n, key);
  by_dest_.sort(key, n, size_);
  const std::vector<long>& off = by_dest_.host_offsets();
  send_counts_.assign(size_, 0);
  for (int r = 0; r < size_; ++r) send_counts_[r] = off[r + 1] - off[r];
  double* send = send_.data();
  br_pack_records(space_, by_dest_.order(), p, n, kParticleWidth, send);
  migrator_->exchange(send_counts_, send, kParticleWidth, recv_counts_, recv_, "migrate");
  nown_ = sum(recv_counts_);
}

// Copies of owned particles for every rank (this one included, for periodic images) whose
// widened cell holds them: count, offsets, list (rank, particle, shift), group by rank, send.
void CutoffBRSolver::make_ghosts() {
  const long n = nown_;
  const mesh::SpatialView v = spatial_.view();
  const double period[2] = {mesh_.geometry().periodic[0] ? mesh_.geometry().period[0] : 0.0,
                            mesh_.geometry().periodic[1] ? mesh_.geometry().period[1] : 0.0};
  const double px = period[0], py = period[1];
  const double reach = reach_;
  const int self = rank_;
  exec::grow(ghost_count_, space_, n);
  exec::grow(ghost_start_, space_, n + 1);
  const double* rec = recv_.data();
  long* count = ghost_count_.data();
  exec::parallel_for(space_, n, [=] BEATNIK_HOST_DEVICE(long k) {
    const double per[2] = {px, py};
    long m = 0;
    mesh::visit_ghost_targets(v, per, reach, self, rec[k * kParticleWidth], rec[k * kParticleWidth + 1],
                              [&](int, double, double) { ++m; });
    count[k] = m;
  });
  const long total = scan_.run(count, ghost_start_.data(), n);
  exec::grow(ghost_dest_, space_, total);
  exec::grow(ghost_src_, space_, total);
  exec::grow(ghost_shift_, space_, 2 * total);
  exec::grow(ghost_send_, space_, kParticleWidth * total);
  const long* start = ghost_start_.data();
  int* dest = ghost_dest_.data();
  long* src = ghost_src_.data();
  double* shift = ghost_shift_.data();
  exec::parallel_for(space_, n, [=] BEATNIK_HOST_DEVICE(long k) {
    const double per[2] = {px, py};
    long e = start[k];
    mesh::visit_ghost_targets(v, per, reach, self, rec[k * kParticleWidth], rec[k * kParticleWidth + 1],
                              [&](int rank, double sx, double sy) {
                                dest[e] = rank;
                                src[e] = k;
                                shift[2 * e] = sx;
                                shift[2 * e + 1] = sy;
                                ++e;
                              });
  });
  by_ghost_dest_.sort(dest, total, size_);
  const std::vector<long>& off = by_ghost_dest_.host_offsets();
  ghost_send_counts_.assign(size_, 0);
  for (int r = 0; r < size_; ++r) ghost_send_counts_[r] = off[r + 1] - off[r];
  const long* order = by_ghost_dest_.order();
  double* out = ghost_send_.data();
  exec::parallel_for(space_, total, [=] BEATNIK_HOST_DEVICE(long q) {
    const long e = order[q];
    const double* r = rec + src[e] * kParticleWidth;
    double* o = out + q * kParticleWidth;
    o[0] = r[0] + shift[2 * e];
    o[1] = r[1] + shift[2 * e + 1];
    for (int c = 2; c < kParticleWidth; ++c) o[c] = r[c];
  });
  migrator_->exchange(ghost_send_counts_, out, kParticleWidth, ghost_recv_counts_, ghost_recv_, "ghost");
  nghost_ = sum(ghost_recv_counts_);
}

// Owned particles then ghosts into the cell list; their records in cell order, structure of arrays.
void CutoffBRSolver::bin() {
  if (!computes(gate_)) return gate_->stand_in("br.cutoff.bin");
  const long nown = nown_, nall = nown_ + nghost_;
  exec::grow(xyz_, space_, 3 * nall);
  exec::grow(sorted_, space_, kParticleWidth * nall);
  const double* own = recv_.data();
  const double* gho = ghost_recv_.data();
  double* xyz = xyz_.data();
  exec::parallel_for(space_, nall, [=] BEATNIK_HOST_DEVICE(long k) {
    const double* r = k < nown ? own + k * kParticleWidth : gho + (k - nown) * kParticleWidth;
    for (int c = 0; c < 3; ++c) xyz[c * nall + k] = r[c];
  });
  // Cells of about half the cutoff: the kernel tests only the cells each target's sphere
  // touches, which then hold ~1.7 candidates per accepted pair instead of ~3.3 (any cell size
  // gives the same sums).
  cells_.build(xyz, xyz + nall, xyz + 2 * nall, nall, kBRCutoffCell * reach_);
  const long* order = cells_.order();
  double* sorted = sorted_.data();
  exec::parallel_for(space_, nall, [=] BEATNIK_HOST_DEVICE(long q) {
    const long k = order[q];
    const double* r = k < nown ? own + k * kParticleWidth : gho + (k - nown) * kParticleWidth;
    for (int c = 0; c < kParticleWidth; ++c) sorted[c * nall + q] = r[c];
  });
}

void CutoffBRSolver::compute() {
  exec::grow(acc_, space_, 3 * nown_);
  pairs_.zero();
  BRCutoffArgs a;
  a.sources = sorted_.data();
  a.ns = nown_ + nghost_;
  a.order = cells_.order();
  a.nt = nown_;
  a.grid = cells_.grid();
  a.cell_start = cells_.cell_start();
  a.cutoff = settings_.cutoff;
  a.float32_test = settings_.float32_test;
  a.eps = eps_;
  a.acc = acc_.data();
  a.pairs = pairs_.data();
  if (!computes(gate_)) return gate_->stand_in("br.cutoff.compute");
  if (a.ns == 0) return;
  if (space_ == exec::Space::Host) br_cutoff_host(a);
  else br_cutoff_device(a);
}

// Velocities back to the surface owners, block by block in the order they came, then into `out`.
void CutoffBRSolver::to_surface(const mesh::Field& out) {
  const long nown = nown_;
  exec::grow(back_send_, space_, kVelocityWidth * nown);
  const double* acc = acc_.data();
  double* back = back_send_.data();
  exec::parallel_for(space_, nown, [=] BEATNIK_HOST_DEVICE(long k) {
    for (int c = 0; c < kVelocityWidth; ++c) back[k * kVelocityWidth + c] = acc[c * nown + k];
  });
  migrator_->exchange_known(recv_counts_, back, kVelocityWidth, send_counts_, back_recv_.data(), "migrate");
  static_assert(kVelocityWidth == 3, "br_records_to_field takes records of 3");
  br_records_to_field(space_, by_dest_.order(), back_recv_.data(), n_, mesh_.layout().nj, out);
}

}  // namespace beatnik::model
