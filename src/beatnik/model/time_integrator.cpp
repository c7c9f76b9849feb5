#include "beatnik/model/time_integrator.hpp"

#include "beatnik/exec/parallel_for.hpp"

namespace beatnik::model {

TimeIntegrator::TimeIntegrator(ZModel& model, const mesh::Field& state, Timers* timers)
    : model_(model),
      timers_(timers),
      stage_(state.space(), state.layout(), state.ncomp()),
      rate_(state.space(), GhostedLayout{state.layout().ni, state.layout().nj, 0}, state.ncomp()) {}

namespace {
// out = a·x + b·y + c·rate on owned nodes, every component.
void combine(const mesh::Field& out, double a, const mesh::Field& x, double b, const mesh::Field& y,
             double c, const mesh::Field& rate) {
  const mesh::FieldView o = out.view(), xv = x.view(), yv = y.view(), r = rate.view();
  const int nc = out.ncomp();
  const GhostedLayout L = out.layout();
  exec::parallel_for(out.space(), exec::Range2{0, L.ni, 0, L.nj}, [=] BEATNIK_HOST_DEVICE(int i, int j) {
    for (int k = 0; k < nc; ++k) o(k, i, j) = a * xv(k, i, j) + b * yv(k, i, j) + c * r(k, i, j);
  });
}
}  // namespace

void TimeIntegrator::step(const mesh::Field& z, double dt) {
  if (!computes(model_.gate())) {
    // Skeleton mode: the three derivative evaluations and their communication, no update.
    // Every stage evaluates at z itself (the stage buffer is never written): the same
    // exchanges of the same sizes, and the cutoff solver migrates the same surface each time.
    for (int stage = 0; stage < 3; ++stage) {
      model_.derivatives(z, rate_);
      Timers::Scope t(timers_, "rk.update");
      model_.gate()->stand_in("rk.update");
    }
    return;
  }
  model_.derivatives(z, rate_);
  {
    Timers::Scope t(timers_, "rk.update");
    combine(stage_, 1.0, z, 0.0, z, dt, rate_);
  }
  model_.derivatives(stage_, rate_);
  {
    Timers::Scope t(timers_, "rk.update");
    combine(stage_, 0.75, z, 0.25, stage_, 0.25 * dt, rate_);
  }
  model_.derivatives(stage_, rate_);
  Timers::Scope t(timers_, "rk.update");
  combine(z, 1.0 / 3.0, z, 2.0 / 3.0, stage_, 2.0 / 3.0 * dt, rate_);
}

}  // namespace beatnik::model
