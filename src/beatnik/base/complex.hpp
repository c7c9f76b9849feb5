#pragma once
// Plain double-complex value, layout-compatible with fftw_complex and cufftDoubleComplex, and
// usable in kernels on host and device.
#include "beatnik/exec/macros.hpp"

namespace beatnik {

struct cplx {
  double re, im;
};

BEATNIK_HOST_DEVICE inline cplx operator*(cplx a, cplx b) {
  return cplx{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

}  // namespace beatnik
