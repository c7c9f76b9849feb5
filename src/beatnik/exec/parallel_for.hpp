#pragma once
// Kernels written once: a lambda over an index range, run by OpenMP on the host or as a CUDA
// kernel on the device. Device lambdas must be marked BEATNIK_HOST_DEVICE, and the
// translation unit must be compiled by nvcc in the CUDA build (see CMakeLists.txt).
#include "beatnik/base/error.hpp"
#include "beatnik/exec/macros.hpp"
#include "beatnik/exec/space.hpp"
#include "beatnik/exec/stream.hpp"

namespace beatnik::exec {

// Rectangle of (i, j) with i in [i0, i1), j in [j0, j1).
struct Range2 {
  int i0, i1, j0, j1;
  long count() const { return (i1 > i0 && j1 > j0) ? long(i1 - i0) * (j1 - j0) : 0; }
};

#if defined(BEATNIK_DEVICE_COMPILE)
namespace detail {
template <class F>
__global__ void kernel_1d(long n, F f) {
  const long k = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) f(k);
}
template <class F>
__global__ void kernel_2d(Range2 r, F f) {
  // j is the fast (contiguous) index of our field layout: map it to threadIdx.x.
  const int j = r.j0 + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int i = r.i0 + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i < r.i1 && j < r.j1) f(i, j);
}
void check_launch(const char* what);
// The work stream (exec/stream.hpp) as the CUDA type.
inline cudaStream_t stream() { return static_cast<cudaStream_t>(work_stream()); }
}  // namespace detail
#endif

[[noreturn]] void no_device_backend(const char* what);

template <class F>
void parallel_for(Space s, long n, F f) {
  if (n <= 0) return;
  if (s == Space::Host) {
#pragma omp parallel
    {
      const F g = f;  // see below
#pragma omp for schedule(static)
      for (long k = 0; k < n; ++k) g(k);
    }
    return;
  }
#if defined(BEATNIK_DEVICE_COMPILE)
  const int block = 256;
  detail::kernel_1d<<<static_cast<unsigned>((n + block - 1) / block), block, 0, detail::stream()>>>(n, f);
  detail::check_launch("parallel_for(1d)");
#else
  no_device_backend("parallel_for");
#endif
}

template <class F>
void parallel_for(Space s, Range2 r, F f) {
  if (r.count() == 0) return;
  if (s == Space::Host) {
#pragma omp parallel
    {
      // Each thread's own copy of the kernel: OpenMP shares `f` through a pointer, and the
      // kernel's stores through its double pointers might alias that shared copy's members, so
      // the compiler would reload every captured value after each store. A local copy whose
      // address never escapes keeps them in registers.
      const F g = f;
#pragma omp for schedule(static)
      for (int i = r.i0; i < r.i1; ++i)
        for (int j = r.j0; j < r.j1; ++j) g(i, j);
    }
    return;
  }
#if defined(BEATNIK_DEVICE_COMPILE)
  const dim3 block(64, 4);
  const dim3 grid(static_cast<unsigned>((r.j1 - r.j0 + block.x - 1) / block.x),
                  static_cast<unsigned>((r.i1 - r.i0 + block.y - 1) / block.y));
  detail::kernel_2d<<<grid, block, 0, detail::stream()>>>(r, f);
  detail::check_launch("parallel_for(2d)");
#else
  no_device_backend("parallel_for");
#endif
}

// Atomic minimum on an int that kernels can call on host and device.
BEATNIK_HOST_DEVICE inline void atomic_min(long long* p, long long v) {
#if defined(__CUDA_ARCH__)
  atomicMin(p, v);
#else
  long long cur = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
#endif
}

}  // namespace beatnik::exec
