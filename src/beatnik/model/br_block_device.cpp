// Device version of the Birkhoff–Rott block: one thread per target, the sources staged
// through shared memory tile by tile (each source is read from global memory once per thread
// block, then by every thread from shared memory). FP64 throughout. Compiled by nvcc in the
// CUDA build (BEATNIK_KERNEL_SOURCES); the host build gets a stub.
#include <algorithm>

#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/model/br_block.hpp"

namespace beatnik::model {

#if defined(BEATNIK_DEVICE_COMPILE)
namespace {

constexpr int kThreads = 128;  // targets per thread block = sources per shared-memory tile

// blockIdx.x: tile of targets; blockIdx.y: part of the sources (gridDim.y parts). With one
// part the sums go straight into acc; with several, into partial[part][c][t].
// C: images per dimension known at compile time (1: free, 3: the usual 3x3 block, so the
// image loops unroll into independent chains), 0: read from a.images.
template <int C>
__global__ void __launch_bounds__(kThreads) br_block_kernel(BRBlockArgs a) {
  __shared__ double s[6][kThreads];
  const long nt = a.nt, ns_all = a.ns;
  const long s0 = ns_all * blockIdx.y / gridDim.y, s1 = ns_all * (blockIdx.y + 1) / gridDim.y;
  const long ns = s1 - s0;
  const double* src = a.sources + s0;
  const long t = a.t0 + static_cast<long>(blockIdx.x) * kThreads + threadIdx.x;
  const bool active = t < a.t1;
  const double tx = active ? a.targets[t] : 0.0;
  const double ty = active ? a.targets[nt + t] : 0.0;
  const double tz = active ? a.targets[2 * nt + t] : 0.0;
  const BRImages img = a.images;
  const int cx = C > 0 ? C : img.count(0), cy = C > 0 ? C : img.count(1);
  const double L0 = img.period[0], L1 = img.period[1];
  const double h0 = img.centring_half(0), h1 = img.centring_half(1);
  double ux = 0.0, uy = 0.0, uz = 0.0;
  for (long k0 = 0; k0 < ns; k0 += kThreads) {
    const long k = k0 + threadIdx.x;
    if (k < ns)
      for (int c = 0; c < 6; ++c) s[c][threadIdx.x] = src[c * ns_all + k];
    __syncthreads();
    const int m = static_cast<int>(ns - k0 < kThreads ? ns - k0 : kThreads);
    if (active) {
      for (int q = 0; q < m; ++q) {
        const double sx = s[0][q], sy = s[1][q], sz = s[2][q];
        const double qx = s[3][q], qy = s[4][q], qz = s[5][q];
        const double cxo = sx + image_centre(tx - sx, L0, h0), cyo = sy + image_centre(ty - sy, L1, h1);
        // br_pair with the per-source parts hoisted out of the image loops.
        const double rz = tz - sz, rz2 = rz * rz + a.eps;
        const double qyrz = qy * rz, qxrz = qx * rz;
#pragma unroll
        for (int ia = 0; ia < (C > 0 ? C : cx); ++ia) {
          const double rx = tx - (cxo + img.offset(0, ia));
          const double rx2 = rx * rx + rz2, qzrx = qz * rx, qyrx = qy * rx;
#pragma unroll
          for (int ib = 0; ib < (C > 0 ? C : cy); ++ib) {
            const double ry = ty - (cyo + img.offset(1, ib));
            const double y = rsqrt(ry * ry + rx2);
            const double f = y * y * y;
            ux += (qyrz - qz * ry) * f;
            uy += (qzrx - qxrz) * f;
            uz += (qx * ry - qyrx) * f;
          }
        }
      }
    }
    __syncthreads();
  }
  if (!active) return;
  if (gridDim.y == 1) {
    a.acc[t] += ux;
    a.acc[nt + t] += uy;
    a.acc[2 * nt + t] += uz;
  } else {
    double* p = a.partial + blockIdx.y * 3 * nt;
    p[t] = ux;
    p[nt + t] = uy;
    p[2 * nt + t] = uz;
  }
}

// acc += Σ_parts partial, in part order (deterministic).
__global__ void br_reduce_kernel(BRBlockArgs a, int parts) {
  const long t = a.t0 + static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= a.t1) return;
  const long nt = a.nt;
  for (int c = 0; c < 3; ++c) {
    double v = 0.0;
    for (int q = 0; q < parts; ++q) v += a.partial[(q * 3 + c) * nt + t];
    a.acc[c * nt + t] += v;
  }
}

int multiprocessors() {
  static const int n = [] {
    int dev = 0, v = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev);
    return v > 0 ? v : 1;
  }();
  return n;
}

}  // namespace

void br_block_device(const BRBlockArgs& a) {
  const long n = a.t1 - a.t0;
  if (n <= 0) return;
  const long tiles = (n + kThreads - 1) / kThreads;
  // Enough thread blocks for ~8 per multiprocessor, each part keeping at least one tile.
  long parts = 1;
  if (a.partial) {
    const long want = (8L * multiprocessors() + tiles - 1) / tiles;
    parts = std::max(1L, std::min({want, long(kBRMaxSplits), a.ns / kThreads}));
  }
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(parts));
  const int cx = a.images.count(0), cy = a.images.count(1);
  if (cx == 1 && cy == 1) br_block_kernel<1><<<grid, kThreads, 0, exec::detail::stream()>>>(a);
  else if (cx == 3 && cy == 3) br_block_kernel<3><<<grid, kThreads, 0, exec::detail::stream()>>>(a);
  else br_block_kernel<0><<<grid, kThreads, 0, exec::detail::stream()>>>(a);
  exec::detail::check_launch("Birkhoff-Rott block kernel");
  if (parts > 1) {
    br_reduce_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, exec::detail::stream()>>>(a, static_cast<int>(parts));
    exec::detail::check_launch("Birkhoff-Rott partial-sum reduction");
  }
}
#else
void br_block_device(const BRBlockArgs&) { exec::no_device_backend("Birkhoff-Rott block"); }
#endif

}  // namespace beatnik::model
