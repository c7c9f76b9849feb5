// The tree solver's sums on the device (tree_sums_device.hpp). Default kernel: a batch's ranges
// read as one stream of sources through a shared-memory ring (window sources classified against
// the batch's box once per source, short ranges packed into whole tiles), four warps per batch,
// two targets per lane, a pair loop without branches (rsqrt_normal); the first kernel (a warp per
// batch, range by range) stays as variant 0. Each target's additions come in a fixed order
// (bitwise reproducible). The lists travel launch by launch through page-locked staging, queued
// on the work stream.
#include "beatnik/model/tree_sums_device.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>

#include "beatnik/base/env.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/exec/cuda_check.hpp"
#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/exec/scratch.hpp"
#include "beatnik/model/tree_interp.hpp"
#include "beatnik/model/tree_lagrange.hpp"
#include "beatnik/model/tree_rsqrt_device.hpp"

namespace beatnik::model {
namespace {

#if defined(BEATNIK_DEVICE_COMPILE)
constexpr int kWarps = 4;    // warps per thread block
constexpr int kStreams = 4;  // launches in flight at once (BEATNIK_TREE_SUMS_STREAMS: another count)

struct Args {
  const double* tgt;
  long n;
  int nb;
  const double* pool;
  const long* batch;
  const long* start;
  const TreeSumRange* ranges;
  BRImages img;
  double eps;
  double* acc;
  unsigned long long* pairs;
  unsigned long long* stats = nullptr;  // the bench's counters (kStats variants only)
};

// The nearest image a₀ ∈ {−1, 0, 1} of a separation (br_targets_host.cpp's rule).
__device__ inline int nearest(double sep, double L, double h) {
  const double c = image_centre(sep, L, h);
  return c > 0.0 ? 1 : (c < 0.0 ? -1 : 0);
}

// Whether the pair (target, source) takes image (mx, my): |m − a₀| ≤ K per dimension, a₀ from
// the unshifted separation.
__device__ inline bool in_window(double tx, double ty, double sx, double sy, int mx, int my, double L0, double L1,
                                 double h0, double h1, int K) {
  const int ax = nearest(tx - sx, L0, h0), ay = nearest(ty - sy, L1, h1);
  return !(mx - ax > K || ax - mx > K || my - ay > K || ay - my > K);
}

// The first device kernel, kept as variant 0 (BEATNIK_TREE_SUMS_KERNEL=0, the benchmark's
// baseline): a warp per batch, two targets per lane (t and t + 32), each range's sources through
// shared memory 32 at a time, every range in list order, the window tested per pair.
__global__ void __launch_bounds__(32 * kWarps) tree_sums_kernel_v0(Args a) {
  __shared__ double tile[kWarps][6][32];
  const int w = threadIdx.x / 32, lane = threadIdx.x & 31;
  const int b = blockIdx.x * kWarps + w;
  if (b >= a.nb) return;  // the whole warp (no block-wide barrier below)
  double(*S)[32] = tile[w];
  const long t0 = a.batch[2 * b], t1 = a.batch[2 * b + 1];
  const long r0 = a.start[b], r1 = a.start[b + 1];
  const long n = a.n;
  const double L0 = a.img.period[0], L1 = a.img.period[1];
  const double h0 = a.img.centring_half(0), h1 = a.img.centring_half(1);
  const int K = a.img.k;
  unsigned long long cnt = 0;
  for (long base = t0; base < t1; base += 64) {
    const long ta = base + lane, tb = base + 32 + lane;
    const bool va = ta < t1, vb = tb < t1;
    const long ka = va ? ta : t0, kb = vb ? tb : t0;  // an idle slot repeats the first target
    const double xa = a.tgt[ka], ya = a.tgt[n + ka], za = a.tgt[2 * n + ka];
    const double xb = a.tgt[kb], yb = a.tgt[n + kb], zb = a.tgt[2 * n + kb];
    double uxa = 0.0, uya = 0.0, uza = 0.0, uxb = 0.0, uyb = 0.0, uzb = 0.0;
    for (long r = r0; r < r1; ++r) {
      const TreeSumRange R = a.ranges[r];
      const double* src = a.pool + R.off;
      const double ox = R.mx * L0, oy = R.my * L1;
      for (int s0 = 0; s0 < R.count; s0 += 32) {
        const int m = R.count - s0 < 32 ? R.count - s0 : 32;
        __syncwarp();  // the previous tile is read
        if (lane < m)
          for (int c = 0; c < 6; ++c) S[c][lane] = __ldg(src + long(c) * R.stride + s0 + lane);
        __syncwarp();
        if (R.window) {
          for (int q = 0; q < m; ++q) {
            const double sx = S[0][q], sy = S[1][q], sz = S[2][q], qx = S[3][q], qy = S[4][q], qz = S[5][q];
            if (in_window(xa, ya, sx, sy, R.mx, R.my, L0, L1, h0, h1, K)) {
              br_pair(xa, ya, za, sx + ox, sy + oy, sz, qx, qy, qz, a.eps, uxa, uya, uza);
              cnt += va;
            }
            if (in_window(xb, yb, sx, sy, R.mx, R.my, L0, L1, h0, h1, K)) {
              br_pair(xb, yb, zb, sx + ox, sy + oy, sz, qx, qy, qz, a.eps, uxb, uyb, uzb);
              cnt += vb;
            }
          }
        } else {
          for (int q = 0; q < m; ++q) {
            const double sx = S[0][q] + ox, sy = S[1][q] + oy, sz = S[2][q], qx = S[3][q], qy = S[4][q],
                         qz = S[5][q];
            br_pair(xa, ya, za, sx, sy, sz, qx, qy, qz, a.eps, uxa, uya, uza);
            br_pair(xb, yb, zb, sx, sy, sz, qx, qy, qz, a.eps, uxb, uyb, uzb);
          }
          cnt += (unsigned long long)(m) * (unsigned(va) + unsigned(vb));
        }
      }
    }
    if (va) {
      a.acc[ta] = uxa;
      a.acc[n + ta] = uya;
      a.acc[2 * n + ta] = uza;
    }
    if (vb) {
      a.acc[tb] = uxb;
      a.acc[n + tb] = uyb;
      a.acc[2 * n + tb] = uzb;
    }
  }
  for (int o = 16; o > 0; o /= 2) cnt += __shfl_down_sync(0xffffffffu, cnt, o);
  if (lane == 0 && cnt) atomicAdd(a.pairs, cnt);
}

// The source-stream kernel (variants 1, 2, 4: warps per batch). A batch's ranges are one stream
// of sources in list order. A warp reads it 32 sources at a time, a lane per source (the lane
// finds its range by binary search over the prefix counts of the current 32 ranges, whose
// descriptors the warp holds in shared memory), adds the image offset once per source,
// classifies a window range's source against the box of the 64 targets (taken by every target:
// no per-pair test; by none: dropped; else tested per pair) and appends the kept sources to a
// ring of 64 in shared memory. Whenever 32 wait, every lane sums them against its two targets in
// a fixed-length unrolled loop (several pairs in flight per lane), with the per-pair window test
// only in a tile that holds a source that needs it. So short ranges (proxy sets of 9 … 81,
// leaves of ≤ 64) fill whole tiles and the sums never wait on a range descriptor. With W warps
// per batch, load step g goes to warp g mod W; each warp sums its steps in list order and the
// partial sums are added in warp order: each target's order of additions is fixed (bitwise
// reproducible), with W = 1 the list order of the host kernel.
constexpr int kRing = 64;
constexpr unsigned kFull = 0xffffffffu;

struct alignas(16) StreamSmem {  // per warp (16-byte aligned: the entries are read as double2)
  double e[kRing][12];  // sx+ox, sy+oy, sz, qx, qy, qz, sx, sy, x low, x high, y low, y high
  int wf[kRing];        // the entry needs the per-pair window test
  long long pre[33];    // prefix counts of the chunk's ranges
  int off[32], stride[32], code[32];
};
static_assert(sizeof(StreamSmem) % 16 == 0 && sizeof(double[12]) % 16 == 0, "double2 access to the ring");

// The window of image m along one dimension as bounds on s = (t − s) + ζL, lo ≤ s < hi: a₀ = 1
// iff s ≥ h, a₀ = −1 iff s < −h (image_centre), and a₀ ∈ [m − K, m + K] is required; h = 0:
// a₀ ≡ 0.
__device__ inline void window_bounds(int m, int K, double h, double& lo, double& hi) {
  const double inf = __longlong_as_double(0x7ff0000000000000LL);
  const int amin = max(-1, m - K), amax = min(1, m + K);
  if (!(h > 0.0)) {
    const bool ok = amin <= 0 && 0 <= amax;
    lo = ok ? -inf : inf;
    hi = ok ? inf : -inf;
  } else if (amin > amax) {
    lo = inf;
    hi = -inf;
  } else {
    lo = amin <= -1 ? -inf : (amin == 0 ? -h : h);
    hi = amax >= 1 ? inf : (amax == 0 ? h : -h);
  }
}

// Stream-kernel options (template bits). kFastRsqrt: rsqrt_normal instead of the library's
// rsqrt (the same bits). kStats: the bench's counters (Stat; measurement only). kMoreRegs:
// __launch_bounds__ asks for 3 blocks per SM (ptxas then takes ~160 registers instead of 128,
// 12 warps per SM instead of 16). kUnroll8: the plain loop unrolled by 8 instead of 4.
// kCubedRsqrt: d^(−3/2) in one step from the hardware estimate (rsqrt_cubed; round-off differs).
constexpr int kFastRsqrt = 1, kStats = 2, kMoreRegs = 4, kUnroll8 = 8, kCubedRsqrt = 16;
// Counters of a kStats launch (BEATNIK_TREE_SUMS_BENCH), per launch summed over the warps.
enum Stat {
  kSources,         // sources read (per 64-target group)
  kWindow,          // of them window sources
  kWindowAll,       // … taken by every target of the group (no per-pair test)
  kWindowNone,      // … taken by none (dropped)
  kTilePlain,       // tiles (32 entries × 64 target slots) on the plain loop
  kTileTested,      // tiles with the per-pair test
  kTestedSlots,     // valid target × real source pairs in tested tiles
  kRejected,        // … of them rejected by the window test (computed, added as +0)
  kPaddingSlots,    // target slots × padding entries of partial tiles
  kIdleSlots,       // idle target slots (batch not a multiple of 64) × tile entries
  kStatCount
};

// br_pair (the same arithmetic; kCubed: f from rsqrt_cubed), the pair taken or not (not: f = 0,
// the sums gain +0 and are unchanged).
template <bool kFast, bool kCubed = false>
__device__ inline void pair_if(bool ok, double tx, double ty, double tz, double sx, double sy, double sz, double qx,
                               double qy, double qz, double eps, double& ux, double& uy, double& uz) {
  const double rx = tx - sx, ry = ty - sy, rz = tz - sz;
  const double d = rx * rx + ry * ry + rz * rz + eps;
  double f0;
  if constexpr (kCubed) {
    f0 = tree::rsqrt_cubed(d);
  } else {
    const double y = kFast ? tree::rsqrt_normal(d) : rsqrt(d);
    f0 = y * y * y;
  }
  const double f = ok ? f0 : 0.0;
  ux += (qy * rz - qz * ry) * f;
  uy += (qz * rx - qx * rz) * f;
  uz += (qx * ry - qy * rx) * f;
}

struct Two {  // a lane's two targets and their sums
  double xa, ya, za, xb, yb, zb;
  double uxa, uya, uza, uxb, uyb, uzb;
};

__device__ inline void stat_add(unsigned long long* st, int k, unsigned long long v) {
  if (v) atomicAdd(st + k, v);
}

// The 32 ring entries at E with the per-pair window test; m of them real (the rest padding,
// which fails every test and adds +0).
template <int Mode>
__device__ inline void tested_tile(const double (*E)[12], int lane, int m, Two& T, bool va, bool vb, double eps,
                                   double cx, double cy, unsigned long long& cnt, unsigned long long* st) {
  constexpr bool kFast = Mode & kFastRsqrt;
  unsigned ca = 0, cb = 0;
#pragma unroll 2
  for (int q = 0; q < 32; ++q) {
    const double2 p0 = *reinterpret_cast<const double2*>(&E[q][0]);
    const double2 p1 = *reinterpret_cast<const double2*>(&E[q][2]);
    const double2 p2 = *reinterpret_cast<const double2*>(&E[q][4]);
    const double2 p3 = *reinterpret_cast<const double2*>(&E[q][6]);
    const double2 bx = *reinterpret_cast<const double2*>(&E[q][8]);
    const double2 by = *reinterpret_cast<const double2*>(&E[q][10]);
    const double sax = (T.xa - p3.x) + cx, say = (T.ya - p3.y) + cy;
    const double sbx = (T.xb - p3.x) + cx, sby = (T.yb - p3.y) + cy;
    const bool oka = sax >= bx.x && sax < bx.y && say >= by.x && say < by.y;
    const bool okb = sbx >= bx.x && sbx < bx.y && sby >= by.x && sby < by.y;
    constexpr bool kC = (Mode & kCubedRsqrt) != 0;
    pair_if<kFast, kC>(oka, T.xa, T.ya, T.za, p0.x, p0.y, p1.x, p1.y, p2.x, p2.y, eps, T.uxa, T.uya, T.uza);
    pair_if<kFast, kC>(okb, T.xb, T.yb, T.zb, p0.x, p0.y, p1.x, p1.y, p2.x, p2.y, eps, T.uxb, T.uyb, T.uzb);
    ca += oka;
    cb += okb;
  }
  cnt += (va ? ca : 0u) + (vb ? cb : 0u);
  if constexpr ((Mode & kStats) != 0) {
    const unsigned slots = (va ? unsigned(m) : 0u) + (vb ? unsigned(m) : 0u);
    const unsigned rej = (va ? unsigned(m) - ca : 0u) + (vb ? unsigned(m) - cb : 0u);
    const unsigned s = __reduce_add_sync(kFull, slots), r = __reduce_add_sync(kFull, rej);
    if (lane == 0) {
      stat_add(st, kTileTested, 1);
      stat_add(st, kTestedSlots, s);
      stat_add(st, kRejected, r);
    }
  }
}

// The 32 ring entries at E against the lane's two targets; m of them real (the rest padding).
template <int Mode>
__device__ inline void stream_tile(const double (*E)[12], const int* wf, int lane, int m, Two& T, bool va, bool vb,
                                   double eps, double cx, double cy, unsigned long long& cnt, unsigned long long* st) {
  constexpr bool kFast = Mode & kFastRsqrt;
  if constexpr ((Mode & kStats) != 0) {
    const unsigned idle = 64u - __popc(__ballot_sync(kFull, va)) - __popc(__ballot_sync(kFull, vb));
    if (lane == 0) {
      stat_add(st, kPaddingSlots, 64ull * unsigned(32 - m));
      stat_add(st, kIdleSlots, 32ull * idle);
    }
  }
  if (!__any_sync(kFull, wf[lane] != 0)) {
    constexpr int kU = (Mode & kUnroll8) ? 8 : 4;
#pragma unroll kU
    for (int q = 0; q < 32; ++q) {
      const double2 p0 = *reinterpret_cast<const double2*>(&E[q][0]);
      const double2 p1 = *reinterpret_cast<const double2*>(&E[q][2]);
      const double2 p2 = *reinterpret_cast<const double2*>(&E[q][4]);
      if constexpr (kFast) {
        constexpr bool kC = (Mode & kCubedRsqrt) != 0;
        pair_if<true, kC>(true, T.xa, T.ya, T.za, p0.x, p0.y, p1.x, p1.y, p2.x, p2.y, eps, T.uxa, T.uya, T.uza);
        pair_if<true, kC>(true, T.xb, T.yb, T.zb, p0.x, p0.y, p1.x, p1.y, p2.x, p2.y, eps, T.uxb, T.uyb, T.uzb);
      } else {
        br_pair(T.xa, T.ya, T.za, p0.x, p0.y, p1.x, p1.y, p2.x, p2.y, eps, T.uxa, T.uya, T.uza);
        br_pair(T.xb, T.yb, T.zb, p0.x, p0.y, p1.x, p1.y, p2.x, p2.y, eps, T.uxb, T.uyb, T.uzb);
      }
    }
    cnt += (unsigned long long)(m) * (unsigned(va) + unsigned(vb));
    if constexpr ((Mode & kStats) != 0)
      if (lane == 0) stat_add(st, kTilePlain, 1);
    return;
  }
  tested_tile<Mode>(E, lane, m, T, va, vb, eps, cx, cy, cnt, st);
}

// The W warps of one batch wait for each other (named barrier 1 + the batch's slot in the block).
template <int W>
__device__ inline void batch_barrier(int slot) {
  if constexpr (W > 1) asm volatile("bar.sync %0, %1;" ::"r"(1 + slot), "n"(32 * W) : "memory");
}

template <int W, int Mode = 0>
__global__ void __launch_bounds__(32 * kWarps, (Mode & kMoreRegs) ? 3 : 0) tree_sums_stream_kernel(Args a) {
  static_assert(kWarps % W == 0, "warps per batch divide the block");
  constexpr int kBatches = kWarps / W;
  __shared__ StreamSmem smem[kWarps];
  __shared__ double red[W > 1 ? kWarps : 1][6][32];
  const int w = threadIdx.x / 32, lane = threadIdx.x & 31;
  const int sub = w % W;  // this warp's share of the batch's load steps
  const int b = blockIdx.x * kBatches + w / W;
  if (b >= a.nb) return;  // every warp of the batch (the barriers below are the batch's own)
  StreamSmem& S = smem[w];
  const long t0 = a.batch[2 * b], t1 = a.batch[2 * b + 1];
  const long r0 = a.start[b], r1 = a.start[b + 1];
  const long n = a.n;
  const double L0 = a.img.period[0], L1 = a.img.period[1];
  const double h0 = a.img.centring_half(0), h1 = a.img.centring_half(1);
  const double cx = kCentringShift * L0, cy = kCentringShift * L1;  // image_centre's shift
  const int K = a.img.k;
  const double inf = __longlong_as_double(0x7ff0000000000000LL);
  const unsigned below = (1u << lane) - 1u;
  unsigned long long cnt = 0;
  for (long base = t0; base < t1; base += 64) {
    const long ta = base + lane, tb = base + 32 + lane;
    const bool va = ta < t1, vb = tb < t1;
    const long ka = va ? ta : t0, kb = vb ? tb : t0;  // an idle slot repeats the first target
    Two T;
    T.xa = a.tgt[ka], T.ya = a.tgt[n + ka], T.za = a.tgt[2 * n + ka];
    T.xb = a.tgt[kb], T.yb = a.tgt[n + kb], T.zb = a.tgt[2 * n + kb];
    T.uxa = T.uya = T.uza = T.uxb = T.uyb = T.uzb = 0.0;
    // The 64 targets' box (min and max are exact). s = (t − s) + ζL is monotone in t, so its
    // values at the box's ends bound it for every target of the group.
    double xlo = fmin(T.xa, T.xb), xhi = fmax(T.xa, T.xb), ylo = fmin(T.ya, T.yb), yhi = fmax(T.ya, T.yb);
    for (int o = 16; o > 0; o /= 2) {
      xlo = fmin(xlo, __shfl_xor_sync(kFull, xlo, o));
      xhi = fmax(xhi, __shfl_xor_sync(kFull, xhi, o));
      ylo = fmin(ylo, __shfl_xor_sync(kFull, ylo, o));
      yhi = fmax(yhi, __shfl_xor_sync(kFull, yhi, o));
    }
    long long head = 0, fill = 0;  // ring positions: summed up to head, written up to fill
    long long g = 0;               // load step, counted across the batch's chunks
    for (long rc = r0; rc < r1; rc += 32) {
      const int nr = r1 - rc < 32 ? int(r1 - rc) : 32;
      __syncwarp();  // the previous chunk's descriptors are read
      long long c = 0;
      if (lane < nr) {
        const TreeSumRange R = a.ranges[rc + lane];
        S.off[lane] = R.off;
        S.stride[lane] = R.stride;
        S.code[lane] = (int(R.mx) & 0xff) | ((int(R.my) & 0xff) << 8) | (int(R.window) << 16);
        c = R.count;
      }
      for (int o = 1; o < 32; o *= 2) {
        const long long v = __shfl_up_sync(kFull, c, o);
        if (lane >= o) c += v;
      }
      S.pre[lane + 1] = c;
      if (lane == 0) S.pre[0] = 0;
      const long long total = __shfl_sync(kFull, c, 31);
      __syncwarp();
      for (long long p0 = 0; p0 < total; p0 += 32, ++g) {
        if (W > 1 && int(g % W) != sub) continue;
        const long long P = p0 + lane;
        bool keep = false, test = false, win = false;
        double e[12];
        if (P < total) {
          int lo = 0, hi = nr - 1;  // the last range with pre ≤ P: the non-empty one holding P
          while (lo < hi) {
            const int mid = (lo + hi + 1) >> 1;
            if (S.pre[mid] <= P) lo = mid;
            else hi = mid - 1;
          }
          const int code = S.code[lo], st = S.stride[lo];
          const int mx = static_cast<signed char>(code & 0xff), my = static_cast<signed char>((code >> 8) & 0xff);
          const double* src = a.pool + S.off[lo] + (P - S.pre[lo]);
          const double sx = __ldg(src), sy = __ldg(src + st);
          e[2] = __ldg(src + 2L * st);
          e[3] = __ldg(src + 3L * st);
          e[4] = __ldg(src + 4L * st);
          e[5] = __ldg(src + 5L * st);
          e[0] = sx + mx * L0;
          e[1] = sy + my * L1;
          e[6] = sx;
          e[7] = sy;
          keep = true;
          if (code >> 16) {
            win = true;
            window_bounds(mx, K, h0, e[8], e[9]);
            window_bounds(my, K, h1, e[10], e[11]);
            const double sxl = (xlo - sx) + cx, sxh = (xhi - sx) + cx, syl = (ylo - sy) + cy, syh = (yhi - sy) + cy;
            const bool all = sxl >= e[8] && sxh < e[9] && syl >= e[10] && syh < e[11];
            const bool none = sxh < e[8] || sxl >= e[9] || syh < e[10] || syl >= e[11];
            keep = !none;
            test = !all;
          }
          if (!test) e[8] = e[10] = -inf, e[9] = e[11] = inf;
        }
        const unsigned ball = __ballot_sync(kFull, keep);
        if constexpr ((Mode & kStats) != 0) {
          const unsigned rd = __ballot_sync(kFull, P < total), wn = __ballot_sync(kFull, win),
                         wa = __ballot_sync(kFull, win && !test), wd = __ballot_sync(kFull, win && !keep);
          if (lane == 0) {
            stat_add(a.stats, kSources, __popc(rd));
            stat_add(a.stats, kWindow, __popc(wn));
            stat_add(a.stats, kWindowAll, __popc(wa));
            stat_add(a.stats, kWindowNone, __popc(wd));
          }
        }
        __syncwarp();  // the last tile summed is read before its slots are written again
        if (keep) {
          const int slot = int((fill + __popc(ball & below)) & (kRing - 1));
          for (int k = 0; k < 12; k += 2) *reinterpret_cast<double2*>(&S.e[slot][k]) = make_double2(e[k], e[k + 1]);
          S.wf[slot] = test;
        }
        fill += __popc(ball);
        __syncwarp();
        if (fill - head >= 32) {
          const int h = int(head & (kRing - 1));
          stream_tile<Mode>(S.e + h, S.wf + h, lane, 32, T, va, vb, a.eps, cx, cy, cnt, a.stats);
          head += 32;
        }
      }
    }
    if (fill > head) {  // the last, partial tile: padding adds +0 and fails every window test
      const int m = int(fill - head);
      __syncwarp();
      if (lane >= m) {
        const int slot = int((head + lane) & (kRing - 1));
        for (int k = 0; k < 6; ++k) S.e[slot][k] = k < 3 ? 1e100 : 0.0;
        S.e[slot][6] = S.e[slot][7] = 0.0;
        S.e[slot][8] = S.e[slot][10] = inf;
        S.e[slot][9] = S.e[slot][11] = -inf;
        S.wf[slot] = 0;
      }
      __syncwarp();
      const int h = int(head & (kRing - 1));
      stream_tile<Mode>(S.e + h, S.wf + h, lane, m, T, va, vb, a.eps, cx, cy, cnt, a.stats);
    }
    if constexpr (W > 1) {  // the partial sums, added in warp order
      const int first = w - sub;
      red[w][0][lane] = T.uxa, red[w][1][lane] = T.uya, red[w][2][lane] = T.uza;
      red[w][3][lane] = T.uxb, red[w][4][lane] = T.uyb, red[w][5][lane] = T.uzb;
      batch_barrier<W>(w / W);
      if (sub == 0)
        for (int v = 1; v < W; ++v) {
          T.uxa += red[first + v][0][lane], T.uya += red[first + v][1][lane], T.uza += red[first + v][2][lane];
          T.uxb += red[first + v][3][lane], T.uyb += red[first + v][4][lane], T.uzb += red[first + v][5][lane];
        }
      batch_barrier<W>(w / W);  // red is read before the next group writes it
    }
    if (sub == 0) {
      if (va) {
        a.acc[ta] = T.uxa;
        a.acc[n + ta] = T.uya;
        a.acc[2 * n + ta] = T.uza;
      }
      if (vb) {
        a.acc[tb] = T.uxb;
        a.acc[n + tb] = T.uyb;
        a.acc[2 * n + tb] = T.uzb;
      }
    }
  }
  for (int o = 16; o > 0; o /= 2) cnt += __shfl_down_sync(kFull, cnt, o);
  if (lane == 0 && cnt) atomicAdd(a.pairs, cnt);
}

// The kernel: 0 the first one, 1, 2 or 4 the stream kernel with that many warps per batch (4:
// the library's rsqrt), 5 the stream kernel with W = 4 and rsqrt_normal, 7: 5 with kMoreRegs, 8:
// 7 with kUnroll8, 9: 8 with kCubedRsqrt (BEATNIK_TREE_SUMS_KERNEL; default kDefaultVariant;
// docs/tree-log.md "The pair loop without branches", "The sums' d^(−3/2) in one step"). 6 (the
// bench's counters only): 5 with kStats.
constexpr int kDefaultVariant = 9;  // the fastest at 1024² on an H200 (8 before 2026-11-29: 4.6 % slower)
constexpr int kStatsVariant = 6;
int variant_from_env() {
  static const int v = [] {
    const std::optional<std::string> x = env::choice("BEATNIK_TREE_SUMS_KERNEL", {"0", "1", "2", "4", "5", "7", "8", "9"});
    return x ? std::stoi(*x) : kDefaultVariant;
  }();
  return v;
}

void run_kernel(int variant, const Args& a, cudaStream_t st, const char* what) {
  if (a.nb <= 0) return;
  const auto grid = [&](int per) { return static_cast<unsigned>((a.nb + per - 1) / per); };
  switch (variant) {
    case 0:
      tree_sums_kernel_v0<<<grid(kWarps), 32 * kWarps, 0, st>>>(a);
      break;
    case 1:
      tree_sums_stream_kernel<1><<<grid(kWarps), 32 * kWarps, 0, st>>>(a);
      break;
    case 2:
      tree_sums_stream_kernel<2><<<grid(kWarps / 2), 32 * kWarps, 0, st>>>(a);
      break;
    case 5:
      tree_sums_stream_kernel<4, kFastRsqrt><<<grid(1), 32 * kWarps, 0, st>>>(a);
      break;
    case 7:
      tree_sums_stream_kernel<4, kFastRsqrt | kMoreRegs><<<grid(1), 32 * kWarps, 0, st>>>(a);
      break;
    case 8:
      tree_sums_stream_kernel<4, kFastRsqrt | kMoreRegs | kUnroll8><<<grid(1), 32 * kWarps, 0, st>>>(a);
      break;
    case 9:
      tree_sums_stream_kernel<4, kFastRsqrt | kMoreRegs | kUnroll8 | kCubedRsqrt><<<grid(1), 32 * kWarps, 0, st>>>(a);
      break;
    case kStatsVariant:
      tree_sums_stream_kernel<4, kFastRsqrt | kStats><<<grid(1), 32 * kWarps, 0, st>>>(a);
      break;
    default:
      tree_sums_stream_kernel<4><<<grid(1), 32 * kWarps, 0, st>>>(a);
      break;
  }
  exec::detail::check_launch(what);
}

// o[k] = 1 where rsqrt_normal(x[k]) and rsqrt(x[k]) differ in any bit (tree_rsqrt_mismatches). A
// kernel of its own: a parallel_for lambda whose captures only the device pass uses would have
// another closure type in the host pass (no such device function at launch).
__global__ void rsqrt_check_kernel(const double* x, int* o, long n) {
  const long k = blockIdx.x * long(blockDim.x) + threadIdx.x;
  if (k < n) o[k] = __double_as_longlong(tree::rsqrt_normal(x[k])) != __double_as_longlong(rsqrt(x[k]));
}

// tree_rsqrt_cubed's values.
__global__ void rsqrt_cubed_kernel(const double* x, double* f, double* e, double* g, long n) {
  const long k = blockIdx.x * long(blockDim.x) + threadIdx.x;
  if (k >= n) return;
  const double y = tree::rsqrt_estimate(x[k]);
  e[k] = fma(x[k], -(y * y), 1.0);
  f[k] = tree::rsqrt_cubed(x[k]);
  const double r = tree::rsqrt_normal(x[k]);
  g[k] = r * r * r;
}

// a[k] += b[k] for k < n, on the default stream (device arrays).
void add_into(long n, double* a, const double* b) {
  exec::parallel_for(exec::Space::Device, n, [=] BEATNIK_HOST_DEVICE(long k) { a[k] += b[k]; });
}

// The downward pass (TreeSumsDevice::queue_down): a thread per target, its batch by binary
// search over the batches' first targets; each grid of its chain in order, interpolated at the
// target by barycentric Lagrange values, one side at a time (z, then y, then x: the host's
// tree::interpolate_down order), added into the far field (the host's order of additions per
// target; fused multiply-adds allowed: the host's to round-off).
struct DownArgs {
  const double* tgt;
  long n;
  int nb;
  const long* batch;
  const int* start;
  const int* chain;
  const TreeSumsDevice::DownGrid* grids;
  const double* sw;
  const double* uf;
  const double* merged;  // the merged grids' values (DownGrid::merged)
  double* acc;
};

__global__ void __launch_bounds__(128) tree_down_kernel(DownArgs a) {
  constexpr int K = tree::kTreeMaxDegree + 1;
  const long t = blockIdx.x * long(blockDim.x) + threadIdx.x;
  if (t >= a.n || a.nb <= 0) return;
  int lo = 0, hi = a.nb - 1;  // the last batch whose first target is ≤ t
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (a.batch[2 * mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  if (t < a.batch[2 * lo] || t >= a.batch[2 * lo + 1] || a.start[lo] == a.start[lo + 1]) return;
  const long n = a.n;
  const double p[3] = {a.tgt[t], a.tgt[n + t], a.tgt[2 * n + t]};
  double u[3] = {a.acc[t], a.acc[n + t], a.acc[2 * n + t]};
  double L[3][K];
  for (int k = a.start[lo]; k < a.start[lo + 1]; ++k) {
    const TreeSumsDevice::DownGrid G = a.grids[a.chain[k]];
    const double* sw = a.sw + G.sw;
    for (int d = 0; d < 3; ++d) {
      tree::lagrange(p[d], G.dg[d], sw, sw + G.dg[d] + 1, L[d]);
      sw += 2 * (G.dg[d] + 1);
    }
    const int n0 = G.dg[0] + 1, n1 = G.dg[1] + 1, n2 = G.dg[2] + 1;
    // The three components in one pass (each with its own sums in the order before: the same
    // bits): a basis value loaded once serves three products, three chains in flight.
    const double* uf0 = (G.merged ? a.merged : a.uf) + G.u;  // (near part added: run_down)
    const double* uf1 = uf0 + G.stride;
    const double* uf2 = uf1 + G.stride;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0;
    for (int i = 0; i < n0; ++i) {
      double v0 = 0.0, v1 = 0.0, v2 = 0.0;
      for (int j = 0; j < n1; ++j) {
        double w0 = 0.0, w1 = 0.0, w2 = 0.0;
        const int ab = (i * n1 + j) * n2;
        for (int e = 0; e < n2; ++e) {
          const double l = L[2][e];
          w0 += l * __ldg(uf0 + ab + e);
          w1 += l * __ldg(uf1 + ab + e);
          w2 += l * __ldg(uf2 + ab + e);
        }
        const double lj = L[1][j];
        v0 += lj * w0;
        v1 += lj * w1;
        v2 += lj * w2;
      }
      const double li = L[0][i];
      s0 += li * v0;
      s1 += li * v1;
      s2 += li * v2;
    }
    u[0] += s0;
    u[1] += s1;
    u[2] += s2;
  }
  a.acc[t] = u[0];
  a.acc[n + t] = u[1];
  a.acc[2 * n + t] = u[2];
}

// The merged grids of one level (TreeSumsDevice::DownMerges, tree_down.hpp): a block per merged
// grid A, its sources in order, each source S's polynomial interpolated on A's points and added:
// separably, one side at a time (z, then y, then x) through two tables in shared memory, with the
// 1D Lagrange values of S's nodes at A's nodes. Sources of an earlier level are complete (one
// launch per level, in order on the stream).
struct MergeArgs {
  const int* order;  // this level's merged grids (DownPlan numbering)
  int first;         // grids[first + i]: merged grid i
  const int* src_start;
  const int* src;
  const TreeSumsDevice::DownGrid* grids;
  const double* sw;
  const double* uf;
  double* merged;
  int K;  // the tables' side: the largest side degree + 1
};

__global__ void __launch_bounds__(256) tree_merge_kernel(MergeArgs a) {
  extern __shared__ double sh[];
  const int K = a.K;
  double* L = sh;                  // L[d][R·K + r]: source node r's Lagrange value at A's node R
  double* T1 = L + 3 * K * K;      // [i][j][E]: z done
  double* T2 = T1 + K * K * K;     // [i][J][E]: z and y done
  const int id = a.order[blockIdx.x];
  const TreeSumsDevice::DownGrid A = a.grids[a.first + id];
  const int N0 = A.dg[0] + 1, N1 = A.dg[1] + 1, N2 = A.dg[2] + 1;
  for (int q = a.src_start[id]; q < a.src_start[id + 1]; ++q) {
    const TreeSumsDevice::DownGrid S = a.grids[a.src[q]];
    const int n0 = S.dg[0] + 1, n1 = S.dg[1] + 1, n2 = S.dg[2] + 1;
    __syncthreads();  // the previous source's tables are read
    for (int t = threadIdx.x; t < N0 + N1 + N2; t += blockDim.x) {
      const int d = t < N0 ? 0 : t < N0 + N1 ? 1 : 2;
      const int R = t - (d == 0 ? 0 : d == 1 ? N0 : N0 + N1);
      const double* aw = a.sw + A.sw;
      const double* sw = a.sw + S.sw;
      for (int k = 0; k < d; ++k) {
        aw += 2 * (A.dg[k] + 1);
        sw += 2 * (S.dg[k] + 1);
      }
      tree::lagrange(aw[R], S.dg[d], sw, sw + S.dg[d] + 1, L + d * K * K + R * K);
    }
    __syncthreads();
    const double* Lx = L;
    const double* Ly = L + K * K;
    const double* Lz = L + 2 * K * K;
    for (int c = 0; c < 3; ++c) {
      const double* u = (S.merged ? a.merged : a.uf) + S.u + long(c) * S.stride;
      double* out = a.merged + A.u + long(c) * A.stride;
      for (int t = threadIdx.x; t < n0 * n1 * N2; t += blockDim.x) {
        const int E = t % N2, ij = t / N2;
        double s = 0.0;
        for (int e = 0; e < n2; ++e) s += Lz[E * K + e] * u[ij * n2 + e];
        T1[t] = s;
      }
      __syncthreads();
      for (int t = threadIdx.x; t < n0 * N1 * N2; t += blockDim.x) {
        const int E = t % N2, J = (t / N2) % N1, i = t / (N1 * N2);
        double s = 0.0;
        for (int j = 0; j < n1; ++j) s += Ly[J * K + j] * T1[(i * n1 + j) * N2 + E];
        T2[t] = s;
      }
      __syncthreads();
      for (int t = threadIdx.x; t < N0 * N1 * N2; t += blockDim.x) {
        const int JE = t % (N1 * N2), I = t / (N1 * N2);
        double s = 0.0;
        for (int i = 0; i < n0; ++i) s += Lx[I * K + i] * T2[i * N1 * N2 + JE];
        out[t] += s;
      }
      __syncthreads();
    }
  }
}
#endif

}  // namespace

namespace {

TreeSumsDevice::Pool make_pool(const TreeSumsDevice::Arrays& arrays) {
  TreeSumsDevice::Pool p;
  p.arrays = arrays;
  p.base.assign(arrays.size() + 1, 0);
  for (size_t i = 0; i < arrays.size(); ++i) p.base[i + 1] = p.base[i] + arrays[i].second;
  if (p.base.back() > std::numeric_limits<int>::max())
    throw Error("tree device sums: more than 2^31 doubles of sources in one pool");
  p.by_addr.resize(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) p.by_addr[i] = static_cast<int>(i);
  const std::less<const double*> lt;
  std::sort(p.by_addr.begin(), p.by_addr.end(), [&](int x, int y) { return lt(arrays[x].first, arrays[y].first); });
  p.first.resize(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) p.first[i] = arrays[p.by_addr[i]].first;
  return p;
}

// Batches [b0, b1)'s ranges into out (CSR offsets `start`, from 0): each range's array found by
// binary search over the pool's sorted array starts (the arrays do not overlap).
void flatten(const TreeSumsDevice::Pool& p, int b0, int b1, const std::vector<std::vector<BRSourceRange>>& ranges,
             const long* start, TreeSumRange* out) {
  const std::less<const double*> lt;
  bool outside = false;
#pragma omp parallel for schedule(dynamic, 16) reduction(|| : outside)
  for (int b = b0; b < b1; ++b) {
    long q = start[b - b0];
    for (const BRSourceRange& R : ranges[b]) {
      const auto it = std::upper_bound(p.first.begin(), p.first.end(), R.p, lt);
      const size_t i = it == p.first.begin() ? p.arrays.size() : size_t(p.by_addr[it - p.first.begin() - 1]);
      if (i == p.arrays.size() || !lt(R.p, p.arrays[i].first + p.arrays[i].second) || R.mx < -127 || R.mx > 127 ||
          R.my < -127 || R.my > 127) {
        outside = true;
        break;
      }
      out[q++] = {static_cast<int>(p.base[i] + (R.p - p.arrays[i].first) + R.k0), static_cast<int>(R.stride),
                  static_cast<int>(R.k1 - R.k0), static_cast<signed char>(R.mx), static_cast<signed char>(R.my),
                  static_cast<unsigned char>(R.window ? 1 : 0)};
    }
  }
  if (outside) throw Error("tree device sums: a source range outside the uploaded arrays, or an image beyond ±127");
}

// CSR offsets of batches [b0, b1)'s lists; returns the ranges.
long csr(int b0, int b1, const std::vector<std::vector<BRSourceRange>>& ranges, long* start) {
  start[0] = 0;
  for (int b = b0; b < b1; ++b) start[b - b0 + 1] = start[b - b0] + static_cast<long>(ranges[b].size());
  return start[b1 - b0];
}

}  // namespace

TreeSumsDevice::TreeSumsDevice()
    : tgt_(exec::Space::Device, 0),
      near_pool_(exec::Space::Device, 0),
      far_pool_(exec::Space::Device, 0),
      acc_near_(exec::Space::Device, 0),
      acc_far_(exec::Space::Device, 0),
      pairs_(exec::Space::Device, 3),
      gacc_near_(exec::Space::Device, 0),
      gacc_far_(exec::Space::Device, 0),
      down_batch_(exec::Space::Device, 0),
      down_start_(exec::Space::Device, 0),
      down_chain_(exec::Space::Device, 0),
      down_grids_(exec::Space::Device, 0),
      down_sw_(exec::Space::Device, 0),
      down_src_start_(exec::Space::Device, 0),
      down_src_(exec::Space::Device, 0),
      down_order_(exec::Space::Device, 0),
      down_merged_(exec::Space::Device, 0) {}

long tree_sums_bench_call() {
  static const long k = env::integer("BEATNIK_TREE_SUMS_BENCH", 1, 1L << 30).value_or(0);
  return k;
}

#if defined(BEATNIK_DEVICE_COMPILE)
template <class T>
void TreeSumsDevice::release(Staging<T>& s) {
  if (s.host) cudaFreeHost(s.host);
  s.host = nullptr;
  s.cap = s.used = 0;
}

// Before a call (no launch in flight): room for the largest call so far.
template <class T>
void TreeSumsDevice::prepare(Staging<T>& s) {
  s.peak = std::max(s.peak, s.total);
  s.total = s.used = 0;
  if (s.peak > s.cap) resize(s, s.peak + s.peak / 8);
}

// Waits for every launch queued so far.
void TreeSumsDevice::sync_streams() {
  for (void* st : streams_) cudaStreamSynchronize(static_cast<cudaStream_t>(st));
}

// Page-locked host and device memory of n elements (contents not kept).
template <class T>
void TreeSumsDevice::resize(Staging<T>& s, size_t n) {
  release(s);
  if (cudaMallocHost(reinterpret_cast<void**>(&s.host), n * sizeof(T)) != cudaSuccess) {
    s.host = nullptr;
    throw Error("tree device sums: cannot allocate page-locked host memory for the lists");
  }
  s.cap = n;
  exec::grow(s.dev, exec::Space::Device, n);
}

// n elements of s for one launch. When they do not fit after the earlier launches' (the first
// calls, or a call that needs more than any before), waits for those (their copies and kernels
// read s) and starts again from the front, larger if need be; begin() then sizes s for the
// largest call seen, so that later calls never wait here.
template <class T>
size_t TreeSumsDevice::reserve(Staging<T>& s, size_t n) {
  s.total += n;
  if (s.used + n <= s.cap) {
    s.used += n;
    return s.used - n;
  }
  sync_streams();
  wrapped_ = true;  // earlier launches' lists are overwritten (bench() cannot replay this call)
  if (n > s.cap) resize(s, std::max<size_t>(n + n / 2, 1024));
  s.used = n;
  return 0;
}
#endif

TreeSumsDevice::~TreeSumsDevice() {
#if defined(BEATNIK_DEVICE_COMPILE)
  release(ranges_);
  release(index_);
  release(gpts_);
  for (void* e : events_) cudaEventDestroy(static_cast<cudaEvent_t>(e));
  if (ready_) cudaEventDestroy(static_cast<cudaEvent_t>(ready_));
  for (void* st : streams_) cudaStreamDestroy(static_cast<cudaStream_t>(st));
#endif
}

void TreeSumsDevice::pools(const Arrays& near, const Arrays& far) {
#if defined(BEATNIK_DEVICE_COMPILE)
  near_ = make_pool(near);
  far_ = make_pool(far);
  exec::grow(near_pool_, exec::Space::Device, std::max(near_.base.back(), 1L));
  exec::grow(far_pool_, exec::Space::Device, std::max(far_.base.back(), 1L));
#else
  (void)near, (void)far, (void)make_pool;
  exec::no_device_backend("tree solver sums");
#endif
}

void TreeSumsDevice::fill(bool far, size_t i, const double* src, exec::Space from) {
#if defined(BEATNIK_DEVICE_COMPILE)
  const Pool& p = far ? far_ : near_;
  double* pool = far ? far_pool_.data() : near_pool_.data();
  const auto [host, len] = p.arrays.at(i);
  if (len > 0) exec::copy(pool + p.base[i], exec::Space::Device, src ? src : host, src ? from : exec::Space::Host, len);
#else
  (void)far, (void)i, (void)src, (void)from;
  exec::no_device_backend("tree solver sums");
#endif
}

void TreeSumsDevice::begin(const double* targets, long n, const BRImages& img, double eps, bool targets_on_device) {
#if defined(BEATNIK_DEVICE_COMPILE)
  const auto D = exec::Space::Device, H = exec::Space::Host;
  const double t = wall_seconds();
  n_ = n;
  img_ = img;
  eps_ = eps;
  exec::grow(tgt_, D, std::max(3 * n, 1L));
  exec::grow(acc_near_, D, std::max(3 * n, 1L));
  exec::grow(acc_far_, D, std::max(3 * n, 1L));
  if (n > 0) exec::copy(tgt_.data(), D, targets, targets_on_device ? D : H, 3 * n);
  pairs_.zero();
  prepare(ranges_);
  prepare(index_);
  prepare(gpts_);
  // The grids' velocities: room for the largest call so far (launch_grids grows them, keeping
  // their contents, when a call needs more).
  if (gpeak_ > gacc_far_.size()) {
    exec::grow(gacc_near_, D, gpeak_);
    exec::grow(gacc_far_, D, gpeak_);
  }
  gused_ = 0;
  down_ = false;
  launches_ = 0;
  grid_launch_.clear();
  recs_.clear();
  wrapped_ = false;
  // Every stream's launches after the work queued so far on the work stream: the pools' fills,
  // the lower-degree sets and, before them, the upward pass, which the solver may have queued
  // without waiting (docs/tree-log.md "The call's phases overlapped"). The blocking streams follow
  // the legacy default stream anyway; the event keeps that order whatever the work stream is.
  next_stream();  // (makes the streams)
  if (!ready_) {
    cudaEvent_t e;
    exec::cuda_check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    ready_ = e;
  }
  exec::cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(ready_), exec::detail::stream()), "cudaEventRecord");
  for (void* st : streams_)
    exec::cuda_check(cudaStreamWaitEvent(static_cast<cudaStream_t>(st), static_cast<cudaEvent_t>(ready_), 0),
                     "cudaStreamWaitEvent");
  pack_s = near_kernel_s = far_kernel_s = finish_s = cc_kernel_s = down_kernel_s = 0;
  cc_pairs = 0;
  upload_s = wall_seconds() - t;
#else
  (void)targets, (void)n, (void)img, (void)eps, (void)targets_on_device;
  (void)flatten, (void)csr;
  exec::no_device_backend("tree solver sums");
#endif
}

void TreeSumsDevice::launch(int b0, int b1, const std::vector<long>& batch,
                            const std::vector<std::vector<BRSourceRange>>& near,
                            const std::vector<std::vector<BRSourceRange>>& far) {
#if defined(BEATNIK_DEVICE_COMPILE)
  if (b1 <= b0 || n_ <= 0) return;
  queue(b0, b1 - b0, batch.data() + 2 * size_t(b0), near, far, tgt_.data(), n_, acc_near_.data(), acc_far_.data(),
        false);
#else
  (void)b0, (void)b1, (void)batch, (void)near, (void)far;
  exec::no_device_backend("tree solver sums");
#endif
}

long TreeSumsDevice::launch_grids(long m, const std::vector<long>& bounds,
                                  const std::vector<std::vector<BRSourceRange>>& near,
                                  const std::vector<std::vector<BRSourceRange>>& far) {
#if defined(BEATNIK_DEVICE_COMPILE)
  const int ng = static_cast<int>(bounds.size() / 2);
  if (ng <= 0 || m <= 0) return static_cast<long>(gused_);
  if (gpts_m_ != m) throw Error("tree device sums: launch_grids without its points staged (stage_grid_points)");
  const size_t op = gpts_op_;
  gpts_m_ = -1;
  const auto D = exec::Space::Device;
  const double t = wall_seconds();
  const size_t need = gused_ + 3 * size_t(m);
  if (need > gacc_far_.size()) {  // more than any call before: wait, then larger, contents kept
    sync_streams();
    const size_t cap = std::max(need + need / 2, size_t(1) << 16);
    for (exec::Buffer<double>* b : {&gacc_near_, &gacc_far_}) {
      exec::Buffer<double> nb(D, cap);
      if (gused_ > 0) exec::copy(nb.data(), D, b->data(), D, gused_);
      b->swap(nb);
    }
  }
  // On the stream queue() takes next, before its kernels.
  cudaMemcpyAsync(gpts_.dev.data() + op, gpts_.host + op, 3 * size_t(m) * sizeof(double), cudaMemcpyHostToDevice,
                  static_cast<cudaStream_t>(next_stream()));
  const long at = static_cast<long>(gused_);
  gused_ = need;
  gpeak_ = std::max(gpeak_, gused_);
  pack_s += wall_seconds() - t;
  queue(0, ng, bounds.data(), near, far, gpts_.dev.data() + op, m, gacc_near_.data() + at, gacc_far_.data() + at,
        true);
  return at;
#else
  (void)m, (void)bounds, (void)near, (void)far;
  exec::no_device_backend("tree solver sums");
#endif
}

double* TreeSumsDevice::stage_grid_points(long m) {
#if defined(BEATNIK_DEVICE_COMPILE)
  if (m <= 0) return nullptr;
  gpts_op_ = reserve(gpts_, 3 * size_t(m));
  gpts_m_ = m;
  return gpts_.host + gpts_op_;
#else
  (void)m;
  exec::no_device_backend("tree solver sums");
#endif
}

void TreeSumsDevice::queue_down(std::vector<long> batch, std::vector<int> start, std::vector<int> chain,
                                std::vector<DownGrid>& grids, std::vector<double>& sw, DownMerges merges) {
  if (merges.max_side > kMergeMaxSide) throw Error("tree device sums: a merged grid above the largest side degree");
  h_merges_ = std::move(merges);
  // Kept on the host until finish() (an upload now, on the default stream, would wait for the
  // sums in flight).
  down_ = batch.size() >= 2 && !chain.empty() && n_ > 0;
  h_batch_ = std::move(batch);
  h_start_ = std::move(start);
  h_chain_ = std::move(chain);
  h_grids_.swap(grids);  // the caller gets the last call's storage back (no reallocation)
  h_sw_.swap(sw);
}

#if defined(BEATNIK_DEVICE_COMPILE)
// The stream the next launch takes. Launches go round the streams, so that one launch's kernels
// fill the GPU while the previous one's last batches finish. The streams are blocking ones:
// ordered after the synchronous uploads and memsets of begin() on the default stream.
void* TreeSumsDevice::next_stream() {
  static const int count = int(env::integer("BEATNIK_TREE_SUMS_STREAMS", 1, 64).value_or(kStreams));
  if (streams_.empty())
    for (int k = 0; k < count; ++k) {
      cudaStream_t st;
      cudaStreamCreate(&st);
      streams_.push_back(st);
    }
  return streams_[launches_ % streams_.size()];
}

// The downward pass on the default stream (after the sums and the edge terms' addition).
void TreeSumsDevice::run_down() {
  const auto D = exec::Space::Device, H = exec::Space::Host;
  const int nb = static_cast<int>(h_batch_.size() / 2);
  exec::grow(down_batch_, D, h_batch_.size());
  exec::grow(down_start_, D, h_start_.size());
  exec::grow(down_chain_, D, h_chain_.size());
  exec::grow(down_grids_, D, std::max<size_t>(h_grids_.size(), 1));
  exec::grow(down_sw_, D, std::max<size_t>(h_sw_.size(), 1));
  exec::copy(down_batch_.data(), D, h_batch_.data(), H, h_batch_.size());
  exec::copy(down_start_.data(), D, h_start_.data(), H, h_start_.size());
  exec::copy(down_chain_.data(), D, h_chain_.data(), H, h_chain_.size());
  if (!h_grids_.empty()) exec::copy(down_grids_.data(), D, h_grids_.data(), H, h_grids_.size());
  if (!h_sw_.empty()) exec::copy(down_sw_.data(), D, h_sw_.data(), H, h_sw_.size());
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0, 0);
  // The grids' velocities: the far part plus the near part (C's sources) once, then read once.
  add_into(static_cast<long>(gused_), gacc_far_.data(), gacc_near_.data());
  const DownMerges& mg = h_merges_;
  if (!mg.order.empty()) {  // the merged grids, level by level
    exec::grow(down_src_start_, D, mg.src_start.size());
    exec::grow(down_src_, D, std::max<size_t>(mg.src.size(), 1));
    exec::grow(down_order_, D, mg.order.size());
    exec::grow(down_merged_, D, 3 * size_t(mg.points));
    exec::copy(down_src_start_.data(), D, mg.src_start.data(), H, mg.src_start.size());
    if (!mg.src.empty()) exec::copy(down_src_.data(), D, mg.src.data(), H, mg.src.size());
    exec::copy(down_order_.data(), D, mg.order.data(), H, mg.order.size());
    cudaMemsetAsync(down_merged_.data(), 0, 3 * size_t(mg.points) * sizeof(double), 0);
    const int K = mg.max_side + 1;
    const size_t shared = (3 * size_t(K) * K + 2 * size_t(K) * K * K) * sizeof(double);
    static size_t shared_set = 0;  // the kernel's opt-in above 48 KiB, once per size
    if (shared > 48 * 1024 && shared > shared_set) {
      cudaFuncSetAttribute(tree_merge_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
      shared_set = shared;
    }
    for (size_t l = 0; l + 1 < mg.level_start.size(); ++l) {
      const int l0 = mg.level_start[l], cnt = mg.level_start[l + 1] - l0;
      MergeArgs m{down_order_.data() + l0, mg.first,         down_src_start_.data(), down_src_.data(),
                  down_grids_.data(),      down_sw_.data(),  gacc_far_.data(),       down_merged_.data(), K};
      tree_merge_kernel<<<static_cast<unsigned>(cnt), 256, shared>>>(m);
      exec::detail::check_launch("tree downward pass: merged grids");
    }
  }
  DownArgs a{tgt_.data(),        n_,
             nb,                 down_batch_.data(),
             down_start_.data(), down_chain_.data(),
             down_grids_.data(), down_sw_.data(),
             gacc_far_.data(),   mg.order.empty() ? nullptr : down_merged_.data(),
             acc_far_.data()};
  tree_down_kernel<<<static_cast<unsigned>((n_ + 127) / 128), 128>>>(a);
  exec::detail::check_launch("tree downward pass");
  cudaEventRecord(e1, 0);
  cudaEventSynchronize(e1);
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  down_kernel_s += 1e-3 * ms;
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
}

// One launch: its index block and ranges into the staging, copied and summed on the next stream.
void TreeSumsDevice::queue(int b0, int nb, const long* bounds, const std::vector<std::vector<BRSourceRange>>& near,
                           const std::vector<std::vector<BRSourceRange>>& far, const double* tgt, long n,
                           double* acc_near, double* acc_far, bool grids) {
  const int b1 = b0 + nb;
  const double t = wall_seconds();
  cudaStream_t st = static_cast<cudaStream_t>(next_stream());
  // Index block: batch bounds (2·nb), the near CSR (nb + 1), the far CSR (nb + 1).
  const size_t ni = 4 * size_t(nb) + 2;
  const size_t oi = reserve(index_, ni);
  long* I = index_.host + oi;
  std::copy_n(bounds, 2 * size_t(nb), I);
  long* ns = I + 2 * nb;
  long* fs = ns + nb + 1;
  const long nrn = csr(b0, b1, near, ns), nrf = csr(b0, b1, far, fs);
  const size_t orr = reserve(ranges_, size_t(nrn + nrf));
  I = index_.host + oi;  // (reserve never moves index_, but keep the reads next to the use)
  flatten(near_, b0, b1, near, ns, ranges_.host + orr);
  flatten(far_, b0, b1, far, fs, ranges_.host + orr + nrn);
  cudaMemcpyAsync(index_.dev.data() + oi, I, ni * sizeof(long), cudaMemcpyHostToDevice, st);
  if (nrn + nrf > 0)
    cudaMemcpyAsync(ranges_.dev.data() + orr, ranges_.host + orr, size_t(nrn + nrf) * sizeof(TreeSumRange),
                    cudaMemcpyHostToDevice, st);
  const long* Id = index_.dev.data() + oi;
  const TreeSumRange* Rd = ranges_.dev.data() + orr;
  queue_kernels(nb, Id, Id + 2 * nb, Rd, Id + 3 * nb + 1, Rd + nrn, tgt, n, acc_near, acc_far, grids, st);
  if (!grids) recs_.push_back({oi, orr, nb, nrn});  // (the bench replays the batches only)
  pack_s += wall_seconds() - t;
}

void TreeSumsDevice::queue_kernels(int nb, const long* batch, const long* near_start, const TreeSumRange* near,
                                   const long* far_start, const TreeSumRange* far, const double* tgt, long n,
                                   double* acc_near, double* acc_far, bool grids, void* stream) {
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  while (events_.size() < 3 * size_t(launches_ + 1)) {
    cudaEvent_t e;
    cudaEventCreate(&e);
    events_.push_back(e);
  }
  cudaEvent_t* ev = reinterpret_cast<cudaEvent_t*>(events_.data()) + 3 * launches_;
  const int variant = variant_from_env();
  unsigned long long* pairs = pairs_.data();
  cudaEventRecord(ev[0], st);
  Args an{tgt, n, nb, near_pool_.data(), batch, near_start, near, img_, eps_, acc_near, grids ? pairs + 2 : pairs};
  run_kernel(variant, an, st, "tree sums kernel (near)");
  cudaEventRecord(ev[1], st);
  Args af{tgt, n, nb, far_pool_.data(), batch, far_start, far, img_, eps_, acc_far, grids ? pairs + 2 : pairs + 1};
  run_kernel(variant, af, st, "tree sums kernel (far)");
  cudaEventRecord(ev[2], st);
  grid_launch_.push_back(grids);
  ++launches_;
}
#endif

void TreeSumsDevice::launch_device(int nb, const long* batch, const long* near_start, const TreeSumRange* near,
                                   const long* far_start, const TreeSumRange* far) {
#if defined(BEATNIK_DEVICE_COMPILE)
  if (nb <= 0 || n_ <= 0) return;
  queue_kernels(nb, batch, near_start, near, far_start, far, tgt_.data(), n_, acc_near_.data(), acc_far_.data(), false,
                next_stream());
#else
  (void)nb, (void)batch, (void)near_start, (void)near, (void)far_start, (void)far;
  exec::no_device_backend("tree solver sums");
#endif
}

void TreeSumsDevice::finish(double* acc_near, double* acc_far, long& near_pairs, long& far_pairs,
                            const std::function<const double*()>& far_extra) {
#if defined(BEATNIK_DEVICE_COMPILE)
  const auto D = exec::Space::Device, H = exec::Space::Host;
  const double t = wall_seconds();
  sync_streams();
  const cudaEvent_t* ev = reinterpret_cast<const cudaEvent_t*>(events_.data());
  for (int l = 0; l < launches_; ++l) {
    float a = 0, b = 0;
    cudaEventElapsedTime(&a, ev[3 * l], ev[3 * l + 1]);
    cudaEventElapsedTime(&b, ev[3 * l + 1], ev[3 * l + 2]);
    if (grid_launch_[l]) {
      cc_kernel_s += 1e-3 * (a + b);
    } else {
      near_kernel_s += 1e-3 * a;
      far_kernel_s += 1e-3 * b;
    }
  }
  const double* extra = far_extra ? far_extra() : nullptr;
  const long bench_call = tree_sums_bench_call();
  const bool bench_now = bench_call == calls_ + 1 && !wrapped_;
  std::vector<double> sums_far;  // the bench's reference: the far sums without the edge terms
  if (bench_now && extra && n_ > 0) {
    sums_far.resize(3 * n_);
    exec::copy(sums_far.data(), H, acc_far_.data(), D, 3 * n_);
  }
  if (extra && n_ > 0) add_into(3 * n_, acc_far_.data(), extra);  // the default stream: before the copy below
  if (down_) run_down();  // the far field's last additions, as the host's down() after edges()
  down_ = false;
  unsigned long long pairs[3] = {0, 0, 0};
  if (n_ > 0 && acc_near && acc_far) {
    exec::copy(acc_near, H, acc_near_.data(), D, 3 * n_);
    exec::copy(acc_far, H, acc_far_.data(), D, 3 * n_);
  }
  exec::copy(pairs, H, pairs_.data(), D, 3);
  near_pairs = static_cast<long>(pairs[0]);
  far_pairs = static_cast<long>(pairs[1]);
  cc_pairs = static_cast<long>(pairs[2]);
  finish_s = wall_seconds() - t;
  ++calls_;
  if (bench_call == calls_) {
    if (wrapped_) std::fprintf(stderr, "tree-sums-bench: call %d: the staging wrapped, no replay\n", calls_);
    else if (!acc_near || !acc_far) std::fprintf(stderr, "tree-sums-bench: call %d: the velocities stayed on the device, no replay\n", calls_);
    else bench(acc_near, extra ? sums_far.data() : acc_far, near_pairs, far_pairs);
  }
#else
  (void)acc_near, (void)acc_far, (void)near_pairs, (void)far_pairs, (void)far_extra;
  exec::no_device_backend("tree solver sums");
#endif
}

#if defined(BEATNIK_DEVICE_COMPILE)
// BEATNIK_TREE_SUMS_BENCH=k (measurement only): after the sums of this object's k-th call, every
// kernel variant runs the call's launches again, one after another on one stream (near, then
// far), twice; prints each one's device time and pairs/s, its largest difference from the call's
// velocities (relative to the largest |u|; the far sums before the edge terms are added), whether
// its two runs agree bitwise and whether its pair counts are the call's. Then once more with the
// counters (Stat) for the near and the far sums.
void TreeSumsDevice::bench(const double* acc_near, const double* acc_far, long near_pairs, long far_pairs) {
  if (n_ <= 0 || recs_.empty()) return;
  const auto D = exec::Space::Device, H = exec::Space::Host;
  exec::Buffer<double> bn(D, 3 * n_), bf(D, 3 * n_);
  exec::Buffer<unsigned long long> bp(D, 2);
  std::vector<double> hn(3 * n_), hf(3 * n_), first_n, first_f;
  cudaStream_t st = static_cast<cudaStream_t>(streams_[0]);
  cudaEvent_t e0, e1, e2;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventCreate(&e2);
  const auto maxrel = [&](const std::vector<double>& x, const double* ref) {
    double d = 0, m = 0;
    for (long k = 0; k < 3 * n_; ++k) {
      d = std::max(d, std::abs(x[k] - ref[k]));
      m = std::max(m, std::abs(ref[k]));
    }
    return m > 0 ? d / m : d;
  };
  for (int v : {0, 1, 2, 4, 5, 7, 8, 9})
    for (int rep = 0; rep < 2; ++rep) {
      bn.zero();
      bf.zero();
      bp.zero();
      cudaDeviceSynchronize();
      cudaEventRecord(e0, st);
      for (const LaunchRec& r : recs_) {
        const long* Id = index_.dev.data() + r.oi;
        Args an{tgt_.data(), n_,   r.nb,      near_pool_.data(), Id, Id + 2 * r.nb, ranges_.dev.data() + r.orr,
                img_,        eps_, bn.data(), bp.data()};
        run_kernel(v, an, st, "tree sums bench (near)");
      }
      cudaEventRecord(e1, st);
      for (const LaunchRec& r : recs_) {
        const long* Id = index_.dev.data() + r.oi;
        Args af{tgt_.data(), n_,   r.nb,      far_pool_.data(), Id, Id + 3 * r.nb + 1, ranges_.dev.data() + r.orr + r.nrn,
                img_,        eps_, bf.data(), bp.data() + 1};
        run_kernel(v, af, st, "tree sums bench (far)");
      }
      cudaEventRecord(e2, st);
      cudaEventSynchronize(e2);
      float tn = 0, tf = 0;
      cudaEventElapsedTime(&tn, e0, e1);
      cudaEventElapsedTime(&tf, e1, e2);
      unsigned long long p[2];
      exec::copy(p, H, bp.data(), D, 2);
      exec::copy(hn.data(), H, bn.data(), D, 3 * n_);
      exec::copy(hf.data(), H, bf.data(), D, 3 * n_);
      bool same = true;
      if (rep == 0) {
        first_n = hn;
        first_f = hf;
      } else {
        same = first_n == hn && first_f == hf;
      }
      std::fprintf(stderr,
                   "tree-sums-bench: variant %d run %d: near %.4f s %.3e pairs/s, far %.4f s %.3e pairs/s; "
                   "max rel diff to the call near %.2e far %.2e; pairs %s; %s\n",
                   v, rep, 1e-3 * tn, double(p[0]) / (1e-3 * tn), 1e-3 * tf, double(p[1]) / (1e-3 * tf),
                   maxrel(hn, acc_near), maxrel(hf, acc_far),
                   (long(p[0]) == near_pairs && long(p[1]) == far_pairs) ? "equal" : "DIFFER",
                   rep == 0 ? "-" : (same ? "bitwise repeatable" : "NOT REPEATABLE"));
    }
  exec::Buffer<unsigned long long> sn(D, kStatCount), sf(D, kStatCount);
  {
    const int v = kStatsVariant;
    sn.zero();
    sf.zero();
    for (const LaunchRec& r : recs_) {
      const long* Id = index_.dev.data() + r.oi;
      Args an{tgt_.data(), n_, r.nb, near_pool_.data(), Id, Id + 2 * r.nb, ranges_.dev.data() + r.orr, img_, eps_,
              bn.data(), bp.data(), sn.data()};
      run_kernel(v, an, st, "tree sums bench (near, counters)");
      Args af{tgt_.data(), n_, r.nb, far_pool_.data(), Id, Id + 3 * r.nb + 1, ranges_.dev.data() + r.orr + r.nrn,
              img_, eps_, bf.data(), bp.data() + 1, sf.data()};
      run_kernel(v, af, st, "tree sums bench (far, counters)");
    }
    cudaDeviceSynchronize();
    for (int f = 0; f < 2; ++f) {
      unsigned long long c[kStatCount];
      exec::copy(c, H, (f ? sf : sn).data(), D, kStatCount);
      std::fprintf(stderr,
                   "tree-sums-bench: counters %s: sources %llu, window %llu (all %llu, dropped %llu), "
                   "tiles plain %llu tested %llu, tested slots %llu rejected %llu, padding slots %llu, "
                   "idle slots %llu\n",
                   f ? "far" : "near", c[kSources], c[kWindow], c[kWindowAll], c[kWindowNone], c[kTilePlain],
                   c[kTileTested], c[kTestedSlots], c[kRejected], c[kPaddingSlots], c[kIdleSlots]);
    }
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaEventDestroy(e2);
}
#else
void TreeSumsDevice::bench(const double*, const double*, long, long) {}
#endif

void tree_rsqrt_cubed(const double* d, long n, double* f, double* e, double* g) {
#if defined(BEATNIK_DEVICE_COMPILE)
  if (n <= 0) return;
  const auto D = exec::Space::Device, H = exec::Space::Host;
  exec::Buffer<double> in(D, n), fo(D, n), eo(D, n), go(D, n);
  exec::copy(in.data(), D, d, H, n);
  rsqrt_cubed_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(in.data(), fo.data(), eo.data(), go.data(), n);
  exec::detail::check_launch("tree rsqrt cubed");
  exec::copy(f, H, fo.data(), D, n);
  exec::copy(e, H, eo.data(), D, n);
  exec::copy(g, H, go.data(), D, n);
#else
  (void)d, (void)n, (void)f, (void)e, (void)g;
  exec::no_device_backend("tree rsqrt cubed");
#endif
}

long tree_rsqrt_mismatches(const double* d, long n) {
#if defined(BEATNIK_DEVICE_COMPILE)
  if (n <= 0) return 0;
  const auto D = exec::Space::Device, H = exec::Space::Host;
  exec::Buffer<double> in(D, n);
  exec::Buffer<int> out(D, n);
  exec::copy(in.data(), D, d, H, n);
  rsqrt_check_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(in.data(), out.data(), n);
  exec::detail::check_launch("tree rsqrt check");
  std::vector<int> h(n);
  exec::copy(h.data(), H, out.data(), D, n);
  return std::count(h.begin(), h.end(), 1);
#else
  (void)d, (void)n;
  exec::no_device_backend("tree solver sums");
#endif
}

void tree_velocity_to_field(const mesh::SurfaceMesh& mesh, const double* host, const mesh::Field& out,
                            exec::Buffer<double>& scratch) {
  const long ns = mesh.layout().owned_count();
  exec::grow(scratch, exec::Space::Device, std::max(3 * ns, 1L));
  exec::copy(scratch.data(), exec::Space::Device, host, exec::Space::Host, 3 * ns);
  const mesh::FieldView o = out.view();
  const double* in = scratch.data();
  const int nj = mesh.layout().nj;
  exec::parallel_for(exec::Space::Device, exec::Range2{0, mesh.layout().ni, 0, nj},
                     [=] BEATNIK_HOST_DEVICE(int i, int j) {
                       const long k = long(i) * nj + j;
                       for (int c = 0; c < 3; ++c) o(c, i, j) = in[c * ns + k];
                     });
}

void tree_nan_field(const mesh::SurfaceMesh& mesh, const mesh::Field& out) {
  const mesh::FieldView o = out.view();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  exec::parallel_for(exec::Space::Device, exec::Range2{0, mesh.layout().ni, 0, mesh.layout().nj},
                     [=] BEATNIK_HOST_DEVICE(int i, int j) { o(0, i, j) = o(1, i, j) = o(2, i, j) = nan; });
}

}  // namespace beatnik::model
