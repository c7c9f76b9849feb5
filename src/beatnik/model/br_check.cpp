#include "beatnik/model/br_check.hpp"

#include <algorithm>
#include <cmath>

#include "beatnik/model/br_block.hpp"
#include "beatnik/model/br_particles.hpp"
#include "beatnik/model/state.hpp"

namespace beatnik::model {

std::vector<long> br_check_nodes(long nodes, long samples) {
  std::vector<long> out;
  for (long s = 0; s < samples; ++s) out.push_back(static_cast<long>(((2 * s + 1) * static_cast<__int128>(nodes)) / (2 * samples)));
  return out;
}

BRCheck::BRCheck(const mesh::SurfaceMesh& mesh, const BRSettings& settings, double epsilon, Timers* timers)
    : mesh_(mesh), settings_(settings), eps_(epsilon), timers_(timers) {
  const auto& geo = mesh.geometry();
  images_.k = settings.images;
  images_.centred = settings.centred;
  for (int d = 0; d < 2; ++d) images_.period[d] = geo.periodic[d] ? geo.period[d] : 0.0;
  const auto& own = mesh.owned();
  const long ny = geo.nodes[1];
  for (long g : br_check_nodes(mesh.global_nodes(), settings.check_samples)) {
    const int gi = static_cast<int>(g / ny), gj = static_cast<int>(g % ny);
    if (gi >= own.lo[0] && gi < own.hi[0] && gj >= own.lo[1] && gj < own.hi[1]) {
      local_i_.push_back(gi - own.lo[0]);
      local_j_.push_back(gj - own.lo[1]);
    }
  }
  targets_.resize(3 * local_i_.size());
  acc_.resize(3 * local_i_.size());
  ring_ = std::make_unique<comm::RingPass>(mesh.grid().comm(), 6 * mesh.layout().owned_count(), exec::Space::Host,
                                           settings.ring_strategy, mesh.locality(), nullptr, timers, "br.check");
}

BRCheck::~BRCheck() = default;

std::vector<BRCheckSums> BRCheck::take() {
  std::vector<BRCheckSums> out;
  out.swap(sums_);
  return out;
}

// A device field's copy on the host (the check's exact sum runs on the host, -x cuda too).
const mesh::Field& BRCheck::on_host(const mesh::Field& f, mesh::Field& mirror) {
  if (f.space() == exec::Space::Host) return f;
  if (mirror.bytes() != f.bytes()) mirror = mesh::Field(exec::Space::Host, f.layout(), f.ncomp());
  exec::copy(mirror.comp(0), exec::Space::Host, f.comp(0), f.space(), f.bytes() / sizeof(double));
  return mirror;
}

void BRCheck::run(const mesh::Field& state, const mesh::Field& omega, const mesh::Field& out) {
  Timers::Scope t(timers_, "br.check");
  sample(on_host(state, host_state_), on_host(omega, host_omega_), on_host(out, host_out_));
}

void BRCheck::sample(const mesh::Field& state, const mesh::Field& omega, const mesh::Field& out) {
  const long nt = static_cast<long>(local_i_.size());
  const mesh::FieldView s = state.view(), o = out.view();
  for (long k = 0; k < nt; ++k)
    for (int c = 0; c < 3; ++c) targets_[c * nt + k] = s(kZ1 + c, local_i_[k], local_j_[k]);
  pack_br_particles(mesh_, settings_, exec::Space::Host, state, omega, ring_->own_block());
  std::fill(acc_.begin(), acc_.end(), 0.0);
  BRBlockArgs a;
  a.targets = targets_.data();
  a.nt = nt;
  a.images = images_;
  a.eps = eps_;
  a.acc = acc_.data();
  ring_->run([&](const double* block, int origin, int chunk, int chunks) {
    BRBlockArgs b = a;
    b.sources = block;
    b.ns = ring_->count_of(origin) / 6;
    b.t0 = nt * chunk / chunks;
    b.t1 = nt * (chunk + 1) / chunks;
    br_block_host(b);
  });
  BRCheckSums r;
  r.samples = nt;
  for (long k = 0; k < nt; ++k) {
    double d2 = 0.0, e2 = 0.0;
    for (int c = 0; c < 3; ++c) {
      const double e = acc_[c * nt + k], d = o(c, local_i_[k], local_j_[k]) - e;
      d2 += d * d;
      e2 += e * e;
    }
    r.diff2 += d2;
    r.ref2 += e2;
    r.diff_max = std::max(r.diff_max, std::sqrt(d2));
    r.ref_max = std::max(r.ref_max, std::sqrt(e2));
  }
  sums_.push_back(r);
}

}  // namespace beatnik::model
