#pragma once
// Riesz transform of the vorticity amplitude: reisz = R1·w1 + R2·w2, with R_j the multiplier
// −i·k_j/|k| (k = 0 and an even N's Nyquist index mapped to zero; MODEL.md §6.4).
//
// Both real inputs travel as one complex array C = w1 + i·w2, and one inverse transform gives
// the answer: Re IFFT[(m1 − i·m2)·Ĉ] = R1·w1 + R2·w2 because each R_j maps real to real.
// That is one forward and one inverse distributed FFT per evaluation instead of three.
#include <cmath>
#include <memory>

#include "beatnik/base/compute_gate.hpp"
#include "beatnik/fft/distributed_fft.hpp"
#include "beatnik/mesh/field.hpp"
#include "beatnik/mesh/surface_mesh.hpp"

namespace beatnik::model {

// Signed integer wavenumber of spectral index p for N points, Nyquist mapped to 0.
BEATNIK_HOST_DEVICE inline int wave_index(int p, int n) {
  return 2 * p < n ? p : (2 * p > n ? p - n : 0);
}

// The full spectrum's multiplier (m1 − i·m2)/(NxNy) = −(k2 + i·k1)/(|k|·NxNy) applied to the
// value c at spectral index (p, q).
struct FullMultiplier {
  double kx, ky, norm;
  int nx, ny;
  BEATNIK_HOST_DEVICE cplx operator()(int p, int q, cplx c) const {
    const double k1 = kx * wave_index(p, nx), k2 = ky * wave_index(q, ny);
    const double kk = std::sqrt(k1 * k1 + k2 * k2);
    if (kk == 0.0) return cplx{0.0, 0.0};
    const double f = -norm / kk;
    return c * cplx{f * k2, f * k1};
  }
};

class RieszTransform {
 public:
  RieszTransform(const mesh::SurfaceMesh& mesh, exec::Space space, const fft::FftOptions& options,
                 comm::CommStats* stats, Timers* timers, const ComputeGate* gate = nullptr);

  // out(0, i, j) = (R·w)(i, j) on owned nodes; w1, w2 are components c1, c2 of `in`.
  void apply(const mesh::Field& in, int c1, int c2, const mesh::Field& out);

  const fft::DistributedFFT& fft() const { return *fft_; }

 private:
  const mesh::SurfaceMesh& mesh_;
  exec::Space space_;
  Timers* timers_;
  const ComputeGate* gate_;
  std::unique_ptr<fft::DistributedFFT> fft_;
  double k_scale_[2];  // 2π / period of the node set, per dimension
};

}  // namespace beatnik::model
