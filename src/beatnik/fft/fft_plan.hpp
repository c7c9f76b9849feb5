#pragma once
// The distributed FFT's schedule, pure (no MPI): which reshapes between which box layouts, on
// which communicator, and which batched 1D transforms, in forward order. DistributedFFT builds
// itself from it, and the dry run (app/dry_run.hpp) counts the reshapes' messages from it.
#include <array>
#include <vector>

#include "beatnik/base/box.hpp"
#include "beatnik/fft/fft_options.hpp"
#include "beatnik/fft/local_fft.hpp"

namespace beatnik::fft {

// The communicator of a reshape: all grid ranks, or the pencil column (the Px ranks sharing
// this rank's j-range, ordered by i) or row (the Py sharing its i-range, ordered by j).
enum class PlanGroup { Grid, Column, Row };

struct PlanStep {
  bool is_fft = false;
  BatchShape shape{};                   // transform
  PlanGroup group = PlanGroup::Grid;    // reshape: its communicator
  std::vector<Box2> from, to;           // reshape: one box per rank of that communicator
  ArrayLayout2 from_layout, to_layout;  // reshape: this rank's work-array layouts
};

struct FftPlan {
  std::vector<PlanStep> steps;
  ArrayLayout2 spectral;
};

// Grid rank `rank`'s schedule; `blocks`: the owned box of every grid rank. Reshapes that move
// nothing and keep the layout are left out (all but the first, which builds the input).
FftPlan plan_fft(std::array<int, 2> global, std::array<int, 2> procs, const std::vector<Box2>& blocks,
                 const FftOptions& options, int rank);

// The grid ranks of `rank`'s communicator of `group`, in that communicator's rank order.
std::vector<int> plan_group_members(PlanGroup group, std::array<int, 2> procs, int rank);

}  // namespace beatnik::fft
