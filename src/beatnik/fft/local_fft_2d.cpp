// 2-D transforms of a whole array on one rank (local_fft_2d.hpp): FFTW here on the host, cuFFT
// on the device (make_cufft_2d, local_fft_cufft.cpp).
#include "beatnik/fft/local_fft_2d.hpp"

#include <string>

#include "beatnik/base/error.hpp"
#include "beatnik/fft/fftw_plan_pair.hpp"

namespace beatnik::fft {
namespace {

class Fftw2D final : public FftwPlanPair {
 public:
  Fftw2D(int n0, int n1, cplx* scratch, PlanEffort effort) {
    const unsigned flags = fftw_flags(effort);
    auto* a = reinterpret_cast<fftw_complex*>(scratch);
    std::lock_guard<std::mutex> g(fftw_planner_lock());
    fwd_ = fftw_plan_dft_2d(n0, n1, a, a, FFTW_FORWARD, flags);
    inv_ = fftw_plan_dft_2d(n0, n1, a, a, FFTW_BACKWARD, flags);
    if (!fwd_ || !inv_)
      throw Error("FFTW could not plan a " + std::to_string(n0) + "x" + std::to_string(n1) + " 2-D transform");
  }
  std::string library() const override { return std::string(fftw_version) + " (2-D plan)"; }
};

}  // namespace

std::unique_ptr<LocalFFT> make_cufft_2d(int n0, int n1);  // local_fft_cufft.cpp

std::unique_ptr<LocalFFT> make_local_fft_2d(exec::Space space, int n0, int n1, cplx* scratch, PlanEffort effort) {
  if (space == exec::Space::Host) return std::make_unique<Fftw2D>(n0, n1, scratch, effort);
  return make_cufft_2d(n0, n1);
}

}  // namespace beatnik::fft
