#pragma once
// The device pair loops' reciprocal square roots (tree_sums_device.cpp, tree_edge_device.cpp),
// from the hardware estimate of d^(−1/2) without the library rsqrt's branch to its slow path for
// zero, subnormal, inf or NaN d: that branch ends a basic block per pair, so the next pairs'
// loads and arithmetic cannot start before it. d = |r|² + ε is normal (the sums' padding's
// ≈ 3e200 too); where it is not (NaN or inf positions; d = 0 with ε = 0) the pair is NaN either way.
#if defined(__CUDACC__)
namespace beatnik::model::tree {

// The hardware estimate y of d^(−1/2) (|1 − d·y²| ≤ 2^−19.07 as measured on an H200).
__device__ inline double rsqrt_estimate(double d) {
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(d));
  return y;
}

// rsqrt(d) for a normal positive d: the library's estimate and refinement step, so its bits
// (TreeDevice.BranchFreeRsqrtHasTheLibrarysBits).
__device__ inline double rsqrt_normal(double d) {
  const double y = rsqrt_estimate(d);
  const double e = fma(d, -(y * y), 1.0);
  return fma(fma(e, 0.375, 0.5), y * e, y);
}

// d^(−3/2) for a normal positive d in one step from the estimate y: y³·(1 + 3/2·e + 15/8·e²)
// with e = 1 − d·y² (the series of (1 − e)^(−3/2); with |e| ≤ 2^−19.07 the next term, 35/16·e³,
// is below 2^−55). 6 FP64 operations where rsqrt_normal and y·y·y take 7, and closer: within
// 1.005 ulps of d^(−3/2) over 2^−600 … 2^600 against 3.36 for rsqrt_normal(d)³ (test
// TreeDevice.OneStepCubedRsqrtIsWithinTwoUlps).
__device__ inline double rsqrt_cubed(double d) {
  const double y = rsqrt_estimate(d);
  const double y2 = y * y, e = fma(d, -y2, 1.0), y3 = y2 * y;
  return fma(y3, e * fma(e, 1.875, 1.5), y3);
}

}  // namespace beatnik::model::tree
#endif
