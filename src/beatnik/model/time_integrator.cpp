#include "beatnik/model/time_integrator.hpp"

namespace beatnik::model {

TimeIntegrator::TimeIntegrator(ZModel& model, const mesh::Field& state, Timers* timers)
    : model_(model),
      timers_(timers),
      stage_(state.space(), state.layout(), state.ncomp()),
      stage2_(state.space(), state.layout(), state.ncomp()) {}

void TimeIntegrator::step(const mesh::Field& z, double dt) {
  if (!computes(model_.gate())) {
    // Skeleton mode: the three derivative evaluations and their communication, no update.
    // Every stage evaluates at z itself (the stage buffers are never written): the same
    // exchanges of the same sizes, and the cutoff solver migrates the same surface each time.
    for (int stage = 0; stage < 3; ++stage) {
      model_.derivatives(z, stage2_);
      Timers::Scope t(timers_, "rk.update");
      model_.gate()->stand_in("rk.update");
    }
    return;
  }
  // out = a·x + b·y + c·L(s), the same expression the separate update pass computed.
  model_.derivatives(z, StageUpdate{&stage_, 1.0, 0.0, dt, &z, &z});
  model_.derivatives(stage_, StageUpdate{&stage2_, 0.75, 0.25, 0.25 * dt, &z, &stage_});
  model_.derivatives(stage2_, StageUpdate{&z, 1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0 * dt, &z, &stage2_, &stage_});
}

}  // namespace beatnik::model
