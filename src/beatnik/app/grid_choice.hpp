#pragma once
// --ranks-grid auto: the process grid (and, unless --fft-intermediate names one, the FFT
// intermediate) whose Riesz transform moves the fewest bytes between ranks, counted from the
// FFT plan itself (fft::plan_cost), with the reason printed in the banner.
#include <array>
#include <string>

#include "beatnik/fft/fft_options.hpp"

namespace beatnik::app {

struct GridChoice {
  std::array<int, 2> procs{1, 1};
  fft::Intermediate intermediate = fft::Intermediate::Slab;
  long bytes = 0;          // one Riesz transform (forward + inverse), all ranks, to other ranks
  long runner_up_bytes = -1;  // the best other grid's (else the other intermediate's; -1: none)
  std::string reason;      // one line for the banner and the results file
};

// Every PxQ = ranks with nodes[d] >= 2 procs[d]; both intermediates when choose_intermediate,
// else options.intermediate only. Order: fewest bytes, then fewest exchanges per transform, then
// fewest bytes on the busiest rank, then larger P (the blocks are y-lines). Throws InputError
// when no grid fits the mesh.
GridChoice choose_grid(std::array<int, 2> nodes, int ranks, const fft::FftOptions& options,
                       bool choose_intermediate);

}  // namespace beatnik::app
