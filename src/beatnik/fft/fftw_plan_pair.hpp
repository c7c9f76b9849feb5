#pragma once
// A forward and a backward FFTW plan run in place: what the host's 1-D batches
// (local_fft_fftw.cpp) and its 2-D transform (local_fft_2d.cpp) have in common.
#include <fftw3.h>

#include <mutex>

#include "beatnik/fft/local_fft.hpp"

namespace beatnik::fft {

// FFTW's planner is not thread-safe: every FFTW plan is made and destroyed under this lock.
std::mutex& fftw_planner_lock();

unsigned fftw_flags(PlanEffort effort);

class FftwPlanPair : public LocalFFT {
 public:
  // Also runs when a derived constructor throws: whichever plan was made is destroyed.
  ~FftwPlanPair() override {
    std::lock_guard<std::mutex> g(fftw_planner_lock());
    if (fwd_) fftw_destroy_plan(fwd_);
    if (inv_) fftw_destroy_plan(inv_);
  }
  void forward(cplx* d) override { run(fwd_, d); }
  void inverse(cplx* d) override { run(inv_, d); }

 protected:
  // Set by the derived constructor, under fftw_planner_lock().
  fftw_plan fwd_ = nullptr, inv_ = nullptr;

 private:
  static void run(fftw_plan p, cplx* d) {
    auto* a = reinterpret_cast<fftw_complex*>(d);
    fftw_execute_dft(p, a, a);
  }
};

}  // namespace beatnik::fft
