// FFTW backend of LocalFFT (host memory).
#include <fftw3.h>

#include <mutex>

#include "beatnik/base/error.hpp"
#include "beatnik/fft/local_fft.hpp"
#include "beatnik/fft/fftw_plan_pair.hpp"

namespace beatnik::fft {

// FFTW's planner is not thread-safe; plans are made rarely, so one lock is enough.
std::mutex& fftw_planner_lock() {
  static std::mutex m;
  return m;
}

unsigned fftw_flags(PlanEffort effort) {
  return effort == PlanEffort::Estimate  ? FFTW_ESTIMATE
         : effort == PlanEffort::Measure ? FFTW_MEASURE
                                         : FFTW_PATIENT;
}

namespace {

class FftwBatch final : public FftwPlanPair {
 public:
  FftwBatch(const BatchShape& s, cplx* scratch, PlanEffort effort) {
    const unsigned flags = fftw_flags(effort);
    int n[1] = {s.n};
    auto* a = reinterpret_cast<fftw_complex*>(scratch);
    const int stride = static_cast<int>(s.stride), dist = static_cast<int>(s.dist);
    std::lock_guard<std::mutex> g(fftw_planner_lock());
    fwd_ = fftw_plan_many_dft(1, n, s.howmany, a, nullptr, stride, dist, a, nullptr, stride, dist, FFTW_FORWARD, flags);
    inv_ = fftw_plan_many_dft(1, n, s.howmany, a, nullptr, stride, dist, a, nullptr, stride, dist, FFTW_BACKWARD, flags);
    if (!fwd_ || !inv_) throw Error("FFTW could not plan a batch of length-" + std::to_string(s.n) + " transforms");
  }
  std::string library() const override { return fftw_version; }
};

// No transforms on this rank (an empty slab): nothing to do.
class EmptyBatch final : public LocalFFT {
 public:
  void forward(cplx*) override {}
  void inverse(cplx*) override {}
  std::string library() const override { return "none"; }
};

}  // namespace

std::unique_ptr<LocalFFT> make_cufft_batch(const BatchShape& s);  // local_fft_cufft.cpp

const char* to_string(PlanEffort e) {
  switch (e) {
    case PlanEffort::Estimate: return "estimate";
    case PlanEffort::Measure: return "measure";
    case PlanEffort::Patient: return "patient";
  }
  return "?";
}

std::unique_ptr<LocalFFT> make_local_fft(exec::Space space, const BatchShape& s, cplx* scratch,
                                         PlanEffort effort) {
  if (s.howmany == 0 || s.n == 0) return std::make_unique<EmptyBatch>();
  if (space == exec::Space::Device) return make_cufft_batch(s);
  return std::make_unique<FftwBatch>(s, scratch, effort);
}

}  // namespace beatnik::fft
