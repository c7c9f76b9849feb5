// 2-D transforms of a whole array on one rank (local_fft_2d.hpp): FFTW on the host, cuFFT on the
// device when built with CUDA.
#include "beatnik/fft/local_fft_2d.hpp"

#include <fftw3.h>

#include <string>

#include "beatnik/base/error.hpp"

#if defined(BEATNIK_WITH_CUDA)
#include <cufft.h>
#endif

namespace beatnik::fft {
namespace {

class Fftw2D final : public LocalFFT {
 public:
  Fftw2D(int n0, int n1, cplx* scratch, PlanEffort effort) {
    const unsigned flags = effort == PlanEffort::Estimate  ? FFTW_ESTIMATE
                           : effort == PlanEffort::Measure ? FFTW_MEASURE
                                                           : FFTW_PATIENT;
    auto* a = reinterpret_cast<fftw_complex*>(scratch);
    std::lock_guard<std::mutex> g(fftw_planner_lock());
    fwd_ = fftw_plan_dft_2d(n0, n1, a, a, FFTW_FORWARD, flags);
    inv_ = fftw_plan_dft_2d(n0, n1, a, a, FFTW_BACKWARD, flags);
    if (!fwd_ || !inv_)
      throw Error("FFTW could not plan a " + std::to_string(n0) + "x" + std::to_string(n1) + " 2-D transform");
  }
  ~Fftw2D() override {
    std::lock_guard<std::mutex> g(fftw_planner_lock());
    fftw_destroy_plan(fwd_);
    fftw_destroy_plan(inv_);
  }
  void forward(cplx* d) override {
    auto* a = reinterpret_cast<fftw_complex*>(d);
    fftw_execute_dft(fwd_, a, a);
  }
  void inverse(cplx* d) override {
    auto* a = reinterpret_cast<fftw_complex*>(d);
    fftw_execute_dft(inv_, a, a);
  }
  std::string library() const override { return std::string(fftw_version) + " (2-D plan)"; }

 private:
  fftw_plan fwd_ = nullptr, inv_ = nullptr;
};

#if defined(BEATNIK_WITH_CUDA)
void check(cufftResult r, const char* what) {
  if (r != CUFFT_SUCCESS) throw Error(std::string("cuFFT error ") + std::to_string(int(r)) + " in " + what);
}
class Cufft2D final : public LocalFFT {
 public:
  Cufft2D(int n0, int n1) { check(cufftPlan2d(&plan_, n0, n1, CUFFT_Z2Z), "cufftPlan2d"); }
  ~Cufft2D() override { cufftDestroy(plan_); }
  void forward(cplx* d) override {
    auto* a = reinterpret_cast<cufftDoubleComplex*>(d);
    check(cufftExecZ2Z(plan_, a, a, CUFFT_FORWARD), "cufftExecZ2Z (2-D)");
  }
  void inverse(cplx* d) override {
    auto* a = reinterpret_cast<cufftDoubleComplex*>(d);
    check(cufftExecZ2Z(plan_, a, a, CUFFT_INVERSE), "cufftExecZ2Z (2-D)");
  }
  std::string library() const override {
    int v = 0;
    cufftGetVersion(&v);
    return "cuFFT " + std::to_string(v) + " (2-D plan)";
  }

 private:
  cufftHandle plan_ = 0;
};
#endif

}  // namespace

std::unique_ptr<LocalFFT> make_local_fft_2d(exec::Space space, int n0, int n1, cplx* scratch, PlanEffort effort) {
  if (space == exec::Space::Host) return std::make_unique<Fftw2D>(n0, n1, scratch, effort);
#if defined(BEATNIK_WITH_CUDA)
  return std::make_unique<Cufft2D>(n0, n1);
#else
  throw NotAvailable("cuFFT: this beatnik was built without the CUDA backend");
#endif
}

}  // namespace beatnik::fft
