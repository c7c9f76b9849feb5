#pragma once
// A CUDA graph of the device work a host function queues (--gpu-graph, docs/gpu-small.md):
// captured once on a stream of its own, then launched as one unit. A launch runs the kernels,
// cuFFT calls and their arguments exactly as captured, in the same order; the function's host
// code does not run again (its bookkeeping is the caller's to replay: app/step_graph.hpp).
#include <functional>
#include <string>

namespace beatnik::exec {

class CapturedWork {
 public:
  // Makes the stream (blocking: ordered with stream 0 as plain launches are). NotAvailable in
  // a build without CUDA.
  CapturedWork();
  ~CapturedWork();
  CapturedWork(const CapturedWork&) = delete;
  CapturedWork& operator=(const CapturedWork&) = delete;

  // The stream (a cudaStream_t) the graph is captured on and launched on.
  void* stream() const { return stream_; }

  // Runs `body` with this stream as the work stream (exec/stream.hpp) under a thread-local
  // capture and instantiates the graph of what it queued; none of that work runs yet. Returns
  // "" on success, else why it failed (an exception from `body`, or an operation a capture cannot
  // hold: a synchronous copy, a fence, work on stream 0); then nothing is kept and the CUDA
  // error it left is cleared. A previous graph is dropped first.
  std::string capture(const std::function<void()>& body);
  bool captured() const { return exec_ != nullptr; }
  // Queues the captured work once on stream(); the host does not wait.
  void launch();

 private:
  void drop();
  void* stream_ = nullptr;  // cudaStream_t
  void* graph_ = nullptr;   // cudaGraph_t
  void* exec_ = nullptr;    // cudaGraphExec_t
};

}  // namespace beatnik::exec
