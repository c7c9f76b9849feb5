#pragma once
// The sequence of reshapes and local transforms of one distributed 2D FFT, as plain data: which
// boxes each reshape moves between (in which group of ranks), the work-array layouts on both
// sides, and the batched 1D transform shapes. No MPI: DistributedFFT instantiates a plan for its
// rank, and the same plan gives the bytes a candidate process grid would move (--ranks-grid auto,
// tests), so the byte count and the code that moves the bytes cannot drift apart.
//
// The plan uses the caller's layout. If the blocks already hold whole lines of a dimension
// (every block spans all j: a P×1 grid, or all i: a 1×P grid, or one rank) that dimension is
// transformed first, in place, and the reshape that would have built those lines is not made:
// a slab plan then needs one reshape each way instead of two, and none on one rank. The pencil
// plan transforms first along the dimension whose group of ranks is smaller, so the exchange it
// makes twice (there and back) is the cheaper one; in a group of one it is a local pass.
#include <array>
#include <vector>

#include "beatnik/base/box.hpp"
#include "beatnik/fft/fft_options.hpp"
#include "beatnik/fft/local_fft.hpp"

namespace beatnik::fft {

// The ranks a reshape exchanges among: every rank, the process-grid column of this rank (ranks
// with the same j-range, i.e. the same grid coordinate 1), or its row (same coordinate 0).
enum class PlanGroup { All, Column, Row };

struct PlanStep {
  bool is_fft = false;
  // The first transform of the half-spectrum plan, real to complex: the complex transform
  // `shape` of the full lines (laid out as from_layout in the work array) and the split of the
  // result into the Hermitian halves of its real and imaginary parts' transforms (to_layout in the
  // half array, two fields). Inverse: the Hermitian line rebuilt from the first field's half, the
  // complex inverse, the real part (complex to real).
  bool is_real_fft = false;
  // Runs on the half array after the real transform: forward on two fields (the transforms of
  // the real and the imaginary part of the input), inverse on the first field only.
  bool half = false;
  // Bytes per element a reshape carries forward and in the inverse (the inverse's last reshape,
  // the first step, carries only the real part; half-spectrum reshapes carry two fields forward).
  long forward_elem_bytes = 16, inverse_elem_bytes = 16;
  // Reshape: boxes of the group's ranks in group order, and this rank's work-array layouts.
  PlanGroup group = PlanGroup::All;
  std::vector<Box2> from, to;
  ArrayLayout2 from_layout, to_layout;  // the first step's from_layout is the caller's block
  // No element changes rank: every rank of the group keeps its box (or the group is one rank).
  // Done on this rank alone (a direct pass, or nothing when the layouts agree).
  bool local = false;
  // Transform
  BatchShape shape;
};

struct FftPlan {
  std::vector<PlanStep> steps;  // forward order; the inverse runs them backwards
  ArrayLayout2 spectral;        // where the spectrum lies in the work array (half array if half)
  int first_dim = 0;            // the dimension transformed first (0: x, 1: y)
  // Half spectrum (FftOptions::half_spectrum): the first dimension is transformed real to
  // complex, and every later step works on the Hermitian half, indices [0, n/2 + 1) of it.
  bool half = false;
  std::array<int, 2> spectral_global{0, 0};  // the index space of the spectrum
};

// The plan of `rank` of a procs[0]×procs[1] grid whose rank r owns blocks[r] (grid coordinates
// (r / procs[1], r % procs[1])).
FftPlan make_fft_plan(std::array<int, 2> global, std::array<int, 2> procs, const std::vector<Box2>& blocks,
                      const FftOptions& options, int rank);

// Global rank of member k of `rank`'s group.
int plan_group_member(PlanGroup g, std::array<int, 2> procs, int rank, int k);
// Position of `rank` in its group.
int plan_group_index(PlanGroup g, std::array<int, 2> procs, int rank);

// Bytes one Riesz application (a forward transform and an inverse one whose last reshape carries
// only the real part; steps' element sizes) sends from `rank` to other ranks, without padding.
long plan_bytes_to_others(const FftPlan& plan, std::array<int, 2> procs, int rank);

// Reshapes that cross ranks (the non-local steps) in one transform.
int plan_exchanges(const FftPlan& plan);

// One Riesz application's bytes over all ranks, and the busiest rank's, for a process grid.
struct PlanCost {
  long total = 0, busiest = 0;
  int exchanges = 0;
};
PlanCost plan_cost(std::array<int, 2> global, std::array<int, 2> procs, const FftOptions& options);

}  // namespace beatnik::fft
