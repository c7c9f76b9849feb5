// FFTW backend of LocalFFT (host memory).
#include <fftw3.h>

#include <mutex>

#include "beatnik/base/error.hpp"
#include "beatnik/fft/local_fft.hpp"
#include "beatnik/fft/local_fft_2d.hpp"

namespace beatnik::fft {
namespace {

// FFTW's planner is not thread-safe; plans are made rarely, so one lock is enough.
std::mutex& planner_lock() {
  static std::mutex m;
  return m;
}

class FftwBatch final : public LocalFFT {
 public:
  FftwBatch(const BatchShape& s, cplx* scratch, PlanEffort effort) {
    unsigned flags = effort == PlanEffort::Estimate  ? FFTW_ESTIMATE
                     : effort == PlanEffort::Measure ? FFTW_MEASURE
                                                     : FFTW_PATIENT;
    int n[1] = {s.n};
    auto* a = reinterpret_cast<fftw_complex*>(scratch);
    std::lock_guard<std::mutex> g(planner_lock());
    fwd_ = fftw_plan_many_dft(1, n, s.howmany, a, nullptr, static_cast<int>(s.stride),
                              static_cast<int>(s.dist), a, nullptr, static_cast<int>(s.stride),
                              static_cast<int>(s.dist), FFTW_FORWARD, flags);
    inv_ = fftw_plan_many_dft(1, n, s.howmany, a, nullptr, static_cast<int>(s.stride),
                              static_cast<int>(s.dist), a, nullptr, static_cast<int>(s.stride),
                              static_cast<int>(s.dist), FFTW_BACKWARD, flags);
    if (!fwd_ || !inv_) throw Error("FFTW could not plan a batch of length-" + std::to_string(s.n) + " transforms");
  }
  ~FftwBatch() override {
    std::lock_guard<std::mutex> g(planner_lock());
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
  std::string library() const override { return fftw_version; }

 private:
  fftw_plan fwd_ = nullptr, inv_ = nullptr;
};

// No transforms on this rank (an empty slab): nothing to do.
class EmptyBatch final : public LocalFFT {
 public:
  void forward(cplx*) override {}
  void inverse(cplx*) override {}
  std::string library() const override { return "none"; }
};

}  // namespace

std::mutex& fftw_planner_lock() { return planner_lock(); }  // local_fft_2d.hpp

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
