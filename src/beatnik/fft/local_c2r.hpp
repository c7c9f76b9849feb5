#pragma once
// Complex-to-real batch of Hermitian half lines on the host (FFTW): the half-spectrum plan's
// last inverse transform. Each of `howmany` lines of n reals is computed from its n/2 + 1
// half-spectrum values, half the work of the complex inverse of the rebuilt whole line. The
// plan is bound to the arrays it was made for; their contents are overwritten (input too).
#include <memory>

#include "beatnik/base/complex.hpp"
#include "beatnik/exec/space.hpp"
#include "beatnik/fft/local_fft.hpp"

namespace beatnik::fft {

struct C2RShape {
  int n = 0, howmany = 0;
  long istride = 1, idist = 0;  // in complex elements
  long ostride = 1, odist = 0;  // in doubles
};

class LocalC2R {
 public:
  virtual ~LocalC2R() = default;
  virtual void run() = 0;  // unnormalised, kernel e^{+2 pi i ...}
};

std::unique_ptr<LocalC2R> make_fftw_c2r(const C2RShape& shape, cplx* in, double* out, PlanEffort effort);

// One 2-D complex-to-real transform of a whole n0 × n1 array: `in` holds the n0 × (n1/2 + 1)
// Hermitian half (element (a, b) at a*(n1/2 + 1) + b), `out` the n0 × n1 reals (a*n1 + b).
// FFTW on the host, cuFFT on the device; `in` is overwritten.
std::unique_ptr<LocalC2R> make_c2r_2d(exec::Space space, int n0, int n1, cplx* in, double* out, PlanEffort effort);

}  // namespace beatnik::fft
