#pragma once
// Batched in-place 1D complex FFTs on this rank's memory: FFTW on the host, cuFFT on the device.
// Plans are made once and reused for every call.
#include <memory>
#include <string>

#include "beatnik/base/complex.hpp"
#include "beatnik/exec/space.hpp"

namespace beatnik::fft {

enum class PlanEffort { Estimate, Measure, Patient };
const char* to_string(PlanEffort e);

// `howmany` transforms of length n; element k of transform b is at data[b*dist + k*stride].
struct BatchShape {
  int n = 0;
  int howmany = 0;
  long stride = 1;
  long dist = 0;
};

class LocalFFT {
 public:
  virtual ~LocalFFT() = default;
  virtual void forward(cplx* data) = 0;  // unnormalised, kernel e^{-2 pi i ...}
  virtual void inverse(cplx* data) = 0;  // unnormalised, kernel e^{+2 pi i ...}
  virtual std::string library() const = 0;
};

// `scratch` must be an array of the shape's size in the same space (planning may overwrite it).
std::unique_ptr<LocalFFT> make_local_fft(exec::Space space, const BatchShape& shape, cplx* scratch,
                                         PlanEffort effort);

// Real-to-complex transforms of two real fields stored as one complex array (field 1 in the real
// parts, field 2 in the imaginary parts), and the complex-to-real inverse of one field.
// `howmany` lines of length n. Full side: element k of line b is cplx element
// b*full_dist + k*full_stride. Half side (n/2 + 1 complex values, the Hermitian half): element k
// of line b of field f is at f*field + b*half_dist + k*half_stride.
struct RealBatchShape {
  int n = 0;
  int howmany = 0;
  long full_stride = 1, full_dist = 0;
  long half_stride = 1, half_dist = 0;
  long field = 0;
};

class LocalRealFFT {
 public:
  virtual ~LocalRealFFT() = default;
  // half(field 1) = FFT(Re full), half(field 2) = FFT(Im full) on the half lines (unnormalised,
  // kernel e^{-2 pi i ...}).
  virtual void forward(const cplx* full, cplx* half) = 0;
  // Re full = IFFT of the Hermitian line whose half is half(field 1) (unnormalised, e^{+2 pi i
  // ...}); the imaginary parts of `full` are left as they were, half(field 1) is overwritten.
  virtual void inverse(cplx* half, cplx* full) = 0;
};

// `full` and `half` are the arrays the transforms will run on (planning may overwrite them).
std::unique_ptr<LocalRealFFT> make_local_real_fft(exec::Space space, const RealBatchShape& shape, cplx* full,
                                                  cplx* half, PlanEffort effort);

}  // namespace beatnik::fft
