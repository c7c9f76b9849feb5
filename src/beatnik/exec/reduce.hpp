#pragma once
// Reductions over an index range (sum, max), host or device. Not for the hot path of a step:
// checksums, diagnostics and tests use them.
#include <algorithm>

#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/parallel_for.hpp"

namespace beatnik::exec {

#if defined(BEATNIK_DEVICE_COMPILE)
namespace detail {
// Two passes, no floating-point atomics, so the result is bitwise the same run to run: each
// block reduces a grid-strided share into its own slot (the block count depends on n alone), then
// one block reduces the slots in a fixed order. A NaN anywhere wins the maximum.
constexpr int kReduceThreads = 256;
constexpr long kReduceBlocks = 1024;

template <bool IsMax>
__device__ inline double reduce_op(double acc, double v) {
  if (!IsMax) return acc + v;
  if (acc != acc) return acc;
  return v > acc || v != v ? v : acc;
}

template <bool IsMax>
__device__ inline double reduce_block(double acc, double* s) {
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] = reduce_op<IsMax>(s[threadIdx.x], s[threadIdx.x + w]);
    __syncthreads();
  }
  return s[0];
}

template <bool IsMax, class F>
__global__ void reduce_kernel(long n, F f, double* part) {
  __shared__ double s[kReduceThreads];
  double acc = IsMax ? -1.0 / 0.0 : 0.0;
  for (long k = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<long>(gridDim.x) * blockDim.x)
    acc = reduce_op<IsMax>(acc, f(k));
  const double r = reduce_block<IsMax>(acc, s);
  if (threadIdx.x == 0) part[blockIdx.x] = r;
}

template <bool IsMax>
__global__ void reduce_parts_kernel(long nparts, double* part) {
  __shared__ double s[kReduceThreads];
  double acc = IsMax ? -1.0 / 0.0 : 0.0;
  for (long k = threadIdx.x; k < nparts; k += blockDim.x) acc = reduce_op<IsMax>(acc, part[k]);
  const double r = reduce_block<IsMax>(acc, s);
  if (threadIdx.x == 0) part[0] = r;
}

template <bool IsMax, class F>
double device_reduce(long n, F f) {
  const long blocks = std::min((n + kReduceThreads - 1) / kReduceThreads, kReduceBlocks);
  Buffer<double> part(Space::Device, static_cast<std::size_t>(blocks));
  reduce_kernel<IsMax><<<static_cast<unsigned>(blocks), kReduceThreads, 0, stream()>>>(n, f, part.data());
  check_launch("reduce");
  reduce_parts_kernel<IsMax><<<1, kReduceThreads, 0, stream()>>>(blocks, part.data());
  check_launch("reduce (block partials)");
  double r = 0;
  copy(&r, Space::Host, part.data(), Space::Device, 1);
  return r;
}
}  // namespace detail
#endif

// Sum of f(k) for k in [0, n).
template <class F>
double reduce_sum(Space s, long n, F f) {
  if (n <= 0) return 0.0;
  if (s == Space::Host) {
    // Fixed chunks summed in order (an OpenMP reduction combines the threads' sums in the
    // order they finish): the same bits on any thread count, run to run.
    constexpr long kChunks = 256;
    double part[kChunks];
    const long chunk = (n + kChunks - 1) / kChunks;
#pragma omp parallel for schedule(static)
    for (long c = 0; c < kChunks; ++c) {
      double acc = 0.0;
      for (long k = c * chunk, e = std::min(n, k + chunk); k < e; ++k) acc += f(k);
      part[c] = acc;
    }
    double acc = 0.0;
    for (long c = 0; c < kChunks; ++c) acc += part[c];
    return acc;
  }
#if defined(BEATNIK_DEVICE_COMPILE)
  return detail::device_reduce<false>(n, f);
#else
  no_device_backend("reduce_sum");
#endif
}

// Maximum of f(k) for k in [0, n); NaN wins (so a NaN anywhere is visible).
template <class F>
double reduce_max(Space s, long n, F f) {
  if (n <= 0) return -1.0 / 0.0;
  if (s == Space::Host) {
    double acc = -1.0 / 0.0;
    bool nan = false;
#pragma omp parallel for reduction(max : acc) reduction(|| : nan) schedule(static)
    for (long k = 0; k < n; ++k) {
      const double v = f(k);
      if (v != v) nan = true;
      else if (v > acc) acc = v;
    }
    return nan ? 0.0 / 0.0 : acc;
  }
#if defined(BEATNIK_DEVICE_COMPILE)
  return detail::device_reduce<true>(n, f);
#else
  no_device_backend("reduce_max");
#endif
}

}  // namespace beatnik::exec
