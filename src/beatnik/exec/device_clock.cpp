#include "beatnik/exec/device_clock.hpp"

#include <string>
#include <vector>

#include "beatnik/base/error.hpp"
#include "beatnik/exec/cuda_check.hpp"
#include "beatnik/exec/stream.hpp"

#if defined(BEATNIK_WITH_CUDA)
#include <cuda_runtime.h>
#endif

namespace beatnik::exec {

#if defined(BEATNIK_WITH_CUDA)
namespace {

class CudaEventClock final : public DeviceClock {
 public:
  ~CudaEventClock() override {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  int record() override {
    if (next_ == events_.size()) {
      cudaEvent_t e;
      cuda_check(cudaEventCreate(&e), "cudaEventCreate");
      events_.push_back(e);
    }
    // The work stream (stream 0 unless a graph's step runs): behind every kernel queued so far.
    cuda_check(cudaEventRecord(events_[next_], static_cast<cudaStream_t>(work_stream())), "cudaEventRecord");
    return static_cast<int>(next_++);
  }
  double seconds_between(int a, int b) override {
    cuda_check(cudaEventSynchronize(events_[b]), "cudaEventSynchronize");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, events_[a], events_[b]), "cudaEventElapsedTime");
    return ms * 1e-3;
  }
  void recycle() override { next_ = 0; }

 private:
  std::vector<cudaEvent_t> events_;
  std::size_t next_ = 0;
};
}  // namespace

std::unique_ptr<DeviceClock> make_cuda_event_clock() { return std::make_unique<CudaEventClock>(); }
#else
std::unique_ptr<DeviceClock> make_cuda_event_clock() {
  throw NotAvailable("CUDA event timers: this beatnik was built without the CUDA backend");
}
#endif

}  // namespace beatnik::exec
