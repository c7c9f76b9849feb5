#include "beatnik/model/zmodel.hpp"

#include <cmath>

#include "beatnik/exec/interior_split.hpp"
#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/model/cutoff_br_solver.hpp"
#include "beatnik/model/exact_br_solver.hpp"
#include "beatnik/model/tree_br_solver.hpp"

namespace beatnik::model {

ZModel::ZModel(const mesh::SurfaceMesh& mesh, exec::Space space, const ModelParameters& params,
               const fft::FftOptions& fft_options, comm::CommStats* stats, Timers* timers,
               const ComputeGate* gate)
    : mesh_(mesh),
      space_(space),
      params_(params),
      timers_(timers),
      gate_(gate),
      halo_state_(mesh.grid(), mesh.layout(), comm::HaloPattern{mesh::kGhosts, true}, kStateComps,
                  space, mesh.locality(), stats, "halo", mesh.transport(),
                  comm::HaloRun{params.halo_strategy, timers, "halo.state"}),
      halo_v_(mesh.grid(), mesh.layout(), comm::HaloPattern{mesh::kGhosts, false}, 1, space,
              mesh.locality(), stats, "halo", mesh.transport(), comm::HaloRun{params.halo_strategy, timers, "halo.V"}),
      boundary_(mesh, space),
      v_(space, mesh.layout(), 1),
      bad_(space, 1) {
  const auto& h = mesh.geometry().spacing;
  spacing_ = Spacing{1.0 / (12.0 * h[0]), 1.0 / (12.0 * h[1]), 1.0 / (h[0] * h[1])};
  if (params.order != Order::High)
    riesz_ = std::make_unique<RieszTransform>(mesh, space, fft_options, stats, timers, gate);
  if (params.order != Order::Low) {
    const GhostedLayout owned{mesh.layout().ni, mesh.layout().nj, 0};
    omega_ = mesh::Field(space, owned, 3);
    br_u_ = mesh::Field(space, owned, 3);
    if (params.br.tree_solver)
      br_ = std::make_unique<TreeBRSolver>(mesh, space, params.br, params.epsilon, stats, timers, gate);
    else if (params.br.cutoff_solver)
      br_ = std::make_unique<CutoffBRSolver>(mesh, space, params.br, params.epsilon, stats, timers, gate);
    else
      br_ = std::make_unique<ExactBRSolver>(mesh, space, params.br, params.epsilon, stats, timers, gate);
    if (params.br.check_samples > 0) check_ = std::make_unique<BRCheck>(mesh, params.br, params.epsilon, timers);
  }
  reset_health();
}

void ZModel::gather(const mesh::Field& state) {
  {
    Timers::Scope t(timers_, "halo.state");
    halo_state_.exchange(state.components());
  }
  state_boundary(state);
}

void ZModel::state_boundary(const mesh::Field& state) {
  // Both write ghosts only: owned nodes (the overlapped interior work's inputs) stay as they are.
  Timers::Scope t(timers_, "boundary");
  if (!computes(gate_)) return gate_->stand_in("boundary");
  boundary_.shift_periodic_positions(state);
  boundary_.extrapolate_free(state);
}

void ZModel::derivatives(const mesh::Field& state, const StageUpdate& u) {
  if (!u.x) derivatives_to<false, false>(state, u);
  else if (!u.velocity) derivatives_to<true, false>(state, u);
  else derivatives_to<true, true>(state, u);
}

template <bool Combine, bool Velocity>
void ZModel::derivatives_to(const mesh::Field& state, const StageUpdate& u) {
  // With --halo-overlap the exchanges run split phase: what reads owned nodes only (the Riesz
  // transform, the kernels' interior) goes between start and finish, the border strips after.
  // Each node is computed by the same code either way, so the results are bitwise the same.
  const bool overlap = params_.halo_overlap;
  if (overlap) {
    Timers::Scope t(timers_, "halo.state");
    halo_state_.start(state.components());
  } else {
    gather(state);
  }
  // R·w lands in V's plane: the velocity kernel reads it at a node just before it writes V
  // there, so the two share memory (8 bytes per node saved). It reads owned w only.
  if (riesz_) riesz_->apply(state, kW1, kW2, v_);

  const mesh::FieldView s = state.view(), v = v_.view();
  detail::RateSink<Combine, Velocity> out;
  out.out = u.out->view();
  out.x = Combine ? u.x->view() : out.out;
  out.y = Combine ? u.y->view() : out.out;
  out.vel = Velocity ? u.velocity->view() : out.out;
  out.a = u.a;
  out.b = u.b;
  out.c = u.c;
  const mesh::FieldView ub = br_u_.view();
  const int order = params_.order == Order::Low ? 0 : params_.order == Order::Medium ? 1 : 2;
  const GhostedLayout L = state.layout();
  const long si = L.si();
  const Spacing sp = spacing_;
  const double g2 = 2.0 * params_.gravity, p = params_.metric_power;
  const double st = params_.max_stretch;
  const double det_limit = st > 0 ? st * st * st * st : HUGE_VAL;  // det h ~ stretch^4
  const int gi0 = mesh_.owned().lo[0], gj0 = mesh_.owned().lo[1];
  const long ny = mesh_.geometry().nodes[1];
  long long* bad = bad_.data();
  const exec::InteriorSplit parts = exec::split_interior(exec::Range2{0, L.ni, 0, L.nj}, kStencilReach);
  const auto velocity = [=] BEATNIK_HOST_DEVICE(int i, int j) BEATNIK_INLINE_KERNEL {
    const long k = L.index(i, j);
    double a[3], b[3];
    for (int c = 0; c < 3; ++c) {
      a[c] = d_x(s.comp(c) + k, si, sp);
      b[c] = d_y(s.comp(c) + k, si, sp);
    }
    const double h11 = a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
    const double h12 = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    const double h22 = b[0] * b[0] + b[1] * b[1] + b[2] * b[2];
    const double det = h11 * h22 - h12 * h12;
    const double w1 = s(kW1, i, j), w2 = s(kW2, i, j);
    // Broken (non-finite), tangled (det h <= 0) or blown-up (mesh stretched beyond the limit)
    // surface: remember the lowest such node; the run loop reports it.
    const bool nonfinite = !std::isfinite(det) || !std::isfinite(w1) || !std::isfinite(w2) ||
                           !std::isfinite(s(kZ3, i, j));
    const int kind = nonfinite ? kBadNonFinite : !(det > 0.0) ? kBadTangled : det > det_limit ? kBadStretched : -1;
    if (kind >= 0) exec::atomic_min(bad, 4 * ((gi0 + i) * ny + (gj0 + j)) + kind);
    // One division and one square root per node (the dividers are this kernel's bottleneck).
    const double inv_det = 1.0 / det;
    const double inv_sqrt_det = std::sqrt(inv_det);
    const double inv_det_p = p == 1.0 ? inv_det : (p == 0.5 ? inv_sqrt_det : std::pow(det, -p));
    double zn;
    if (order == 2) {  // high: ż = BR, u_n = |ż| (the full speed, as the reference)
      const double u0 = ub(0, i, j), u1 = ub(1, i, j), u2 = ub(2, i, j);
      out.put_velocity(kZ1, i, j, u0);
      out.put_velocity(kZ2, i, j, u1);
      out.put_velocity(kZ3, i, j, u2);
      zn = std::sqrt(u0 * u0 + u1 * u1 + u2 * u2);
    } else {
      zn = -0.5 * v(0, i, j) * inv_det_p;  // v holds R·w here (see above)
      if (order == 1) {  // medium: ż = BR, u_n from the Riesz transform
        out.put_velocity(kZ1, i, j, ub(0, i, j));
        out.put_velocity(kZ2, i, j, ub(1, i, j));
        out.put_velocity(kZ3, i, j, ub(2, i, j));
      } else {  // low: ż = u_n·n̂
        out.put_velocity(kZ1, i, j, zn * (a[1] * b[2] - a[2] * b[1]) * inv_sqrt_det);
        out.put_velocity(kZ2, i, j, zn * (a[2] * b[0] - a[0] * b[2]) * inv_sqrt_det);
        out.put_velocity(kZ3, i, j, zn * (a[0] * b[1] - a[1] * b[0]) * inv_sqrt_det);
      }
    }
    v(0, i, j) = zn * zn - 0.25 * (h22 * w1 * w1 - 2.0 * h12 * w1 * w2 + h11 * w2 * w2) * inv_det -
                 g2 * s(kZ3, i, j);
  };
  // Low order: the velocity's interior needs no ghosts and no BR, so it overlaps the state
  // halo too. Medium and high need BR's velocity, which needs ω everywhere (its border from
  // the ghosts): only ω's interior overlaps, the BR solve waits for finish.
  const bool velocity_early = overlap && !br_;
  // Skeleton mode: every compute phase below stands in (nothing, or a spin) for its kernel.
  const bool run = computes(gate_);
  if (velocity_early) {
    Timers::Scope t(timers_, "zmodel.velocity");
    if (run) exec::parallel_for_interior(space_, parts, velocity);
    else gate_->stand_in("zmodel.velocity");
  }
  if (overlap && br_) omega(state, exec::Part::Interior);
  if (overlap) {
    {
      Timers::Scope t(timers_, "halo.state");
      halo_state_.finish(state.components());
    }
    state_boundary(state);
  }
  if (br_) birkhoff_rott(state, overlap);
  {
    Timers::Scope t(timers_, "zmodel.velocity");
    if (!run)
      gate_->stand_in("zmodel.velocity");
    else if (velocity_early)
      exec::parallel_for_border(space_, parts, velocity);
    else
      exec::parallel_for(space_, exec::Range2{0, L.ni, 0, L.nj}, velocity);
  }

  const double A = params_.atwood, mu = params_.mu;
  const auto vorticity = [=] BEATNIK_HOST_DEVICE(int i, int j) BEATNIK_INLINE_KERNEL {
    const long k = L.index(i, j);
    const double* vp = v.comp(0) + k;
    out.put(kW1, i, j, A * d_x(vp, si, sp) + mu * laplacian(s.comp(kW1) + k, si, sp));
    out.put(kW2, i, j, A * d_y(vp, si, sp) + mu * laplacian(s.comp(kW2) + k, si, sp));
  };
  if (overlap) {
    {
      Timers::Scope t(timers_, "halo.V");
      halo_v_.start(v_.components());
    }
    {  // the interior reads owned V and the state, gathered by now
      Timers::Scope t(timers_, "zmodel.vorticity");
      if (run) exec::parallel_for_interior(space_, parts, vorticity);
      else gate_->stand_in("zmodel.vorticity");
    }
    Timers::Scope t(timers_, "halo.V");
    halo_v_.finish(v_.components());
  } else {
    Timers::Scope t(timers_, "halo.V");
    halo_v_.exchange(v_.components());
  }
  {
    Timers::Scope t(timers_, "boundary");
    if (run) boundary_.extrapolate_free(v_);
    else gate_->stand_in("boundary");
  }
  Timers::Scope t(timers_, "zmodel.vorticity");
  if (!run)
    gate_->stand_in("zmodel.vorticity");
  else if (overlap)
    exec::parallel_for_border(space_, parts, vorticity);
  else
    exec::parallel_for(space_, exec::Range2{0, L.ni, 0, L.nj}, vorticity);
}

void ZModel::birkhoff_rott(const mesh::Field& state, bool omega_interior_done) {
  omega(state, omega_interior_done ? exec::Part::Border : exec::Part::All);
  br_->velocity(state, omega_, br_u_);
  if (check_) check_->run(state, omega_, br_u_);
}

void ZModel::omega(const mesh::Field& state, exec::Part part) {
  const mesh::FieldView s = state.view(), w = omega_.view();
  const GhostedLayout L = state.layout();
  const long si = L.si();
  const Spacing sp = spacing_;
  const exec::Range2 all{0, L.ni, 0, L.nj};
  Timers::Scope t(timers_, "zmodel.omega");
  if (!computes(gate_)) return gate_->stand_in("zmodel.omega");
  exec::parallel_for_part(space_, all, exec::split_interior(all, kStencilReach), part,
                          [=] BEATNIK_HOST_DEVICE(int i, int j) {
                            const long k = L.index(i, j);
                            const double w1 = s(kW1, i, j), w2 = s(kW2, i, j);
                            for (int c = 0; c < 3; ++c)
                              w(c, i, j) = w2 * d_x(s.comp(c) + k, si, sp) - w1 * d_y(s.comp(c) + k, si, sp);
                          });
}

void ZModel::reset_health() {
  // A one-element kernel rather than a copy from the host: queued without waiting (device).
  long long* bad = bad_.data();
  exec::parallel_for(space_, 1L, [=] BEATNIK_HOST_DEVICE(long) { *bad = LLONG_MAX; });
}

long long ZModel::first_bad_node() const {
  long long v = 0;
  exec::copy(&v, exec::Space::Host, bad_.data(), space_, 1);
  return v;
}

size_t ZModel::buffer_bytes() const {
  return v_.bytes() + (riesz_ ? riesz_->fft().buffer_bytes() : 0) + omega_.bytes() +
         br_u_.bytes() + (br_ ? br_->buffer_bytes() : 0);
}

}  // namespace beatnik::model
