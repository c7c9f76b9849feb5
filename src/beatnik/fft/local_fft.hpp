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

}  // namespace beatnik::fft
