#pragma once
// The benchmark's element functions: the FFT reads this rank's block from `in` and writes the
// inverse into `out` (both j-fastest over `mine`, in the FFT's memory space). Kept apart so that
// only this file is compiled by nvcc in the CUDA build.
#include "beatnik/base/box.hpp"
#include "beatnik/base/complex.hpp"
#include "beatnik/fft/distributed_fft.hpp"

namespace beatnik::bench {

void forward_from_block(fft::DistributedFFT& f, const cplx* in, const Box2& mine);
void inverse_to_block(fft::DistributedFFT& f, cplx* out, const Box2& mine);

}  // namespace beatnik::bench
