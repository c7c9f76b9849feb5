// FFTW backend of LocalC2R (local_c2r.hpp); make_c2r_2d hands the device to cuFFT.
#include <fftw3.h>

#include <mutex>
#include <string>

#include "beatnik/base/error.hpp"
#include "beatnik/fft/fftw_plan_pair.hpp"
#include "beatnik/fft/local_c2r.hpp"

namespace beatnik::fft {

namespace {
// Owns one complex-to-real plan made under fftw_planner_lock() (null: FFTW could not plan it).
class FftwC2R final : public LocalC2R {
 public:
  FftwC2R(fftw_plan plan, const std::string& what) : plan_(plan) {
    if (!plan_) throw Error("FFTW could not plan " + what);
  }
  ~FftwC2R() override {
    std::lock_guard<std::mutex> g(fftw_planner_lock());
    fftw_destroy_plan(plan_);
  }
  void run() override { fftw_execute(plan_); }

 private:
  fftw_plan plan_ = nullptr;
};

class NoLines final : public LocalC2R {
 public:
  void run() override {}
};
}  // namespace

std::unique_ptr<LocalC2R> make_fftw_c2r(const C2RShape& s, cplx* in, double* out, PlanEffort effort) {
  if (s.howmany == 0 || s.n == 0) return std::make_unique<NoLines>();
  int n[1] = {s.n};
  std::lock_guard<std::mutex> g(fftw_planner_lock());
  fftw_plan p = fftw_plan_many_dft_c2r(1, n, s.howmany, reinterpret_cast<fftw_complex*>(in), nullptr,
                                       static_cast<int>(s.istride), static_cast<int>(s.idist), out, nullptr,
                                       static_cast<int>(s.ostride), static_cast<int>(s.odist), fftw_flags(effort));
  return std::make_unique<FftwC2R>(p, "a batch of length-" + std::to_string(s.n) + " complex-to-real transforms");
}

std::unique_ptr<LocalC2R> make_cufft_c2r_2d(int n0, int n1, cplx* in, double* out);  // local_fft_cufft.cpp

std::unique_ptr<LocalC2R> make_c2r_2d(exec::Space space, int n0, int n1, cplx* in, double* out, PlanEffort effort) {
  if (space != exec::Space::Host) return make_cufft_c2r_2d(n0, n1, in, out);
  std::lock_guard<std::mutex> g(fftw_planner_lock());
  fftw_plan p = fftw_plan_dft_c2r_2d(n0, n1, reinterpret_cast<fftw_complex*>(in), out, fftw_flags(effort));
  return std::make_unique<FftwC2R>(p, "a " + std::to_string(n0) + "x" + std::to_string(n1) + " complex-to-real transform");
}

}  // namespace beatnik::fft
