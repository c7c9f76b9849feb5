#include "beatnik/app/simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <optional>

#include "beatnik/app/memory_check.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/comm/halo/registry.hpp"
#include "beatnik/exec/device_clock.hpp"
#include "beatnik/exec/stream.hpp"
#include "beatnik/model/initial_conditions.hpp"
#include "beatnik/model/state.hpp"

namespace beatnik::app {
namespace {

// Do all ranks have a GPU of their own? (NCCL refuses two ranks on one GPU.) Collective.
bool one_gpu_per_rank(const comm::Context& ctx, int gpu) {
  std::vector<int> all(2 * ctx.size());
  const int mine[2] = {ctx.machine_node_of_rank()[ctx.rank()], gpu};
  MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, ctx.comm());
  for (int a = 0; a < ctx.size(); ++a)
    for (int b = a + 1; b < ctx.size(); ++b)
      if (all[2 * a] == all[2 * b] && all[2 * a + 1] == all[2 * b + 1]) return false;
  return true;
}

// --gpu-transport auto|staged|cuda-aware|nccl -> a transport this run can use. Collective.
comm::TransportKind choose_transport(const comm::Context& ctx, const RunConfig& c, int gpu) {
  const bool own_gpu = one_gpu_per_rank(ctx, gpu);
  const std::string& t = c.gpu_transport;
  if (t == "staged") return comm::TransportKind::Staged;
  if (t == "cuda-aware") return comm::TransportKind::CudaAware;  // checked when made
  if (t == "nccl") {
    if (!own_gpu)
      throw NotAvailable("--gpu-transport nccl needs one GPU per rank, but ranks share a GPU here (" +
                         std::to_string(ctx.size()) + " ranks, " + std::to_string(exec::device_count()) +
                         " GPU(s) per node); use --gpu-transport staged or fewer ranks");
    return comm::TransportKind::Nccl;
  }
  // auto: NCCL across several GPUs, else the best MPI path.
  if (comm::nccl_built() && ctx.size() > 1 && own_gpu) return comm::TransportKind::Nccl;
  return comm::mpi_cuda_aware() ? comm::TransportKind::CudaAware : comm::TransportKind::Staged;
}

}  // namespace

Simulation::Simulation(MPI_Comm comm, const RunConfig& config) : config_(config) {
  exec::set_host_alignment(static_cast<size_t>(config.buffer_align));  // before any buffer is made
  ctx_ = std::make_unique<comm::Context>(comm, config.ranks_per_node);
  size_t total = 0;
  size_t& free_before = device_free_before_;
  if (config.space == exec::Space::Device) {
    // Bind before anything touches the device. Every rank sees the same GPU count, so a
    // NotAvailable here is raised on every rank alike.
    gpu_id_ = exec::bind_device(ctx_->node_local_rank(), config.gpu_id, config.ranks_per_gpu,
                                ctx_->node_local_size());
    exec::fence(exec::Space::Device);  // creates the context, so it is not counted below
    exec::device_memory(free_before, total);
    transport_ = std::make_unique<comm::Transport>(*ctx_, config.space, choose_transport(*ctx_, config, gpu_id_));
    // The halo strategy against the transport chosen (auto may have taken NCCL): refused on
    // every rank alike, before the exchanges are built.
    try {
      comm::halo::find_strategy(config.model.halo_strategy, transport_->kind());
    } catch (const NotAvailable& e) {
      throw NotAvailable(std::string("--halo-strategy: ") + e.what() +
                         (config.gpu_transport == "auto" ? " (--gpu-transport auto chose " +
                                                               std::string(comm::to_string(transport_->kind())) + ")"
                                                         : std::string()));
    }
    if (config.gpu_event_timers) timers_.set_device_clock(exec::make_cuda_event_clock());
    // Over NCCL every reshape is one grouped send/receive: say so in the plan and the results.
    if (transport_->uses_nccl() && config_.fft.algorithm != comm::ExchangeAlgorithm::Nccl) {
      if (config.options.fft_exchange)
        config_.warnings.push_back("--fft-exchange " + *config.options.fft_exchange +
                                   " applies to MPI transports; with --gpu-transport nccl the FFT reshapes are "
                                   "grouped NCCL send/receives");
      config_.fft.algorithm = comm::ExchangeAlgorithm::Nccl;
    }
  } else {
    transport_ = std::make_unique<comm::Transport>(*ctx_, config.space, comm::TransportKind::Host);
  }
  check_memory_fits(*ctx_, config, free_before);  // before anything large is allocated
  mesh_ = std::make_unique<mesh::SurfaceMesh>(*ctx_, config.geometry, config.procs, transport_.get(), config.placement);
  state_ = mesh::Field(config.space, mesh_->layout(), model::kStateComps);
  model::initialize_state(*mesh_, config.initial, state_);
  model_ = std::make_unique<model::ZModel>(*mesh_, config.space, config.model, config_.fft, &stats_, &timers_, &gate_);
  integrator_ = std::make_unique<model::TimeIntegrator>(*model_, state_, &timers_);
  // The first gather fills the ghosts of the initial state (for output and checks).
  model_->gather(state_);
  if (config.space == exec::Space::Device) {
    exec::fence(exec::Space::Device);
    size_t free_after = 0;
    exec::device_memory(free_after, total);
    device_bytes_ = free_before > free_after ? free_before - free_after : 0;
  }
  if (config_.skeleton) start_skeleton();
  // (Measured again after the first step: NCCL sets up its peer buffers on first use.)
  timers_.reset();
  stats_.reset();
  if (!config_.options.trace.empty() || !config_.options.trace_goal.empty()) {
    trace_ = std::make_unique<TraceRecorder>();
    message_trace_ = std::make_unique<comm::MessageTrace>(*trace_, ctx_->comm());
    timers_.set_trace(trace_.get());
    stats_.set_trace(message_trace_.get());
    MPI_Barrier(ctx_->comm());
    trace_origin_ = wall_seconds();
  }
  // --gpu-graph (app/step_graph.hpp): decided alike on every rank (rank count, options, transport).
  if (config_.space == exec::Space::Device && config_.gpu_graph != "off") {
    const std::string why = step_graph_unavailable(config_, ctx_->size(), transport_->kind());
    if (why.empty())
      graph_ = std::make_unique<StepGraph>(timers_, stats_, config_.gpu_graph == "on");
    else if (config_.gpu_graph == "on")
      throw NotAvailable("--gpu-graph on: " + why + "; use --gpu-graph auto or off");
  }
}

Simulation::~Simulation() = default;

void Simulation::step() {
  exec::fence(config_.space);
  const double t0 = wall_seconds();
  if (trace_) trace_->begin_step(step_ + 1);
  // With a graph the whole step queues on its stream (the graph's launch, the health flag, the
  // step's timestamps); otherwise on stream 0.
  std::optional<exec::WorkStreamScope> on_graph_stream;
  if (graph_in_use()) on_graph_stream.emplace(graph_->stream());
  model_->reset_health();
  {
    Timers::Scope t(&timers_, "step");
    if (graph_in_use()) {
      graph_->run([&] { integrator_->step(state_, config_.dt); }, config_.dt);
      if (!graph_->active()) {
        config_.warnings.push_back("--gpu-graph auto: the step could not be captured as a CUDA graph (" +
                                   graph_->fallback() + "); it runs with plain launches");
        std::fprintf(stderr, "beatnik: warning: %s\n", config_.warnings.back().c_str());
      }
    } else {
      integrator_->step(state_, config_.dt);
    }
  }
  ++step_;
  record_step_load(model_->br_solver(), load_series_);
  if (model::BRCheck* check = model_->br_check())
    br_check_series_.push_back(reduce_br_check(check->take(), step_, mesh_->grid().comm()));
  long long bad = model_->first_bad_node();
  {
    Timers::Scope t(&timers_, "check");
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_MIN, mesh_->grid().comm());
  }
  exec::fence(config_.space);
  step_seconds_.push_back(wall_seconds() - t0);
  if (trace_) trace_->end_step(wall_seconds());
  timers_.resolve();
  region_series_.record(timers_.stats());
  if (steps_this_run() <= config_.warmup) {
    // A warm-up step: keep its time apart and start every accumulator the report reads afresh.
    warmup_seconds_.push_back(step_seconds_.back());
    step_seconds_.clear();
    region_series_.reset();
    timers_.reset();
    stats_.reset();
    load_series_.steps.clear();
  }
  if (step_ == 1 && config_.space == exec::Space::Device) {
    size_t free_now = 0, total = 0;
    exec::device_memory(free_now, total);
    if (device_free_before_ > free_now) device_bytes_ = std::max(device_bytes_, device_free_before_ - free_now);
  }
  if (bad != LLONG_MAX) {
    const long node = static_cast<long>(bad / 4);
    const int ny = config_.geometry.nodes[1];
    const int gi = static_cast<int>(node / ny), gj = static_cast<int>(node % ny);
    int owner = 0;
    const auto boxes = mesh_->decomposition().all_owned();
    for (int r = 0; r < static_cast<int>(boxes.size()); ++r)
      if (boxes[r].contains(gi, gj)) owner = mesh_->grid().parent_rank_of_grid()[r];  // as mpiexec numbers it
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

void Simulation::restore(long step, const std::vector<double>& positions, const std::vector<double>& vorticity) {
  const GhostedLayout L = state_.layout();
  std::vector<double> plane(static_cast<size_t>(L.plane()), 0.0);
  for (int c = 0; c < model::kStateComps; ++c) {
    const std::vector<double>& src = c < 3 ? positions : vorticity;
    const int k = c < 3 ? 3 : 2, cc = c < 3 ? c : c - 3;
    for (int i = 0; i < L.ni; ++i)
      for (int j = 0; j < L.nj; ++j) plane[L.index(i, j)] = src[(static_cast<size_t>(i) * L.nj + j) * k + cc];
    exec::copy(state_.comp(c), state_.space(), plane.data(), exec::Space::Host, plane.size());
  }
  step_ = first_step_ = step;
  model_->gather(state_);
  exec::fence(config_.space);
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
