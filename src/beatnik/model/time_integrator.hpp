#pragma once
// Three-stage TVD (Shu–Osher) Runge–Kutta step (MODEL.md §10), with one stage buffer:
//   u = z + dt·L(z);  u = ¾z + ¼u + ¼dt·L(u);  z = ⅓z + ⅔u + ⅔dt·L(u).
#include "beatnik/model/zmodel.hpp"

namespace beatnik::model {

class TimeIntegrator {
 public:
  TimeIntegrator(ZModel& model, const mesh::Field& state, Timers* timers);
  void step(const mesh::Field& state, double dt);
  size_t buffer_bytes() const { return stage_.bytes() + rate_.bytes(); }
  // L(·) of the last derivative evaluation (owned nodes; ż = components 0..2).
  const mesh::Field& last_rate() const { return rate_; }

 private:
  ZModel& model_;
  Timers* timers_;
  mesh::Field stage_;  // u, with ghosts
  mesh::Field rate_;   // L(·), owned only
};

}  // namespace beatnik::model
