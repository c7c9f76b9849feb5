// Device version of the cutoff Birkhoff–Rott sum: one thread per sorted position (cell order),
// so the threads of a warp mostly share a cell and read the same candidate sources, which the
// caches then serve once per warp; FP64 throughout. No shared-memory tiles: the threads of a
// block span several cells with different candidate ranges. The distance tests round every
// step (no fused multiply-add: nvcc contracts by default), so they give exactly the host's r²
// and float32 distance, and host and device accept the same pairs. Compiled by nvcc in the
// CUDA build (BEATNIK_KERNEL_SOURCES); the host build gets a stub.
#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/model/br_cutoff_block.hpp"

namespace beatnik::model {

#if defined(BEATNIK_DEVICE_COMPILE)
namespace {

constexpr int kThreads = 128;

template <bool F32>
__global__ void __launch_bounds__(kThreads) br_cutoff_kernel(BRCutoffArgs a) {
  const long ns = a.ns, nt = a.nt;
  const long p = static_cast<long>(blockIdx.x) * kThreads + threadIdx.x;
  const double *xs = a.sources, *ys = xs + ns, *zs = ys + ns, *qxs = zs + ns, *qys = qxs + ns, *qzs = qys + ns;
  unsigned long long cnt = 0;
  const long i = p < ns ? a.order[p] : nt;
  if (i < nt) {
    const double tx = xs[p], ty = ys[p], tz = zs[p];
    const float ftx = __double2float_rn(tx), fty = __double2float_rn(ty), ftz = __double2float_rn(tz);
    const double c2 = __dmul_rn(a.cutoff, a.cutoff), eps = a.eps;
    const float cf = __double2float_rn(a.cutoff);
    double ux = 0.0, uy = 0.0, uz = 0.0;
    detail::br_cutoff_visit(a.grid, a.cell_start, tx, ty, tz, detail::br_cutoff_reach(a.cutoff, tx, ty, tz),
                            [&](long b, long e) {
      for (long k = b; k < e; ++k) {
        const double sx = __ldg(xs + k), sy = __ldg(ys + k), sz = __ldg(zs + k);
        const double rx = tx - sx, ry = ty - sy, rz = tz - sz;
        const double r2 = __dadd_rn(__dadd_rn(__dmul_rn(rx, rx), __dmul_rn(ry, ry)), __dmul_rn(rz, rz));
        bool in;
        if constexpr (F32) {
          const float fx = __fsub_rn(ftx, __double2float_rn(sx)), fy = __fsub_rn(fty, __double2float_rn(sy)),
                      fz = __fsub_rn(ftz, __double2float_rn(sz));
          in = __fsqrt_rn(__fadd_rn(__fadd_rn(__fmul_rn(fx, fx), __fmul_rn(fy, fy)), __fmul_rn(fz, fz))) <= cf;
        } else {
          in = r2 <= c2;
        }
        const double d = __dadd_rn(r2, eps);
        if (!in) continue;
        ++cnt;
        if (d > 0.0) {  // br_pair with rsqrt (as br_kernel.hpp on the device); d = 0 adds nothing
          const double qx = __ldg(qxs + k), qy = __ldg(qys + k), qz = __ldg(qzs + k);
          const double y = rsqrt(d);
          const double f = y * y * y;
          ux += (qy * rz - qz * ry) * f;
          uy += (qz * rx - qx * rz) * f;
          uz += (qx * ry - qy * rx) * f;
        }
      }
    });
    a.acc[i] = ux;
    a.acc[nt + i] = uy;
    a.acc[2 * nt + i] = uz;
  }
  if (a.pairs) {  // one atomic per warp (every lane of the warp reaches this point)
    for (int o = 16; o > 0; o /= 2) cnt += __shfl_down_sync(0xffffffffu, cnt, o);
    if ((threadIdx.x & 31) == 0 && cnt) atomicAdd(a.pairs, cnt);
  }
}

}  // namespace

void br_cutoff_device(const BRCutoffArgs& a) {
  if (a.ns <= 0) return;
  const unsigned blocks = static_cast<unsigned>((a.ns + kThreads - 1) / kThreads);
  if (a.float32_test) br_cutoff_kernel<true><<<blocks, kThreads, 0, exec::detail::stream()>>>(a);
  else br_cutoff_kernel<false><<<blocks, kThreads, 0, exec::detail::stream()>>>(a);
  exec::detail::check_launch("cutoff Birkhoff-Rott kernel");
}
#else
void br_cutoff_device(const BRCutoffArgs&) { exec::no_device_backend("cutoff Birkhoff-Rott sum"); }
#endif

}  // namespace beatnik::model
