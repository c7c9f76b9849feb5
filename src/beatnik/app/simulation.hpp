#pragma once
// One Z-model run: mesh, state, model and integrator built from a RunConfig, stepped with
// health checks. Used by the program and, on any communicator, by the tests.
#include <mpi.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "beatnik/app/problem.hpp"
#include "beatnik/base/compute_gate.hpp"
#include "beatnik/base/region_series.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/base/trace.hpp"
#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/context.hpp"
#include "beatnik/comm/message_trace.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/mesh/surface_mesh.hpp"
#include "beatnik/app/br_check_report.hpp"
#include "beatnik/app/load_series.hpp"
#include "beatnik/app/step_graph.hpp"
#include "beatnik/model/cutoff_br_solver.hpp"
#include "beatnik/model/diagnostics.hpp"
#include "beatnik/model/time_integrator.hpp"

namespace beatnik::app {

struct GlobalDiagnostics {
  double sum_z3 = 0, sum_abs_w = 0, max_z3 = 0, min_z3 = 0, max_abs_w1 = 0, max_abs_w2 = 0;
  long nonfinite = 0;
};

class Simulation {
 public:
  Simulation(MPI_Comm comm, const RunConfig& config);
  ~Simulation();

  // One TVD-RK3 step, then the health check: throws SimulationError naming the step, time,
  // rank and global node if a value became non-finite or the surface tangled (det h <= 0).
  void step();
  long steps_done() const { return step_; }
  double time() const { return step_ * config_.dt; }

  const RunConfig& config() const { return config_; }
  const comm::Context& context() const { return *ctx_; }
  const mesh::SurfaceMesh& mesh() const { return *mesh_; }
  const mesh::Field& state() const { return state_; }
  model::ZModel& model() { return *model_; }
  const model::ZModel& model() const { return *model_; }
  Timers& timers() { return timers_; }
  const comm::CommStats& comm_stats() const { return stats_; }
  // How halo and FFT-reshape bytes travel (host, staged, cuda-aware or nccl).
  const comm::Transport& transport() const { return *transport_; }
  // GPU this rank runs on (-1 on a host run) and the device memory the run took (bytes, from
  // the driver's free-memory count before and after setup: buffers, cuFFT plans, NCCL).
  int gpu_id() const { return gpu_id_; }
  size_t device_bytes() const { return device_bytes_; }
  // Measured steps (after the --warmup steps of this run): wall seconds per step on this rank
  // and each timer region's seconds per step. Timers, CommStats, these series and the load
  // series hold the measured steps only: the warm-up steps are dropped after each of them.
  const std::vector<double>& step_seconds() const { return step_seconds_; }
  const std::map<std::string, std::vector<double>>& region_series() const { return region_series_.series(); }
  long measured_steps() const { return static_cast<long>(step_seconds_.size()); }
  // Warm-up steps taken so far and this rank's wall seconds in each.
  const std::vector<double>& warmup_seconds() const { return warmup_seconds_; }
  // Cutoff and tree BR solvers: this rank's load per step (app/load_series.hpp); empty with
  // another solver.
  const LoadSeries& load_series() const { return load_series_; }
  // --br-check: the measured BR error of every step (warm-up steps included); empty without.
  const std::vector<BRCheckStep>& br_check_series() const { return br_check_series_; }
  // Restart (io/): the step this run started from, the steps it took, the last derivative
  // (velocity = components 0..2), and replacing the state by owned-node host data (node-major,
  // 3 positions and 2 vorticity values per node) at `step`. Collective (refreshes the ghosts).
  long first_step() const { return first_step_; }
  long steps_this_run() const { return step_ - first_step_; }
  const mesh::Field& last_rate() const { return integrator_->last_rate(); }
  void restore(long step, const std::vector<double>& positions, const std::vector<double>& vorticity);
  // --trace / --trace-goal: what this rank recorded (null when neither was asked for) and the
  // wall time all ranks agreed on as the trace's zero (after a barrier).
  const TraceRecorder* trace() const { return trace_.get(); }
  double trace_origin() const { return trace_origin_; }

  // Reduced over all ranks (collective).
  GlobalDiagnostics diagnostics() const;
  // Bytes this rank holds in beatnik's own buffers.
  size_t buffer_bytes() const;
  // --skeleton: the switch of the compute phases (stand-in seconds per call of each region).
  const ComputeGate& compute_gate() const { return gate_; }
  // --gpu-graph: the step's CUDA graph (null when not asked for or not applicable; its
  // active() turns false for good when a capture failed under auto).
  const StepGraph* step_graph() const { return graph_.get(); }
  bool graph_in_use() const { return graph_ && graph_->active(); }

 private:
  void start_skeleton();  // app/skeleton.cpp

  RunConfig config_;
  std::unique_ptr<comm::Context> ctx_;
  int gpu_id_ = -1;
  size_t device_bytes_ = 0;
  size_t device_free_before_ = 0;  // driver's free device memory before setup
  std::unique_ptr<comm::Transport> transport_;
  std::unique_ptr<mesh::SurfaceMesh> mesh_;
  Timers timers_;
  comm::CommStats stats_;
  ComputeGate gate_;
  mesh::Field state_;
  std::unique_ptr<model::ZModel> model_;
  std::unique_ptr<model::TimeIntegrator> integrator_;
  long step_ = 0;
  long first_step_ = 0;
  std::vector<double> step_seconds_;
  std::vector<double> warmup_seconds_;
  RegionSeries region_series_;
  LoadSeries load_series_;
  std::unique_ptr<TraceRecorder> trace_;
  std::unique_ptr<comm::MessageTrace> message_trace_;
  double trace_origin_ = 0;
  std::vector<BRCheckStep> br_check_series_;
  std::unique_ptr<StepGraph> graph_;  // last: gone before the buffers its kernels use
};

}  // namespace beatnik::app
