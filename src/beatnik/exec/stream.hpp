#pragma once
// The CUDA stream that every kernel, cuFFT call, CUB call and device timestamp of this process
// is queued on, as a cudaStream_t held in a void* (host code needs no CUDA header). Null, the
// default, is the legacy default stream 0: every plain run uses it. A CUDA graph of the step
// (exec/graph.hpp, --gpu-graph) sets a stream of its own for the step, since stream 0 cannot be
// captured; that stream is a blocking one, so it keeps stream 0's ordering with the synchronous
// copies and fences outside the step.
namespace beatnik::exec {

void* work_stream();

// Sets the work stream for its lifetime, then puts the previous one back.
class WorkStreamScope {
 public:
  explicit WorkStreamScope(void* stream);
  ~WorkStreamScope();
  WorkStreamScope(const WorkStreamScope&) = delete;
  WorkStreamScope& operator=(const WorkStreamScope&) = delete;

 private:
  void* previous_;
};

}  // namespace beatnik::exec
