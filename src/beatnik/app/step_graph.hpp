#pragma once
// --gpu-graph (docs/gpu-small.md): the RK step of a one-rank, one-GPU, low-order run captured
// once as a CUDA graph (exec/graph.hpp) and launched as one unit every step after, instead of
// ~50 kernel launches and cuFFT calls. The same kernels in the same order: results are bitwise
// those of plain launches. Host bookkeeping inside the step does not run on a launch, so the
// capture's counts are replayed: CommStats records (bytes and messages per pattern) and timer
// call counts. Timer regions inside the step report calls but no time under a graph; the
// "step" region around the launch keeps its device (or host) time.
#include <functional>
#include <map>
#include <string>

#include "beatnik/base/timers.hpp"
#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/exec/graph.hpp"

namespace beatnik::app {

struct RunConfig;

// Why the step cannot be captured in this run ("" when it can): several ranks, a host run,
// medium or high order, --skeleton, --trace, the NCCL transport, a device-direct halo strategy.
std::string step_graph_unavailable(const RunConfig& config, int ranks, comm::TransportKind transport);

class StepGraph {
 public:
  // required (--gpu-graph on): a failed capture throws NotAvailable (exit 2); otherwise (auto)
  // the run falls back to plain launches for good and fallback() says why.
  StepGraph(Timers& timers, comm::CommStats& stats, bool required);

  // The stream the step's work runs on while the graph is in use (set it around the step).
  void* stream() const { return work_.stream(); }
  // True until a capture has failed (auto).
  bool active() const { return fallback_.empty(); }
  const std::string& fallback() const { return fallback_; }
  long captures() const { return captures_; }

  // One step: captured on the first call (and again when `key`, e.g. dt, changes), then
  // launched; after a failed capture under auto, `body` runs plainly.
  void run(const std::function<void()>& body, double key);

 private:
  Timers& timers_;
  comm::CommStats& stats_;
  bool required_;
  exec::CapturedWork work_;
  bool have_key_ = false;
  double key_ = 0;
  long captures_ = 0;
  std::string fallback_;
  std::map<std::string, long> timer_calls_;              // per step, counted during capture
  std::map<std::string, comm::PatternStats> comm_delta_;  // per step, counted during capture
};

}  // namespace beatnik::app
