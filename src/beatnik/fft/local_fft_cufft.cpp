// cuFFT backends of LocalFFT and of the 2-D LocalC2R (device memory). Built only with the CUDA
// backend; otherwise asking for them says so.
#include <memory>
#include <string>

#include "beatnik/base/error.hpp"
#include "beatnik/exec/stream.hpp"
#include "beatnik/fft/local_c2r.hpp"
#include "beatnik/fft/local_fft.hpp"

#if defined(BEATNIK_WITH_CUDA)
#include <cufft.h>
#endif

namespace beatnik::fft {

#if defined(BEATNIK_WITH_CUDA)
namespace {
void check(cufftResult r, const char* what) {
  if (r != CUFFT_SUCCESS) throw Error(std::string("cuFFT error ") + std::to_string(int(r)) + " in " + what);
}
// A cuFFT plan that runs on the kernels' stream (exec/stream.hpp): stream 0, or a graph's step
// stream. Owns the handle.
class StreamPlan {
 public:
  explicit StreamPlan(cufftHandle plan) : plan_(plan) {}
  ~StreamPlan() { cufftDestroy(plan_); }
  StreamPlan(const StreamPlan&) = delete;
  StreamPlan& operator=(const StreamPlan&) = delete;
  cufftHandle on_work_stream() {
    void* s = exec::work_stream();
    if (s != stream_) {
      check(cufftSetStream(plan_, static_cast<cudaStream_t>(s)), "cufftSetStream");
      stream_ = s;
    }
    return plan_;
  }

 private:
  cufftHandle plan_ = 0;
  void* stream_ = nullptr;  // a new plan runs on stream 0
};

// One cuFFT Z2Z plan run in place (a batch of 1-D transforms or one 2-D transform).
class CufftPlan final : public LocalFFT {
 public:
  CufftPlan(cufftHandle plan, const char* what) : plan_(plan), what_(what) {}
  void forward(cplx* d) override {
    auto* a = reinterpret_cast<cufftDoubleComplex*>(d);
    check(cufftExecZ2Z(plan_.on_work_stream(), a, a, CUFFT_FORWARD), "cufftExecZ2Z");
  }
  void inverse(cplx* d) override {
    auto* a = reinterpret_cast<cufftDoubleComplex*>(d);
    check(cufftExecZ2Z(plan_.on_work_stream(), a, a, CUFFT_INVERSE), "cufftExecZ2Z");
  }
  std::string library() const override {
    int v = 0;
    cufftGetVersion(&v);
    return "cuFFT " + std::to_string(v) + what_;
  }

 private:
  StreamPlan plan_;
  const char* what_;
};

// One 2-D Z2D plan, out of place between the arrays it was made for (local_c2r.hpp).
class CufftC2R2D final : public LocalC2R {
 public:
  CufftC2R2D(cufftHandle plan, cplx* in, double* out)
      : plan_(plan), in_(reinterpret_cast<cufftDoubleComplex*>(in)), out_(out) {}
  void run() override { check(cufftExecZ2D(plan_.on_work_stream(), in_, out_), "cufftExecZ2D"); }

 private:
  StreamPlan plan_;
  cufftDoubleComplex* in_;
  double* out_;
};
}  // namespace

std::unique_ptr<LocalFFT> make_cufft_batch(const BatchShape& s) {
  int n[1] = {s.n};
  int embed[1] = {s.n};
  const int stride = static_cast<int>(s.stride), dist = static_cast<int>(s.dist);
  cufftHandle plan = 0;
  check(cufftPlanMany(&plan, 1, n, embed, stride, dist, embed, stride, dist, CUFFT_Z2Z, s.howmany), "cufftPlanMany");
  return std::make_unique<CufftPlan>(plan, "");
}

std::unique_ptr<LocalFFT> make_cufft_2d(int n0, int n1) {
  cufftHandle plan = 0;
  check(cufftPlan2d(&plan, n0, n1, CUFFT_Z2Z), "cufftPlan2d");
  return std::make_unique<CufftPlan>(plan, " (2-D plan)");
}

std::unique_ptr<LocalC2R> make_cufft_c2r_2d(int n0, int n1, cplx* in, double* out) {
  cufftHandle plan = 0;
  check(cufftPlan2d(&plan, n0, n1, CUFFT_Z2D), "cufftPlan2d (Z2D)");
  return std::make_unique<CufftC2R2D>(plan, in, out);
}
#else
std::unique_ptr<LocalFFT> make_cufft_batch(const BatchShape&) {
  throw NotAvailable("cuFFT: this beatnik was built without the CUDA backend");
}
std::unique_ptr<LocalFFT> make_cufft_2d(int, int) {
  throw NotAvailable("cuFFT: this beatnik was built without the CUDA backend");
}
std::unique_ptr<LocalC2R> make_cufft_c2r_2d(int, int, cplx*, double*) {
  throw NotAvailable("cuFFT: this beatnik was built without the CUDA backend");
}
#endif

}  // namespace beatnik::fft
