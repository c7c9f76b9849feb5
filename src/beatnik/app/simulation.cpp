#include "beatnik/app/simulation.hpp"

#include <fmt/format.h>

#include <climits>

#include "beatnik/base/error.hpp"
#include "beatnik/model/initial_conditions.hpp"
#include "beatnik/model/state.hpp"

namespace beatnik::app {

Simulation::Simulation(MPI_Comm comm, const RunConfig& config) : config_(config) {
  ctx_ = std::make_unique<comm::Context>(comm);
  // One GPU per rank on a node (round robin when there are more ranks than GPUs).
  if (config.space == exec::Space::Device && exec::device_count() > 0)
    exec::set_device(ctx_->node_local_rank() % exec::device_count());
  mesh_ = std::make_unique<mesh::SurfaceMesh>(*ctx_, config.geometry, config.procs);
  if (config.space == exec::Space::Device) timers_.set_sync([] { exec::fence(exec::Space::Device); });
  state_ = mesh::Field(config.space, mesh_->layout(), model::kStateComps);
  model::initialize_state(*mesh_, config.initial, state_);
  model_ = std::make_unique<model::ZModel>(*mesh_, config.space, config.model, config.fft, &stats_, &timers_);
  integrator_ = std::make_unique<model::TimeIntegrator>(*model_, state_, &timers_);
  // The first gather fills the ghosts of the initial state (for output and checks).
  model_->gather(state_);
  timers_.reset();
  stats_.reset();
}

Simulation::~Simulation() = default;

void Simulation::step() {
  exec::fence(config_.space);
  const double t0 = wall_seconds();
  model_->reset_health();
  {
    Timers::Scope t(&timers_, "step");
    integrator_->step(state_, config_.dt);
  }
  ++step_;
  long long bad = model_->first_bad_node();
  {
    Timers::Scope t(&timers_, "check");
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_MIN, mesh_->grid().comm());
  }
  exec::fence(config_.space);
  step_seconds_.push_back(wall_seconds() - t0);
  if (bad != LLONG_MAX) {
    const long node = static_cast<long>(bad / 4);
    const int ny = config_.geometry.nodes[1];
    const int gi = static_cast<int>(node / ny), gj = static_cast<int>(node % ny);
    int owner = 0;
    const auto boxes = mesh_->decomposition().all_owned();
    for (int r = 0; r < static_cast<int>(boxes.size()); ++r)
      if (boxes[r].contains(gi, gj)) owner = r;
    const int kind = static_cast<int>(bad % 4);
    const std::string what = kind == model::kBadNonFinite ? "a non-finite value"
                             : kind == model::kBadTangled ? "a tangled surface (det h <= 0)"
                                                          : fmt::format("a blow-up (mesh stretched beyond --max-stretch {:g})",
                                                                        config_.model.max_stretch);
    throw SimulationError(fmt::format(
        "step {} (time {:.6g}{}): {} at global node (i={}, j={}) on rank {}; the run stops here",
        step_, time(), config_.tau > 0 ? fmt::format(" = {:.3f} tau", time() / config_.tau) : "", what, gi, gj,
        owner));
  }
}

GlobalDiagnostics Simulation::diagnostics() const {
  const model::LocalDiagnostics l = model::local_diagnostics(state_);
  double sums[3] = {l.sum_z3, l.sum_abs_w, l.nonfinite};
  double maxes[4] = {l.max_z3, l.neg_min_z3, l.max_abs_w1, l.max_abs_w2};
  MPI_Comm c = mesh_->grid().comm();
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, c);
  MPI_Allreduce(MPI_IN_PLACE, maxes, 4, MPI_DOUBLE, MPI_MAX, c);
  GlobalDiagnostics g;
  g.sum_z3 = sums[0];
  g.sum_abs_w = sums[1];
  g.nonfinite = static_cast<long>(sums[2]);
  g.max_z3 = maxes[0];
  g.min_z3 = -maxes[1];
  g.max_abs_w1 = maxes[2];
  g.max_abs_w2 = maxes[3];
  return g;
}

size_t Simulation::buffer_bytes() const {
  return state_.bytes() + integrator_->buffer_bytes() + model_->buffer_bytes();
}

}  // namespace beatnik::app
