#pragma once
// Three-stage TVD (Shu–Osher) Runge–Kutta step (MODEL.md §10):
//   u = z + dt·L(z);  u' = ¾z + ¼u + ¼dt·L(u);  z = ⅓z + ⅔u' + ⅔dt·L(u').
// Each stage's update is fused into the kernels that compute L (ZModel::StageUpdate): no rate
// array is written and read back. A stage's output must not be its input (the kernels read
// neighbours), so u and u' live in two stage buffers; the third stage leaves ż in the first.
#include "beatnik/model/zmodel.hpp"

namespace beatnik::model {

class TimeIntegrator {
 public:
  TimeIntegrator(ZModel& model, const mesh::Field& state, Timers* timers);
  void step(const mesh::Field& state, double dt);
  size_t buffer_bytes() const { return stage_.bytes() + stage2_.bytes(); }
  // ż of the last step's last derivative evaluation (components 0..2 on owned nodes; zero
  // before the first step).
  const mesh::Field& last_rate() const { return stage_; }

 private:
  ZModel& model_;
  Timers* timers_;
  mesh::Field stage_;   // u, with ghosts; after a step ż (components 0..2)
  mesh::Field stage2_;  // u', with ghosts
};

}  // namespace beatnik::model
