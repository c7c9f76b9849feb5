#include "beatnik/exec/graph.hpp"

#include <exception>

#include "beatnik/base/error.hpp"
#include "beatnik/exec/stream.hpp"

#if defined(BEATNIK_WITH_CUDA)
#include <cuda_runtime.h>
#endif

namespace beatnik::exec {

#if defined(BEATNIK_WITH_CUDA)
namespace {
std::string why(const char* what, cudaError_t e) { return std::string(what) + ": " + cudaGetErrorString(e); }
}  // namespace

CapturedWork::CapturedWork() {
  cudaStream_t s;
  // Default flags: a blocking stream, so the synchronous copies and fences outside the graph
  // (on stream 0) stay ordered with it, as with plain launches.
  if (const cudaError_t e = cudaStreamCreate(&s); e != cudaSuccess) throw Error(why("cudaStreamCreate", e));
  stream_ = s;
}

CapturedWork::~CapturedWork() {
  drop();
  if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

void CapturedWork::drop() {
  if (exec_) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec_));
  if (graph_) cudaGraphDestroy(static_cast<cudaGraph_t>(graph_));
  exec_ = graph_ = nullptr;
}

std::string CapturedWork::capture(const std::function<void()>& body) {
  drop();
  const auto s = static_cast<cudaStream_t>(stream_);
  // Thread-local: an operation of this thread that a capture cannot hold fails (and ends the
  // capture) instead of running outside the graph.
  if (const cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal); e != cudaSuccess) {
    cudaGetLastError();
    return why("cudaStreamBeginCapture", e);
  }
  std::string failed;
  try {
    WorkStreamScope on(stream_);
    body();
  } catch (const std::exception& x) {
    failed = x.what();
  }
  cudaGraph_t g = nullptr;
  const cudaError_t end = cudaStreamEndCapture(s, &g);
  if (failed.empty() && end != cudaSuccess) failed = why("cudaStreamEndCapture", end);
  cudaGraphExec_t x = nullptr;
  if (failed.empty()) {
    if (const cudaError_t e = cudaGraphInstantiate(&x, g, 0); e != cudaSuccess) failed = why("cudaGraphInstantiate", e);
  }
  if (!failed.empty()) {
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();  // capture errors are not sticky: clear the one left behind
    return failed;
  }
  graph_ = g;
  exec_ = x;
  return {};
}

void CapturedWork::launch() {
  if (!exec_) throw Error("CUDA graph: launched before a successful capture");
  if (const cudaError_t e = cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec_), static_cast<cudaStream_t>(stream_));
      e != cudaSuccess)
    throw Error(why("cudaGraphLaunch", e));
}
#else
CapturedWork::CapturedWork() { throw NotAvailable("CUDA graphs: this beatnik was built without the CUDA backend"); }
CapturedWork::~CapturedWork() = default;
void CapturedWork::drop() {}
std::string CapturedWork::capture(const std::function<void()>&) { return "built without CUDA"; }
void CapturedWork::launch() { throw NotAvailable("CUDA graphs: this beatnik was built without the CUDA backend"); }
#endif

}  // namespace beatnik::exec
