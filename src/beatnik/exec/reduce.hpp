#pragma once
// Reductions over an index range (sum, max), host or device. Not for the hot path of a step:
// checksums, diagnostics and tests use them.
#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/parallel_for.hpp"

namespace beatnik::exec {

#if defined(BEATNIK_DEVICE_COMPILE)
namespace detail {
__device__ inline void atomic_max_double(double* p, double v) {
  unsigned long long* a = reinterpret_cast<unsigned long long*>(p);
  unsigned long long old = *a;
  while (__longlong_as_double(static_cast<long long>(old)) < v) {
    const unsigned long long prev =
        atomicCAS(a, old, static_cast<unsigned long long>(__double_as_longlong(v)));
    if (prev == old) break;
    old = prev;
  }
}
template <bool IsMax, class F>
__global__ void reduce_kernel(long n, F f, double* out) {
  __shared__ double s[256];
  double acc = IsMax ? -1.0 / 0.0 : 0.0;
  for (long k = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const double v = f(k);
    acc = IsMax ? (v > acc || v != v ? v : acc) : acc + v;
  }
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      const double o = s[threadIdx.x + w];
      s[threadIdx.x] = IsMax ? (o > s[threadIdx.x] || o != o ? o : s[threadIdx.x]) : s[threadIdx.x] + o;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if (IsMax)
      atomic_max_double(out, s[0]);
    else
      atomicAdd(out, s[0]);
  }
}
template <bool IsMax, class F>
double device_reduce(long n, F f) {
  Buffer<double> d(Space::Device, 1);
  const double init = IsMax ? -1.0 / 0.0 : 0.0;
  copy(d.data(), Space::Device, &init, Space::Host, 1);
  const long blocks = (n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024;
  reduce_kernel<IsMax><<<static_cast<unsigned>(blocks), 256, 0, stream()>>>(n, f, d.data());
  check_launch("reduce");
  double r = 0;
  copy(&r, Space::Host, d.data(), Space::Device, 1);
  return r;
}
}  // namespace detail
#endif

// Sum of f(k) for k in [0, n).
template <class F>
double reduce_sum(Space s, long n, F f) {
  if (n <= 0) return 0.0;
  if (s == Space::Host) {
    double acc = 0.0;
#pragma omp parallel for reduction(+ : acc) schedule(static)
    for (long k = 0; k < n; ++k) acc += f(k);
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
