// FFTW backend of LocalC2R (local_c2r.hpp).
#include <fftw3.h>

#include <mutex>
#include <string>

#include "beatnik/base/error.hpp"
#include "beatnik/fft/fftw_plan_pair.hpp"
#include "beatnik/fft/local_c2r.hpp"

namespace beatnik::fft {

namespace {
class FftwC2R final : public LocalC2R {
 public:
  FftwC2R(const C2RShape& s, cplx* in, double* out, PlanEffort effort) {
    int n[1] = {s.n};
    std::lock_guard<std::mutex> g(fftw_planner_lock());
    plan_ = fftw_plan_many_dft_c2r(1, n, s.howmany, reinterpret_cast<fftw_complex*>(in), nullptr,
                                   static_cast<int>(s.istride), static_cast<int>(s.idist), out, nullptr,
                                   static_cast<int>(s.ostride), static_cast<int>(s.odist), fftw_flags(effort));
    if (!plan_) throw Error("FFTW could not plan a batch of length-" + std::to_string(s.n) + " complex-to-real transforms");
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
  return std::make_unique<FftwC2R>(s, in, out, effort);
}

}  // namespace beatnik::fft
