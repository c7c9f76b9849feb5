#pragma once
// How the distributed FFT is carried out: a small value type that prints itself.
#include <string>
#include <vector>

#include "beatnik/comm/redistributor.hpp"
#include "beatnik/fft/local_fft.hpp"

namespace beatnik::fft {

enum class Intermediate { Slab, Pencil };

// The inverse of the 2-D plan when only the real part of the result is wanted (the Riesz
// transform): the full complex inverse, or complex-to-real from the Hermitian half of the last
// dimension (half the bytes and flops); auto times both when the plan is made.
enum class Inverse2D { Auto, C2C, C2R };

struct FftOptions {
  comm::ExchangeAlgorithm algorithm = comm::ExchangeAlgorithm::Alltoallv;
  // slab: lines spread over all ranks (global exchanges); pencil: lines within process-grid rows
  // and columns (exchanges in sub-communicators, one more reshape).
  Intermediate intermediate = Intermediate::Slab;
  // true: each line is made contiguous while unpacking, so local FFTs run on contiguous data;
  // false: data keep the block's memory order and the x transforms are strided.
  bool reorder = true;
  // true: the spectrum is returned in the caller's block layout (one more reshape each way);
  // false: it stays in the last intermediate layout (enough for pointwise multipliers).
  bool spectrum_in_input_layout = false;
  PlanEffort effort = PlanEffort::Measure;
  // true: the input's real and imaginary parts are two real fields, transformed real-to-complex
  // along the first dimension into two Hermitian half spectra; the inverse is complex-to-real and
  // gives a real field (DistributedFFT::inverse_real only). Half the inverse's bytes and flops.
  // false: one complex 2D transform of the full spectrum. The program uses true (--fft-transform).
  bool half_spectrum = false;
  // true: when the whole array is on this rank and both passes run on it in place, one 2-D
  // transform replaces the two batched 1-D passes (--fft-2d; local_fft_2d.hpp).
  bool plan_2d = false;
  // With plan_2d in use: how inverse_real_from_half() may run (--fft-2d-inverse).
  Inverse2D inverse_2d = Inverse2D::Auto;

  std::string describe() const;
  // The reference's -H 0..7: bit 4 = all-to-all (set: alltoallv, clear: p2p, as Cabana maps it
  // onto heFFTe), 2 = pencils, 1 = reorder; the spectral layout is left as it is (docs/fft.md).
  static FftOptions from_reference_code(int h);
  // Every intermediate x reorder x spectrum layout for each of `algorithms` (8 plans each).
  static std::vector<FftOptions> every_combination(const std::vector<comm::ExchangeAlgorithm>& algorithms,
                                                   PlanEffort effort);
};

}  // namespace beatnik::fft
