#pragma once
// One in-place 2-D complex transform of a whole n0 × n1 array (element (a, b) at a*n1 + b): cuFFT
// on the device, FFTW on the host. DistributedFFT uses it instead of two batched 1-D passes when
// FftOptions::plan_2d is set and the whole array is on one rank (docs/gpu-small.md): cuFFT's 2-D
// plan beats a contiguous pass plus a strided one, most at awkward lengths such as 4864.
#include <memory>

#include "beatnik/fft/local_fft.hpp"

namespace beatnik::fft {

// `scratch` holds n0*n1 elements in the same space (FFTW's planner may overwrite it).
std::unique_ptr<LocalFFT> make_local_fft_2d(exec::Space space, int n0, int n1, cplx* scratch, PlanEffort effort);

}  // namespace beatnik::fft
