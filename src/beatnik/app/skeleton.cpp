#include "beatnik/app/skeleton.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "beatnik/app/simulation.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/model/initial_conditions.hpp"
#include "beatnik/model/state.hpp"

namespace beatnik::app {
namespace {

// The cutoff and tree solvers' messages follow the particles: their positions keep the initial surface.
bool follows_particles(const RunConfig& c) {
  return c.model.order != model::Order::Low && (c.model.br.cutoff_solver || c.model.br.tree_solver);
}

}  // namespace

void configure_skeleton(const Options& o, RunConfig& c) {
  const bool compute_given = o.skeleton_compute != "none";
  if (!o.skeleton) {
    if (compute_given) throw InputError("--skeleton-compute needs --skeleton");
    return;
  }
  c.skeleton = true;
  if (o.skeleton_compute == "none") {
    c.skeleton_scale = 0;
  } else if (o.skeleton_compute == "measured") {
    c.skeleton_scale = 1;
  } else {
    size_t used = 0;
    double x = -1;
    try {
      x = std::stod(o.skeleton_compute, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != o.skeleton_compute.size() || !(x >= 0) || !std::isfinite(x))
      throw InputError("--skeleton-compute must be none, measured or a factor X >= 0 (X times the measured "
                       "compute time), got '" + o.skeleton_compute + "'");
    c.skeleton_scale = x;
  }
  // The physics fields are poisoned (NaN): nothing may read them as results.
  const char* bad = o.br_check > 0              ? "--br-check"
                    : o.write_frequency > 0     ? "-F/--write-frequency"
                    : !o.write_state.empty()    ? "--write-state"
                    : o.checkpoint_every > 0    ? "--checkpoint-every"
                    : o.input                   ? "-i/--input"
                    : !o.load_snapshot.empty()  ? "--load-snapshot"
                                                : nullptr;
  if (bad)
    throw InputError(std::string("--skeleton runs no physics (its fields hold NaN): ") + bad +
                     " cannot be used with it");
}

std::string skeleton_compute_name(const RunConfig& c) {
  if (c.skeleton_scale == 0) return "none";
  if (c.skeleton_scale == 1 && c.options.skeleton_compute == "measured") return "measured";
  return fmt::format("{:g}", c.skeleton_scale);
}

nlohmann::json skeleton_json(const Simulation& sim) {
  const RunConfig& c = sim.config();
  nlohmann::json j;
  j["compute"] = skeleton_compute_name(c);
  j["scale"] = c.skeleton_scale;
  j["measured_steps"] = c.skeleton_scale > 0 ? kSkeletonMeasureSteps : 0;
  j["stand_in_seconds_per_call_rank0"] = sim.compute_gate().stand_in_seconds();
  j["positions"] = follows_particles(c)
                       ? "initial surface (the particle solver's migration follows it every step)"
                       : "poisoned";
  return j;
}

std::string skeleton_banner(const Simulation& sim) {
  const RunConfig& c = sim.config();
  const std::string what = c.skeleton_scale == 0 ? std::string("nothing")
                           : skeleton_compute_name(c) == "measured"
                               ? fmt::format("its time measured in {} real steps", kSkeletonMeasureSteps)
                               : fmt::format("{:g} x its time measured in {} real steps", c.skeleton_scale,
                                             kSkeletonMeasureSteps);
  return fmt::format("communication only; each compute phase replaced by {}; physics fields poisoned (NaN){}", what,
                     follows_particles(c)
                         ? ", positions kept: the particle solver's messages follow the initial surface every step"
                         : "");
}

// Part of Simulation: called from its constructor before its accumulators are reset.
void Simulation::start_skeleton() {
  std::map<std::string, double> per_call;
  if (config_.skeleton_scale > 0) {
    // The compute phases' own time, measured in real steps on the real initial state.
    for (int s = 0; s < kSkeletonMeasureSteps; ++s) {
      timers_.reset();
      integrator_->step(state_, config_.dt);
      exec::fence(config_.space);
      timers_.resolve();
    }
    for (const std::string& region : compute_regions()) {
      auto it = timers_.stats().find(region);
      if (it != timers_.stats().end() && it->second.calls > 0)
        per_call[region] = it->second.seconds / double(it->second.calls);
    }
    discard_loads(model_->br_solver());
    model::initialize_state(*mesh_, config_.initial, state_);
    model_->gather(state_);
  }
  gate_.skip_all(per_call, config_.skeleton_scale);
  // Poison the physics: every value NaN, ghosts included. The cutoff and tree solvers' messages
  // follow the positions, so with them they keep the initial surface (and are never written again).
  const bool keep_positions = follows_particles(config_);
  const std::vector<double> nan(static_cast<size_t>(state_.layout().plane()),
                                std::numeric_limits<double>::quiet_NaN());
  for (int c = keep_positions ? model::kW1 : 0; c < state_.ncomp(); ++c)
    exec::copy(state_.comp(c), state_.space(), nan.data(), exec::Space::Host, nan.size());
  exec::fence(config_.space);
}

}  // namespace beatnik::app
