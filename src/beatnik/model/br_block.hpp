#pragma once
// One block of the exact Birkhoff–Rott sum: all owned targets of this rank (a range of them)
// against one rank's sources, with every periodic image. Host (OpenMP + SIMD, cache-tiled)
// and device (CUDA, shared-memory tiles, FP64) versions of the same arithmetic.
#include "beatnik/model/br_kernel.hpp"

namespace beatnik::model {

// Block layouts (structure of arrays): targets [x | y | z] with nt entries each; sources
// [x | y | z | qx | qy | qz] with ns entries each (q = weighted ω, see br_kernel.hpp);
// accumulators [ux | uy | uz] with nt entries each (added to, never overwritten).
struct BRBlockArgs {
  const double* targets = nullptr;
  long nt = 0;
  long t0 = 0, t1 = 0;  // target range to compute
  const double* sources = nullptr;
  long ns = 0;
  BRImages images;
  double eps = 0.0;
  double* acc = nullptr;
  // Device only: scratch of kBRMaxSplits·3·nt doubles in device memory. With it, a block with
  // few targets is also split over the sources (partial sums, then a fixed-order reduction:
  // deterministic), so that small meshes still fill the GPU. Null: no split.
  double* partial = nullptr;
};

inline constexpr int kBRMaxSplits = 32;

void br_block_host(const BRBlockArgs& a);

// The host's inner loop, shared by the exact and tree solvers: one target (tx, ty, tz) against
// sources [k0, k1) of the SoA arrays (xs, ys, zs, qx, qy, qz), each source moved by
// image_centre(t − s, L, h) (per dimension, L = period, h = centring half; h = 0: no centring)
// plus (ox, oy); the sums are added to u[0..2], by the kernel cpuid chose (br_host_kernel.hpp).
void br_tile_host(double tx, double ty, double tz, const double* xs, const double* ys, const double* zs,
                  const double* qx, const double* qy, const double* qz, long k0, long k1, double ox, double oy,
                  double L0, double h0, double L1, double h1, double eps, double* u);
// Queues the block on the device (asynchronous); throws NotAvailable without the CUDA build.
void br_block_device(const BRBlockArgs& a);

}  // namespace beatnik::model
