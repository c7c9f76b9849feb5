#include "beatnik/app/step_graph.hpp"

#include "beatnik/app/problem.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/comm/halo/registry.hpp"

namespace beatnik::app {

std::string step_graph_unavailable(const RunConfig& c, int ranks, comm::TransportKind transport) {
  if (c.space != exec::Space::Device) return "a host run (-x host) launches no kernels";
  if (ranks != 1)
    return "it captures the step of one rank on one GPU, and this run has " + std::to_string(ranks) +
           " ranks (MPI waits and transfers sit between the kernels there)";
  if (c.model.order != model::Order::Low)
    return "it covers the low-order step only (-O low): medium and high order wait for the BR solver's "
           "host-side work inside the step";
  if (c.skeleton) return "--skeleton stands in for the kernels with host-timed spins";
  if (!c.options.trace.empty() || !c.options.trace_goal.empty())
    return "--trace and --trace-goal time the phases inside the step on the host, which a graph launch skips";
  if (transport == comm::TransportKind::Nccl) return "the NCCL transport's exchanges are not captured";
  if (comm::halo::find_strategy(c.model.halo_strategy, transport).device_direct)
    return "halo strategy " + c.model.halo_strategy + " orders itself with interprocess events";
  return {};
}

StepGraph::StepGraph(Timers& timers, comm::CommStats& stats, bool required)
    : timers_(timers), stats_(stats), required_(required) {}

void StepGraph::run(const std::function<void()>& body, double key) {
  if (!active()) return body();
  if (work_.captured() && have_key_ && key == key_) {
    work_.launch();
    // What the step's host code counted during the capture, once per launch.
    for (const auto& [name, d] : comm_delta_) stats_.add(name, d);
    for (const auto& [name, calls] : timer_calls_) timers_.add(name, 0.0, calls);
    return;
  }
  const auto comm_before = stats_.stats();
  const auto timers_before = timers_.stats();
  timers_.set_count_only(true);
  const std::string why = work_.capture(body);
  timers_.set_count_only(false);
  ++captures_;
  if (!why.empty()) {
    // Nothing ran: drop what the capture counted, then step with plain launches.
    stats_.set_stats(comm_before);
    timers_.set_stats(timers_before);
    if (required_)
      throw NotAvailable("--gpu-graph on: the step could not be captured as a CUDA graph: " + why +
                  " (--gpu-graph auto falls back to plain launches)");
    fallback_ = why;
    return body();
  }
  have_key_ = true;
  key_ = key;
  comm_delta_.clear();
  for (const auto& [name, after] : stats_.stats()) {
    comm::PatternStats d = after;
    if (auto it = comm_before.find(name); it != comm_before.end()) {
      d.calls -= it->second.calls;
      for (int l = 0; l < 3; ++l) d.messages[l] -= it->second.messages[l], d.bytes[l] -= it->second.bytes[l];
    }
    comm_delta_[name] = d;
  }
  timer_calls_.clear();
  for (const auto& [name, after] : timers_.stats()) {
    auto it = timers_before.find(name);
    const long calls = after.calls - (it == timers_before.end() ? 0 : it->second.calls);
    if (calls > 0) timer_calls_[name] = calls;
  }
  // The capture counted this step already; now its work runs.
  work_.launch();
}

}  // namespace beatnik::app
