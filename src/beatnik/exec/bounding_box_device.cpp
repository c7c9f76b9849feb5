// Device bounding box: a grid-stride pass where each thread block reduces its points to six
// numbers in shared memory, then one block reduces the per-block results; min and max do not
// depend on the order, so the result is exact and deterministic. Compiled by nvcc in the CUDA
// build (BEATNIK_KERNEL_SOURCES); the host build's stub is in bounding_box.cpp.
#include "beatnik/exec/bounding_box.hpp"
#include "beatnik/exec/parallel_for.hpp"

#if defined(BEATNIK_DEVICE_COMPILE)
namespace beatnik::exec {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;

// Block-wide reduction of v[0..2] (min) and v[3..5] (max, stored negated so one min does all).
__device__ void block_min6(double v[6], double (*s)[kThreads]) {
  for (int c = 0; c < 6; ++c) s[c][threadIdx.x] = v[c];
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w)
      for (int c = 0; c < 6; ++c) s[c][threadIdx.x] = fmin(s[c][threadIdx.x], s[c][threadIdx.x + w]);
    __syncthreads();
  }
  for (int c = 0; c < 6; ++c) v[c] = s[c][0];
}

__global__ void __launch_bounds__(kThreads) box_blocks(const double* x, const double* y, const double* z, long n,
                                                        double* partial) {
  __shared__ double s[6][kThreads];
  const double inf = 1.0 / 0.0;
  double v[6] = {inf, inf, inf, inf, inf, inf};
  for (long k = static_cast<long>(blockIdx.x) * kThreads + threadIdx.x; k < n;
       k += static_cast<long>(gridDim.x) * kThreads) {
    v[0] = fmin(v[0], x[k]), v[1] = fmin(v[1], y[k]), v[2] = fmin(v[2], z[k]);
    v[3] = fmin(v[3], -x[k]), v[4] = fmin(v[4], -y[k]), v[5] = fmin(v[5], -z[k]);
  }
  block_min6(v, s);
  if (threadIdx.x == 0)
    for (int c = 0; c < 6; ++c) partial[c * gridDim.x + blockIdx.x] = v[c];
}

__global__ void __launch_bounds__(kThreads) box_final(const double* partial, int blocks, double* out) {
  __shared__ double s[6][kThreads];
  const double inf = 1.0 / 0.0;
  double v[6] = {inf, inf, inf, inf, inf, inf};
  for (int b = threadIdx.x; b < blocks; b += kThreads)
    for (int c = 0; c < 6; ++c) v[c] = fmin(v[c], partial[c * blocks + b]);
  block_min6(v, s);
  if (threadIdx.x == 0)
    for (int c = 0; c < 6; ++c) out[c] = v[c];
}

}  // namespace

void BoundingBox::compute_device(const double* x, const double* y, const double* z, long n, double lo[3],
                                 double hi[3]) {
  const long want = (n + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(want < 1 ? 1 : (want > kMaxBlocks ? kMaxBlocks : want));
  grow(partial_, Space::Device, std::size_t(6) * (kMaxBlocks + 1));
  double* partial = partial_.data();
  double* out = partial + 6 * kMaxBlocks;
  box_blocks<<<blocks, kThreads, 0, detail::stream()>>>(x, y, z, n, partial);
  detail::check_launch("bounding box (blocks)");
  box_final<<<1, kThreads, 0, detail::stream()>>>(partial, blocks, out);
  detail::check_launch("bounding box (final)");
  double r[6];
  copy(r, Space::Host, out, Space::Device, 6);
  for (int d = 0; d < 3; ++d) lo[d] = r[d], hi[d] = -r[3 + d];
}

}  // namespace beatnik::exec
#endif
