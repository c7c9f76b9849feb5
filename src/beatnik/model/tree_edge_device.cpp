// Edge-term tables and sums in one space (tree_edge_device.hpp). Compiled by nvcc in the CUDA
// build (the lambdas run as device kernels there, the sort is two CUB radix sorts or CUB's
// segmented stable sort), by the host compiler otherwise (std::stable_sort per table).
#include "beatnik/model/tree_edge_device.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>
#include <string>

#include <omp.h>

#include "beatnik/base/env.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/exec/cuda_check.hpp"
#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/exec/stream.hpp"
#include "beatnik/model/tree_edge.hpp"
#include "beatnik/model/tree_interp.hpp"
#include "beatnik/model/tree_lagrange.hpp"
#include "beatnik/model/tree_rsqrt_device.hpp"

#if defined(BEATNIK_DEVICE_COMPILE)
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#endif

namespace beatnik::model {
namespace {

using Tab = TreeEdgeDevice::Tab;

#if defined(__CUDACC__)
#define EDGE_UNROLL_ALL _Pragma("unroll")
#else
#define EDGE_UNROLL_ALL _Pragma("GCC unroll 8")
#endif

#if defined(BEATNIK_DEVICE_COMPILE)
using exec::cuda_check;
#endif

// The last table in [0, nt) whose field `key` is ≤ i (ascending; the first's is 0).
BEATNIK_HOST_DEVICE inline int table_of(const Tab* t, int nt, long i, long Tab::*key) {
  int lo = 0, hi = nt - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (t[mid].*key <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// The first k of the sorted keys whose nearest image from r is below `bound` (a₀ is
// non-increasing along them, so the test holds on a prefix): the edge_sum's cut_lo with
// bound m + K + 1, its cut_hi with m − K.
BEATNIK_HOST_DEVICE inline long cut(const double* key, long n, double r, double L, double h, int bound) {
  long a = 0, c = n;
  while (a < c) {
    const long mid = a + (c - a) / 2;
    if (tree::nearest_image(r - key[mid], L, h) >= bound) a = mid + 1;
    else c = mid;
  }
  return a;
}

// The first index of key[0, n) whose predicate fails (nearest image ≥ bound on a prefix), for
// N (r, bound) at once, in lockstep: the same results as cut(), with the N chains of dependent
// loads interleaved (a fixed number of steps: ⌈log₂ n⌉).
template <int N>
BEATNIK_HOST_DEVICE inline void cuts(const double* key, long n, const double (&r)[N], const int (&bound)[N], double L,
                                     double h, long (&c)[N]) {
  long base[N] = {};
  long len = n;
  while (len > 1) {
    const long half = len / 2;
    EDGE_UNROLL_ALL
    for (int s = 0; s < N; ++s)
      base[s] = tree::nearest_image(r[s] - key[base[s] + half], L, h) >= bound[s] ? base[s] + half : base[s];
    len -= half;
  }
  EDGE_UNROLL_ALL
  for (int s = 0; s < N; ++s)
    c[s] = n == 0 ? 0 : base[s] + (tree::nearest_image(r[s] - key[base[s]], L, h) >= bound[s] ? 1 : 0);
}

BEATNIK_HOST_DEVICE inline long least(long a, long b) { return a < b ? a : b; }

BEATNIK_HOST_DEVICE inline void add_count(unsigned long long* p, unsigned long long v) {
  if (v == 0) return;
#if defined(__CUDA_ARCH__)
  atomicAdd(p, v);
#else
  __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

// br_pair, on the device with rsqrt_normal when kFast (the same arithmetic, so the same bits).
template <bool kFast>
BEATNIK_HOST_DEVICE inline void edge_pair(double tx, double ty, double tz, double sx, double sy, double sz, double qx,
                                          double qy, double qz, double eps, double& ux, double& uy, double& uz) {
#if defined(__CUDA_ARCH__)
  if constexpr (kFast) {
    const double rx = tx - sx, ry = ty - sy, rz = tz - sz;
    const double d = rx * rx + ry * ry + rz * rz + eps;
    const double y = tree::rsqrt_normal(d);
    const double f = y * y * y;
    ux += (qy * rz - qz * ry) * f;
    uy += (qz * rx - qx * rz) * f;
    uz += (qx * ry - qy * rx) * f;
    return;
  }
#endif
  br_pair(tx, ty, tz, sx, sy, sz, qx, qy, qz, eps, ux, uy, uz);
}

// Sign · the velocity at (x, y, z) of the sorted sources [k0, k1) of s (n each), shifted by (ox, oy).
// kUnroll > 1: the loop unrolled (several sources' loads issued before their pairs; the pairs
// still added in order: the same bits).
template <bool kFast = false, int kUnroll = 1>
BEATNIK_HOST_DEVICE inline void direct(const double* s, long n, long k0, long k1, double ox, double oy, double x,
                                       double y, double z, double eps, double sign, double* v) {
  double wx = 0.0, wy = 0.0, wz = 0.0;
#if defined(__CUDACC__)
#pragma unroll(kUnroll)
#endif
  for (long k = k0; k < k1; ++k)
    edge_pair<kFast>(x, y, z, s[k] + ox, s[n + k] + oy, s[2 * n + k], s[3 * n + k], s[4 * n + k], s[5 * n + k], eps,
                     wx, wy, wz);
  v[0] += sign * wx;
  v[1] += sign * wy;
  v[2] += sign * wz;
}

// The kernels: free functions (nvcc's extended lambdas may not live in a private member).

// Sort keys (coordinate `axis`, +0.0 so that −0 sorts with +0 as `<` does) and source numbers.
void keys_pass(exec::Space S, long N, const Tab* tabs, int nt, const double* pool, double* keys, int* vals) {
  exec::parallel_for(S, N, [=] BEATNIK_HOST_DEVICE(long i) {
    const Tab& t = tabs[table_of(tabs, nt, i, &Tab::item)];
    const long r = i - t.item;
    keys[i] = pool[t.src + t.axis * t.stride + r] + 0.0;
    vals[i] = static_cast<int>(r);
  });
}

// Each table's segment sorted by key, ties in their input (tree) order. scratch(bytes) gives
// the device sort's scratch.
template <class Scratch>
void stable_sort(exec::Space S, long N, int nt, const Tab* host, const long* segs, const double* keys,
                 double* keys_out, const int* vals, int* vals_out, Scratch&& scratch) {
  if (S == exec::Space::Host) {  // vals are 0 .. n−1 per segment
    (void)vals, (void)segs, (void)scratch;
#pragma omp parallel for schedule(dynamic, 1)
    for (int k = 0; k < nt; ++k) {
      const long a = host[k].item, n = host[k].n;
      int* v = vals_out + a;
      std::iota(v, v + n, 0);
      std::stable_sort(v, v + n, [&](int x, int y) { return keys[a + x] < keys[a + y]; });
      for (long r = 0; r < n; ++r) keys_out[a + r] = keys[a + v[r]];
    }
    return;
  }
#if defined(BEATNIK_DEVICE_COMPILE)
  (void)host;
  size_t bytes = 0;
  cudaError_t e = cub::DeviceSegmentedSort::StableSortPairs(nullptr, bytes, keys, keys_out, vals, vals_out, N, nt, segs,
                                                            segs + 1, exec::detail::stream());
  if (e == cudaSuccess) {
    void* temp = scratch(std::max<size_t>(bytes, 1));
    e = cub::DeviceSegmentedSort::StableSortPairs(temp, bytes, keys, keys_out, vals, vals_out, N, nt, segs, segs + 1,
                                                  exec::detail::stream());
  }
  if (e != cudaSuccess) throw Error(std::string("tree edge tables: CUB segmented sort failed: ") + cudaGetErrorString(e));
#else
  (void)N, (void)segs, (void)scratch, (void)host;
  exec::no_device_backend("tree edge tables");
#endif
}

// The same permutation without a host wait (device): CUB's segmented sort reads its segment
// groups' sizes back to the host and synchronizes the stream, which holds the host until every
// earlier piece on the stream is done. Instead the piece's items are sorted by key (a stable
// radix sort: ties keep their input, tree, order), then by table (stable again, so each table's
// items stay in key order): per table the stable sort by key, as the segmented sort gives.
// vals_out: each sorted item's position in its table. idx, idx2, seg, seg2: N ints of scratch;
// keys2: N doubles.
// (Not a template: nvcc's extended lambdas may not live in one instantiated with a local type.)
void stable_sort_radix(long N, int nt, const Tab* tabs, const double* keys, double* keys2, int* idx, int* idx2,
                       int* seg, int* seg2, int* vals_out, const std::function<void*(size_t)>& scratch) {
#if defined(BEATNIK_DEVICE_COMPILE)
  const exec::Space S = exec::Space::Device;
  const int n = static_cast<int>(N);
  // Bits of the tables 0 .. nt − 1.
  const int seg_bits = std::max(1, 32 - __builtin_clz(static_cast<unsigned>(std::max(nt - 1, 1))));
  const cudaStream_t st = exec::detail::stream();
  size_t b1 = 0, b2 = 0;
  cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, b1, keys, keys2, idx, idx2, n, 0, 64, st);
  if (e == cudaSuccess) e = cub::DeviceRadixSort::SortPairs(nullptr, b2, seg, seg2, idx2, idx, n, 0, seg_bits, st);
  if (e == cudaSuccess) {
    size_t bytes = std::max<size_t>(std::max(b1, b2), 1);
    void* temp = scratch(bytes);
    exec::parallel_for(S, N, [=] BEATNIK_HOST_DEVICE(long i) { idx[i] = static_cast<int>(i); });
    e = cub::DeviceRadixSort::SortPairs(temp, b1, keys, keys2, idx, idx2, n, 0, 64, st);
    if (e == cudaSuccess) {
      exec::parallel_for(S, N, [=] BEATNIK_HOST_DEVICE(long j) { seg[j] = table_of(tabs, nt, idx2[j], &Tab::item); });
      e = cub::DeviceRadixSort::SortPairs(temp, b2, seg, seg2, idx2, idx, n, 0, seg_bits, st);
    }
    if (e == cudaSuccess)
      exec::parallel_for(S, N, [=] BEATNIK_HOST_DEVICE(long j) {
        vals_out[j] = static_cast<int>(idx[j] - tabs[seg2[j]].item);
      });
  }
  if (e != cudaSuccess) throw Error(std::string("tree edge tables: CUB radix sort failed: ") + cudaGetErrorString(e));
#else
  (void)N, (void)nt, (void)tabs, (void)keys, (void)keys2, (void)idx, (void)idx2, (void)seg, (void)seg2, (void)vals_out,
      (void)scratch;
  exec::no_device_backend("tree edge tables");
#endif
}

// The sorted sources of the tables' items [i0, i0 + N), and each one's Lagrange values on its
// grid (W per source, item i at lag[(i − i0)·W]). The values are formed in a local array and
// stored once (tree::lagrange writes each value, reads it back and divides it): at 1024² on an
// H200 16.5 -> 13.2 ms a call (isolated, ncu), still the tables' largest pass.
void gather_pass(exec::Space S, long i0, long N, const Tab* tabs, int nt, const double* pool, const int* vals,
                 const double* nodes, int p1, double* sorted, double* lag) {
  const int W = 3 * p1, NW = 6 * p1;
  exec::parallel_for(S, N, [=] BEATNIK_HOST_DEVICE(long q) {
    const long i = i0 + q;
    const int k = table_of(tabs, nt, i, &Tab::item);
    const Tab& t = tabs[k];
    const long r = i - t.item, from = t.src + vals[i];
    double v[6];
    for (int c = 0; c < 6; ++c) v[c] = pool[from + c * t.stride];
    double* o = sorted + t.sorted;
    for (int c = 0; c < 6; ++c) o[c * t.n + r] = v[c];
    const double* nd = nodes + size_t(k) * NW;
    double L[tree::kTreeMaxDegree + 1];
    for (int d = 0; d < 3; ++d) {
      tree::lagrange(v[d], t.dg[d], nd + d * p1, nd + W + d * p1, L);
      for (int j = 0; j <= t.dg[d]; ++j) lag[q * W + d * p1 + j] = L[j];
    }
  });
}

// Per table, block j and proxy of the (block, proxy) items [c0, c0 + items): the strengths of
// sources [j·block, (j+1)·block) into row j + 1 (their Lagrange values from item i0 on in lag).
void blocks_pass(exec::Space S, long c0, long items, long i0, const Tab* tabs, int nt, const double* sorted,
                 const double* lag, int p1, double* prefix) {
  const int W = 3 * p1;
  exec::parallel_for(S, items, [=] BEATNIK_HOST_DEVICE(long h) {
    const long i = c0 + h;
    const Tab& t = tabs[table_of(tabs, nt, i, &Tab::citem)];
    const long local = i - t.citem, j = local / t.m;
    const int idx = static_cast<int>(local % t.m), n1 = t.dg[1] + 1, n2 = t.dg[2] + 1;
    const int a = idx / (n1 * n2), b = (idx / n2) % n1, e = idx % n2;
    const double* q = sorted + t.sorted + 3 * t.n;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0;
    for (long r = j * t.block; r < (j + 1) * t.block; ++r) {
      const double* Lr = lag + (t.item + r - i0) * W;
      const double f = Lr[a] * Lr[p1 + b] * Lr[2 * p1 + e];
      s0 += f * q[r];
      s1 += f * q[t.n + r];
      s2 += f * q[2 * t.n + r];
    }
    double* o = prefix + t.prefix + (j + 1) * 3 * t.m;
    o[idx] = s0;
    o[t.m + idx] = s1;
    o[2 * t.m + idx] = s2;
  });
}

constexpr int kFuseThreads = 128, kFuseSrc = 64, kFusePer = 6;
// Rows (blocks of sources) per thread block: one, or several while a row's m proxies would
// leave most threads idle (m ≤ kFuseThreads / 2: the lower-degree sets) and their sources' values
// fit the shared array. add_tables counts the thread blocks with the same rule.
BEATNIK_HOST_DEVICE inline long fuse_rows(long m, long block) {
  if (2 * m > kFuseThreads) return 1;
  const long g = least(kFuseThreads / m, kFuseSrc / block);
  return g > 1 ? g : 1;
}
// The fused kernel's thread blocks for a table of `rows` rows.
inline long fused_blocks(long m, long block, long rows) {
  const long g = fuse_rows(m, block);
  return (rows + g - 1) / g;
}

#if defined(BEATNIK_DEVICE_COMPILE)
// The sorted copy alone (the fused tables' first pass): item i's six doubles.
void copy_pass(exec::Space S, long N, const Tab* tabs, int nt, const double* pool, const int* vals, double* sorted) {
  exec::parallel_for(S, N, [=] BEATNIK_HOST_DEVICE(long i) {
    const Tab& t = tabs[table_of(tabs, nt, i, &Tab::item)];
    const long r = i - t.item, from = t.src + vals[i];
    double* o = sorted + t.sorted;
    for (int c = 0; c < 6; ++c) o[c * t.n + r] = pool[from + c * t.stride];
  });
}

// The Lagrange values and the block sums in one kernel (device; BEATNIK_TREE_EDGE_TABLES=1, the
// default): a thread block per (table, row: block of sources), or per several rows of a small set
// (fuse_rows): the rows' sources' Lagrange values
// (gather_pass's, the same function on the same doubles) into shared memory kFuseSrc sources at
// a time, then each thread sums its proxies' strengths over the block's sources in order
// (blocks_pass's arithmetic): the same bits as gather_pass + blocks_pass, without the Lagrange
// values' buffer (3(p+1) doubles a source, written with a stride and read back; up to 3.6 GB
// with max_lagrange_items = 2²⁴ at degree 8). Beside the sums at 1024² on an H100 the tables
// took the same time either way (40–43 ms a call with the radix sort); its isolated time was
// not measured (gather_pass 15.7 + blocks_pass 7.4 ms).
// Each thread block's table (the fused kernel's): the search once per block in a kernel of its own
// (every thread of a block searching 15 levels of the tables at 1024² was latency the fused
// kernel's few resident blocks could not hide).
void block_tables(exec::Space S, long nb, const Tab* tabs, int nt, int* out) {
  exec::parallel_for(S, nb, [=] BEATNIK_HOST_DEVICE(long b) { out[b] = table_of(tabs, nt, b, &Tab::bitem); });
}

__global__ void __launch_bounds__(kFuseThreads) fused_blocks_kernel(const Tab* tabs, const int* btab,
                                                                     const double* sorted, const double* nodes, int p1,
                                                                     double* prefix) {
  extern __shared__ double fsh[];  // [kFuseSrc][3·p1] Lagrange values, then [3][kFuseSrc] strengths
  const int W = 3 * p1, NW = 6 * p1, tid = threadIdx.x;
  double* Ls = fsh;
  double* qs = fsh + kFuseSrc * W;
  const long gb = blockIdx.x;
  const int k = btab[gb];
  const Tab& t = tabs[k];
  const long B = t.block, m = t.m, tn = t.n, G = fuse_rows(m, B);
  const long j = (gb - t.bitem) * G;  // this thread block's first row
  const int n1 = t.dg[1] + 1, n2 = t.dg[2] + 1;
  const double* src = sorted + t.sorted;
  const double* nd = nodes + size_t(k) * NW;
  const auto fill = [&](long r0, int cnt) {
    for (int u = tid; u < 3 * cnt; u += kFuseThreads) {
      // Into a local array, then stored once (lagrange writing shared memory reloads every value:
      // its output may alias the nodes it reads).
      const int r = u % cnt, d = u / cnt;
      double L[tree::kTreeMaxDegree + 1];
      tree::lagrange(src[d * tn + r0 + r], t.dg[d], nd + d * p1, nd + W + d * p1, L);
      double* o = Ls + r * W + d * p1;
      for (int i = 0; i <= t.dg[d]; ++i) o[i] = L[i];
    }
    for (int u = tid; u < 3 * cnt; u += kFuseThreads) {
      const int r = u % cnt, c = u / cnt;
      qs[c * kFuseSrc + r] = src[(3 + c) * tn + r0 + r];
    }
  };
  if (G > 1) {
    // Rows j … j + nr − 1 at once: thread (g, idx) sums row j + g's B sources for proxy idx (the
    // same products and order as one row per thread block below).
    const long nr = least(G, t.rows - j);
    fill(j * B, static_cast<int>(nr * B));
    __syncthreads();
    const int g = static_cast<int>(tid / m), idx = static_cast<int>(tid % m);
    if (g >= nr) return;
    const int ia = idx / (n1 * n2), ib = (idx / n2) % n1, ie = idx % n2;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0;
    for (long r = g * B; r < (g + 1) * B; ++r) {
      const double* Lr = Ls + r * W;
      const double f = Lr[ia] * Lr[p1 + ib] * Lr[2 * p1 + ie];
      s0 += f * qs[r];
      s1 += f * qs[kFuseSrc + r];
      s2 += f * qs[2 * kFuseSrc + r];
    }
    double* o = prefix + t.prefix + (j + g + 1) * 3 * m;
    o[idx] = s0;
    o[m + idx] = s1;
    o[2 * m + idx] = s2;
    return;
  }
  const bool once = B <= kFuseSrc;  // the block's values fit: formed once for every proxy group
  if (once) {
    fill(j * B, static_cast<int>(B));
    __syncthreads();
  }
  for (long g0 = 0; g0 < m; g0 += kFusePer * kFuseThreads) {
    // Only the proxy groups this set has (uniform over the block): with m = 81 one of the six
    // (running all six computed five groups' sums that were never stored).
    const int nu = static_cast<int>(least(kFusePer, (m - g0 + kFuseThreads - 1) / kFuseThreads));
    double s[kFusePer][3];
    int ia[kFusePer], ib[kFusePer], ie[kFusePer];
#pragma unroll
    for (int u = 0; u < kFusePer; ++u) {
      const long idx = g0 + tid + u * kFuseThreads;
      const int id = idx < m ? static_cast<int>(idx) : 0;
      ia[u] = id / (n1 * n2), ib[u] = (id / n2) % n1, ie[u] = id % n2;
      s[u][0] = s[u][1] = s[u][2] = 0.0;
    }
    for (long r0 = j * B; r0 < (j + 1) * B; r0 += kFuseSrc) {
      const int cnt = static_cast<int>(least(kFuseSrc, (j + 1) * B - r0));
      if (!once) {
        __syncthreads();
        fill(r0, cnt);
        __syncthreads();
      }
      for (int r = 0; r < cnt; ++r) {
        const double* Lr = Ls + r * W;
        const double q0 = qs[r], q1 = qs[kFuseSrc + r], q2 = qs[2 * kFuseSrc + r];
#pragma unroll
        for (int u = 0; u < kFusePer; ++u) {
          if (u < nu) {
            const double f = Lr[ia[u]] * Lr[p1 + ib[u]] * Lr[2 * p1 + ie[u]];
            s[u][0] += f * q0;
            s[u][1] += f * q1;
            s[u][2] += f * q2;
          }
        }
      }
    }
    double* o = prefix + t.prefix + (j + 1) * 3 * m;
#pragma unroll
    for (int u = 0; u < kFusePer; ++u) {
      const long idx = g0 + tid + u * kFuseThreads;
      if (idx < m) {
        o[idx] = s[u][0];
        o[m + idx] = s[u][1];
        o[2 * m + idx] = s[u][2];
      }
    }
  }
}
#endif

// The tables' passes: `asked` unless −1, else BEATNIK_TREE_EDGE_TABLES, else 1. 0: the Lagrange
// values into a buffer (gather_pass) then the block sums (blocks_pass); 1: the sorted copy
// (copy_pass) then fused_blocks_kernel (device; the host runs 0 whatever it is).
int table_pass_variant(int asked) {
  static const int knob = int(env::integer("BEATNIK_TREE_EDGE_TABLES", 0, 1).value_or(1));
  const int v = asked >= 0 ? asked : knob;
  if (v < 0 || v > 1) throw Error("tree edge tables: variant 0 or 1 (BEATNIK_TREE_EDGE_TABLES)");
  return v;
}

// Whether the fused tables share sorted copies (TreeEdgeDevice::share_sorted): `asked` unless −1,
// else BEATNIK_TREE_EDGE_SHARE, else 1. The default since 2026-12-02, sixth session: with the
// lookups in a flat map (~0.5 ms a call for 33k keys, ~3 before) the 1024² call on one H200 took
// 98.0–99.9 ms against 100.1–100.8 copying, three interleaved rounds, where the GPU set the call
// (docs/tree-log.md "The sorted copies shared by default").
bool share_variant(int asked) {
  static const int knob = int(env::integer("BEATNIK_TREE_EDGE_SHARE", 0, 1).value_or(1));
  const int v = asked >= 0 ? asked : knob;
  if (v > 1) throw Error("tree edge tables: sharing 0 or 1 (BEATNIK_TREE_EDGE_SHARE)");
  return v == 1;
}

// Per table and proxy: row 0 zero, each further row the running sum of the blocks, in order.
// kScanRows rows are loaded at a time before they are summed (the same additions in the same
// order): one row at a time, each load waiting behind the store before it, took 18.0 ms a call
// at 1024² on an H200 (isolated, ncu), 3.7 ms so.
constexpr int kScanRows = 8;
void scan_pass(exec::Space S, long items, const Tab* tabs, int nt, double* prefix) {
  exec::parallel_for(S, items, [=] BEATNIK_HOST_DEVICE(long i) {
    const Tab& t = tabs[table_of(tabs, nt, i, &Tab::pitem)];
    const long idx = i - t.pitem, row = 3L * t.m;
    double* P = prefix + t.prefix + idx;
    double v[3] = {0.0, 0.0, 0.0};
    for (int c = 0; c < 3; ++c) P[c * t.m] = 0.0;
    for (long j0 = 1; j0 <= t.rows; j0 += kScanRows) {
      const long u1 = least(kScanRows, t.rows + 1 - j0);
      double b[3][kScanRows] = {};
      EDGE_UNROLL_ALL
      for (int u = 0; u < kScanRows; ++u)
        if (u < u1)
          for (int c = 0; c < 3; ++c) b[c][u] = P[(j0 + u) * row + c * t.m];
      EDGE_UNROLL_ALL
      for (int u = 0; u < kScanRows; ++u)
        if (u < u1)
          for (int c = 0; c < 3; ++c) {
            v[c] += b[c][u];
            P[(j0 + u) * row + c * t.m] = v[c];
          }
    }
  });
}

struct SumArgs {  // what the sum kernel reads and writes
  long n;       // targets (the stride of tgt and acc)
  long q0, nq;  // this launch's: [q0, q0 + nq)
  const double* tgt;
  int nb;
  const long *first, *start;
  const EdgeTermDev* terms;
  const Tab* tabs;
  const double *sorted, *prefix, *prox;
  BRImages img;
  double eps;
  double* acc;
  unsigned long long* counts;
};

// Target q: its batch's edge terms in list order (tree_edge.cpp's edge_sum, term by term). U:
// the proxy loop unrolled U times, 0 as the compiler chooses (the pairs still added one by one
// in order: the same bits); the device kernel's variants differ in U and their occupancy only.
// kLockstep: the two cuts searched together (cuts<2>) and the direct loops unrolled by 4, so
// that independent loads overlap (the same cuts, the same additions: the same bits).
template <int U, bool kFast = false, bool kLockstep = false>
BEATNIK_HOST_DEVICE inline void sum_target(long q, const SumArgs a) {
  constexpr int kDirectUnroll = kLockstep ? 4 : 1;
  const long n = a.n;
  const BRImages& img = a.img;
  const double eps = a.eps;
  double u[3] = {0.0, 0.0, 0.0};
  if (a.nb > 0 && q >= a.first[0] && q < a.first[a.nb]) {
    int b = 0, hb = a.nb - 1;  // the last batch whose first target is ≤ q
    while (b < hb) {
      const int mid = (b + hb + 1) / 2;
      if (a.first[mid] <= q) b = mid;
      else hb = mid - 1;
    }
    const double x = a.tgt[q], y = a.tgt[n + q], z = a.tgt[2 * n + q];
    unsigned long long pp = 0, dp = 0;
    for (long i = a.start[b]; i < a.start[b + 1]; ++i) {
      const EdgeTermDev e = a.terms[i];
      const Tab& t = a.tabs[e.table];
      const int d = t.axis, mm = d == 0 ? e.mx : e.my, m = t.m, K = img.k;
      // No img.period[d]: indexed by a variable it would put the arguments on the stack.
      const double L = d == 0 ? img.period[0] : img.period[1], h = img.centred ? 0.5 * L : 0.0;
      const double r = d == 0 ? x : y;
      const double ox = e.mx * img.period[0], oy = e.my * img.period[1];
      const double* s = a.sorted + t.sorted;
      const double* key = s + d * t.n;
      long lo, hi;
      if constexpr (kLockstep) {
        long c[2];
        cuts<2>(key, t.n, {r, r}, {mm + K + 1, mm - K}, L, h, c);
        lo = c[0];
        hi = c[1];
      } else {
        lo = cut(key, t.n, r, L, h, mm + K + 1);
        hi = cut(key, t.n, r, L, h, mm - K);
      }
      if (hi <= lo) continue;
      const long B = t.block, rows = t.rows;
      const long jl = least((lo + B / 2) / B, rows), jh = least((hi + B / 2) / B, rows);
      double v[3] = {0.0, 0.0, 0.0};
      if (jh <= jl) {
        direct<kFast, kDirectUnroll>(s, t.n, lo, hi, ox, oy, x, y, z, eps, 1.0, v);
        dp += hi - lo;
      } else {
        const double *Qh = a.prefix + t.prefix + 3 * m * jh, *Ql = a.prefix + t.prefix + 3 * m * jl;
        const double *px = a.prox + t.prox, *py = px + m, *pz = py + m;
        auto pair = [&](int k) {
          edge_pair<kFast>(x, y, z, px[k] + ox, py[k] + oy, pz[k], Qh[k] - Ql[k], Qh[m + k] - Ql[m + k],
                  Qh[2 * m + k] - Ql[2 * m + k], eps, v[0], v[1], v[2]);
        };
        if constexpr (U == 0) {  // the compiler's choice
          for (int k = 0; k < m; ++k) pair(k);
        } else {
#if defined(__CUDACC__)
#pragma unroll(U)
#endif
          for (int k = 0; k < m; ++k) pair(k);
        }
        pp += m;
        if (jh * B <= hi) direct<kFast, kDirectUnroll>(s, t.n, jh * B, hi, ox, oy, x, y, z, eps, 1.0, v);
        else direct<kFast, kDirectUnroll>(s, t.n, hi, jh * B, ox, oy, x, y, z, eps, -1.0, v);
        if (jl * B <= lo) direct<kFast, kDirectUnroll>(s, t.n, jl * B, lo, ox, oy, x, y, z, eps, -1.0, v);
        else direct<kFast, kDirectUnroll>(s, t.n, lo, jl * B, ox, oy, x, y, z, eps, 1.0, v);
        dp += (hi > jh * B ? hi - jh * B : jh * B - hi) + (lo > jl * B ? lo - jl * B : jl * B - lo);
      }
      for (int c = 0; c < 3; ++c) u[c] += v[c];
    }
    add_count(a.counts, pp);
    add_count(a.counts + 1, dp);
  }
  for (int c = 0; c < 3; ++c) a.acc[c * n + q] = u[c];
}

#if defined(BEATNIK_DEVICE_COMPILE)
// A thread per target, as parallel_for's kernel, with launch bounds: at least MinBlocks blocks of
// kSumThreads per multiprocessor (parallel_for's kernel takes 102 registers: 16 warps of 64;
// the kernel waits on its binary searches' loads and the pairs' FP64 chains, so more warps pay).
constexpr int kSumThreads = 256;
template <int U, int MinBlocks, bool kFast = false, bool kLockstep = false>
__global__ void __launch_bounds__(kSumThreads, MinBlocks) edge_sum_kernel(SumArgs a) {
  const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < a.nq) sum_target<U, kFast, kLockstep>(a.q0 + i, a);
}

// The warp kernel (variants 8, 9): a warp per batch, two targets per lane (targets g + lane and
// g + 32 + lane of each group of 64), the batch's terms in list order as sum_target takes them,
// so every target's additions are sum_target's, in the same order (the same bits):
// * the four cuts of a lane's two targets searched in lockstep (a fixed number of steps, the
//   same for the warp: the table's length; any search finds the same cut, the predicate being
//   monotone along the sorted keys);
// * the proxy pairs chunk by chunk of kChunk proxies: the chunk's proxies and the prefix rows
//   the warp's targets read (a slot per distinct row of the lanes' A targets' low rows, B's low,
//   A's high, B's high: __match_any_sync; at most kRows slots) staged in shared memory by
//   coalesced loads, then each lane's two targets against the chunk (one target per thread read
//   its rows from global memory, many rows per warp instruction); more rows than kRows (or kStage
//   false): read from global memory as sum_target does;
// * the direct pairs beside the rows: the lane's two targets' loops interleaved;
// * the pair without the library rsqrt's branch (rsqrt_normal).
// Measured (2026-11-27, one H100, 1024², ncu, isolated): 49.0 ms a call (8) and 51.3 (11)
// against 44.8 for variant 4, every warp term staged: slower. The kernels are not bound by
// bandwidth (L2 0.5–0.6 TB/s, DRAM 0.1 TB/s) but by the latency of dependent loads (the cuts'
// searches, the staging before each chunk, the direct loops) with few warps (168 registers:
// 12 warps a multiprocessor). Kept as variants, the base for staging pipelined ahead of the
// pairs (docs/tree-log.md "The edge stage's sort, kernel and tables").
constexpr int kWarpThreads = 128, kWarpsPerBlock = kWarpThreads / 32;
template <int kChunk, int kRows>
struct WarpStage {
  double row[kRows * 3][kChunk + 1];  // (row slot, component) × proxy; +1: the slots' banks differ
  double p[3][kChunk];
  int j[kRows];  // each slot's row
};
static_assert(sizeof(WarpStage<16, 28>) * kWarpsPerBlock <= 48 * 1024, "static shared memory");
static_assert(sizeof(WarpStage<8, 48>) * kWarpsPerBlock <= 48 * 1024, "static shared memory");

template <bool kStage, int MinBlocks, int kChunk = 16, int kRows = 28>
__global__ void __launch_bounds__(kWarpThreads, MinBlocks) edge_warp_kernel(SumArgs a) {
  __shared__ WarpStage<kChunk, kRows> stage[kWarpsPerBlock];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int b = blockIdx.x * kWarpsPerBlock + w;
  if (b >= a.nb) return;  // (the whole warp: no block-wide synchronisation below)
  WarpStage<kChunk, kRows>& S = stage[w];
  const unsigned full = 0xffffffffu;
  const long n = a.n;
  const BRImages& img = a.img;
  const double eps = a.eps;
  const long f0 = a.first[b], f1 = a.first[b + 1], i0 = a.start[b], i1 = a.start[b + 1];
  unsigned long long pp = 0, dp = 0, staged = 0, unstaged = 0;  // (the last two: warp-uniform)
  for (long g = f0; g < f1; g += 64) {
    const long qa = g + lane, qb = g + 32 + lane;
    const bool va = qa < f1, vb = qb < f1;
    const long ca = va ? qa : g, cb = vb ? qb : g;  // idle slots search with the group's first target
    const double xa = a.tgt[ca], ya = a.tgt[n + ca], za = a.tgt[2 * n + ca];
    const double xb = a.tgt[cb], yb = a.tgt[n + cb], zb = a.tgt[2 * n + cb];
    double ua[3] = {0.0, 0.0, 0.0}, ub[3] = {0.0, 0.0, 0.0};
    for (long i = i0; i < i1; ++i) {
      const EdgeTermDev e = a.terms[i];
      const Tab& t = a.tabs[e.table];
      const int d = t.axis, mm = d == 0 ? e.mx : e.my, m = t.m, K = img.k;
      const double L = d == 0 ? img.period[0] : img.period[1], h = img.centred ? 0.5 * L : 0.0;
      const double ox = e.mx * img.period[0], oy = e.my * img.period[1];
      const long tn = t.n;
      const double* s = a.sorted + t.sorted;
      long c[4];
      cuts<4>(s + d * tn, tn, {d == 0 ? xa : ya, d == 0 ? xa : ya, d == 0 ? xb : yb, d == 0 ? xb : yb},
            {mm + K + 1, mm - K, mm + K + 1, mm - K}, L, h, c);
      const long loa = c[0], hia = c[1], lob = c[2], hib = c[3];
      const bool ta = va && hia > loa, tb = vb && hib > lob;
      if (!__any_sync(full, ta || tb)) continue;
      const long B = t.block, rows = t.rows;
      const long jla = least((loa + B / 2) / B, rows), jha = least((hia + B / 2) / B, rows);
      const long jlb = least((lob + B / 2) / B, rows), jhb = least((hib + B / 2) / B, rows);
      const bool pa = ta && jha > jla, pb = tb && jhb > jlb;
      double wa[3] = {0.0, 0.0, 0.0}, wb[3] = {0.0, 0.0, 0.0};  // the term's v per target
      const double *px = a.prox + t.prox, *py = px + m, *pz = py + m;
      const double* Q = a.prefix + t.prefix;
      if (__any_sync(full, pa || pb)) {
        // Slots for the distinct rows of each of the four (the lanes' A and B targets' low and
        // high rows; a row shared by a target A and a target B takes two slots).
        const long jv[4] = {jla, jlb, jha, jhb};
        const bool act[4] = {pa, pb, pa, pb};
        int slot[4], nslots = 0;
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const int v = act[u] ? static_cast<int>(jv[u]) : -1;
          const unsigned grp = __match_any_sync(full, v);
          const int leader = __ffs(grp) - 1;
          const unsigned leaders = __ballot_sync(full, act[u] && leader == lane);
          const int mine = nslots + __popc(leaders & ((1u << lane) - 1u));
          if (kStage && act[u] && leader == lane && mine < kRows) S.j[mine] = v;
          slot[u] = __shfl_sync(full, mine, leader);
          nslots += __popc(leaders);
        }
        if (kStage && nslots <= kRows) {
          ++staged;
          __syncwarp();
          const int sla = 3 * slot[0], slb = 3 * slot[1], sha = 3 * slot[2], shb = 3 * slot[3];
          const int nrc = 3 * nslots;
          for (int k0 = 0; k0 < m; k0 += kChunk) {
            const int kc = m - k0 < kChunk ? m - k0 : kChunk;
            for (int u = lane; u < 3 * kChunk; u += 32) {
              const int cc = u / kChunk, k = u % kChunk;
              if (k < kc) S.p[cc][k] = px[cc * m + k0 + k];
            }
            for (int u = lane; u < nrc * kChunk; u += 32) {
              const int rc = u / kChunk, k = u % kChunk;
              if (k < kc) {
                const long j = S.j[rc / 3];
                S.row[rc][k] = Q[3 * m * j + (rc % 3) * m + k0 + k];
              }
            }
            __syncwarp();
#pragma unroll 4
            for (int k = 0; k < kc; ++k) {
              const double sx = S.p[0][k] + ox, sy = S.p[1][k] + oy, sz = S.p[2][k];
              if (pa)
                edge_pair<true>(xa, ya, za, sx, sy, sz, S.row[sha][k] - S.row[sla][k],
                                S.row[sha + 1][k] - S.row[sla + 1][k], S.row[sha + 2][k] - S.row[sla + 2][k], eps,
                                wa[0], wa[1], wa[2]);
              if (pb)
                edge_pair<true>(xb, yb, zb, sx, sy, sz, S.row[shb][k] - S.row[slb][k],
                                S.row[shb + 1][k] - S.row[slb + 1][k], S.row[shb + 2][k] - S.row[slb + 2][k], eps,
                                wb[0], wb[1], wb[2]);
            }
            __syncwarp();
          }
        } else {
          ++unstaged;
          const double *Qha = Q + 3 * m * jha, *Qla = Q + 3 * m * jla, *Qhb = Q + 3 * m * jhb, *Qlb = Q + 3 * m * jlb;
#pragma unroll 4
          for (int k = 0; k < m; ++k) {
            const double sx = px[k] + ox, sy = py[k] + oy, sz = pz[k];
            if (pa)
              edge_pair<true>(xa, ya, za, sx, sy, sz, Qha[k] - Qla[k], Qha[m + k] - Qla[m + k],
                              Qha[2 * m + k] - Qla[2 * m + k], eps, wa[0], wa[1], wa[2]);
            if (pb)
              edge_pair<true>(xb, yb, zb, sx, sy, sz, Qhb[k] - Qlb[k], Qhb[m + k] - Qlb[m + k],
                              Qhb[2 * m + k] - Qlb[2 * m + k], eps, wb[0], wb[1], wb[2]);
          }
        }
      }
      // The direct pairs, in sum_target's order: a direct-only target its [lo, hi); a target with
      // proxy pairs the sources between jh·B and hi, then between jl·B and lo (signed).
      for (int seg = 0; seg < 2; ++seg) {
        long a0 = 0, a1 = 0, b0 = 0, b1 = 0;
        double sa = 1.0, sb = 1.0;
        bool ha = false, hb = false;  // the segment exists (its signed sum is added, empty or not)
        if (ta) {
          if (!pa) {
            ha = seg == 0, a0 = loa, a1 = hia;
          } else if (seg == 0) {
            ha = true;
            if (jha * B <= hia) a0 = jha * B, a1 = hia;
            else a0 = hia, a1 = jha * B, sa = -1.0;
          } else {
            ha = true;
            if (jla * B <= loa) a0 = jla * B, a1 = loa, sa = -1.0;
            else a0 = loa, a1 = jla * B;
          }
        }
        if (tb) {
          if (!pb) {
            hb = seg == 0, b0 = lob, b1 = hib;
          } else if (seg == 0) {
            hb = true;
            if (jhb * B <= hib) b0 = jhb * B, b1 = hib;
            else b0 = hib, b1 = jhb * B, sb = -1.0;
          } else {
            hb = true;
            if (jlb * B <= lob) b0 = jlb * B, b1 = lob, sb = -1.0;
            else b0 = lob, b1 = jlb * B;
          }
        }
        if (!__any_sync(full, ha || hb)) break;
        const long na = ha ? a1 - a0 : 0, nbb = hb ? b1 - b0 : 0, most = na > nbb ? na : nbb;
        double xa3[3] = {0.0, 0.0, 0.0}, xb3[3] = {0.0, 0.0, 0.0};
        for (long k = 0; k < most; ++k) {
          if (k < na) {
            const long q = a0 + k;
            edge_pair<true>(xa, ya, za, s[q] + ox, s[tn + q] + oy, s[2 * tn + q], s[3 * tn + q], s[4 * tn + q],
                            s[5 * tn + q], eps, xa3[0], xa3[1], xa3[2]);
          }
          if (k < nbb) {
            const long q = b0 + k;
            edge_pair<true>(xb, yb, zb, s[q] + ox, s[tn + q] + oy, s[2 * tn + q], s[3 * tn + q], s[4 * tn + q],
                            s[5 * tn + q], eps, xb3[0], xb3[1], xb3[2]);
          }
        }
        if (ha) {
          for (int cc = 0; cc < 3; ++cc) wa[cc] += sa * xa3[cc];
          dp += na;
        }
        if (hb) {
          for (int cc = 0; cc < 3; ++cc) wb[cc] += sb * xb3[cc];
          dp += nbb;
        }
      }
      if (pa) pp += m;
      if (pb) pp += m;
      if (ta)
        for (int cc = 0; cc < 3; ++cc) ua[cc] += wa[cc];
      if (tb)
        for (int cc = 0; cc < 3; ++cc) ub[cc] += wb[cc];
    }
    if (va)
      for (int cc = 0; cc < 3; ++cc) a.acc[cc * n + qa] = ua[cc];
    if (vb)
      for (int cc = 0; cc < 3; ++cc) a.acc[cc * n + qb] = ub[cc];
  }
  for (int o = 16; o > 0; o /= 2) {
    pp += __shfl_down_sync(full, pp, o);
    dp += __shfl_down_sync(full, dp, o);
  }
  if (lane == 0) {
    add_count(a.counts, pp);
    add_count(a.counts + 1, dp);
    add_count(a.counts + 2, staged);
    add_count(a.counts + 3, unstaged);
  }
}

#endif

// The kernel's variant: `asked` unless −1, else BEATNIK_TREE_EDGE_KERNEL (for measurements),
// else kDefaultSumVariant. 0: parallel_for's kernel; 1 … 7: the launch-bounded thread-per-target
// ones of sum_pass (unroll, blocks per multiprocessor; 7 with rsqrt_normal; 12 and 13: 4 and 7 with
// the cuts searched in lockstep and the direct loops unrolled); 8 – 10: the warp
// kernel (8 with the staged rows, 9 without, both ≥ 3 blocks of 4 warps a multiprocessor; 10 as
// 8 with ≥ 4 blocks; 11 as 8 with chunks of 8 proxies and up to 48 rows). On one H100 at 1024²
// (ncu, isolated, 2026-11-27): 4 44.8 ms a call, 7 44.7, 8 49.0, 11 51.3; beside the sums 4
// 47.8, 7 47.3, 8 53.6–67.8, 9 49.3, 10 55.7, 11 72.8. On 2026-11-28 (ncu, isolated, 3 calls): 4
// 51.0 ms a call, 12 50.0, 13 49.0 (128 registers): 13 is the default since. Variant 4 (80 registers, 24 warps a multiprocessor, a few
// spills): at 1024² on an H200 the kernel took 0.048 s a call beside the sums against 0.062 for
// variant 0 (102 registers, 16 warps), 0.050 for 1–3, 0.060 for 6 (64 registers, spilling;
// docs/tree-log.md "The edge stage's kernel and tables").
constexpr int kDefaultSumVariant = 13, kSumVariants = TreeEdgeDevice::kKernelVariants;
int sum_variant(int asked) {
  static const int knob = int(env::integer("BEATNIK_TREE_EDGE_KERNEL", 0, kSumVariants - 1).value_or(kDefaultSumVariant));
  const int v = asked >= 0 ? asked : knob;
  if (v < 0 || v >= kSumVariants) throw Error("tree edge sums: kernel variant 0 to " + std::to_string(kSumVariants - 1) + " (BEATNIK_TREE_EDGE_KERNEL)");
  return v;
}

// Per target: its batch's edge terms (sum_target), one thread each on the device, or a warp per
// batch (variants 8, 9).
void sum_pass(exec::Space S, const SumArgs& a, int variant) {
#if defined(BEATNIK_DEVICE_COMPILE)
  if (S == exec::Space::Device && variant >= 8 && variant <= 11 && a.nb > 0) {  // (8 – 11)
    const unsigned g = static_cast<unsigned>((a.nb + kWarpsPerBlock - 1) / kWarpsPerBlock);
    cudaStream_t st = exec::detail::stream();
    if (variant == 8) edge_warp_kernel<true, 3><<<g, kWarpThreads, 0, st>>>(a);
    else if (variant == 9) edge_warp_kernel<false, 3><<<g, kWarpThreads, 0, st>>>(a);
    else if (variant == 10) edge_warp_kernel<true, 4><<<g, kWarpThreads, 0, st>>>(a);
    else edge_warp_kernel<true, 3, 8, 48><<<g, kWarpThreads, 0, st>>>(a);
    exec::detail::check_launch("tree edge sums (warp kernel)");
    return;
  }
  if (S == exec::Space::Device && variant > 0 && a.nq > 0) {
    const unsigned g = static_cast<unsigned>((a.nq + kSumThreads - 1) / kSumThreads);
    cudaStream_t st = exec::detail::stream();
    switch (variant) {
      case 1: edge_sum_kernel<0, 2><<<g, kSumThreads, 0, st>>>(a); break;
      case 2: edge_sum_kernel<2, 2><<<g, kSumThreads, 0, st>>>(a); break;
      case 3: edge_sum_kernel<4, 2><<<g, kSumThreads, 0, st>>>(a); break;
      case 4: edge_sum_kernel<0, 3><<<g, kSumThreads, 0, st>>>(a); break;
      case 5: edge_sum_kernel<2, 3><<<g, kSumThreads, 0, st>>>(a); break;
      case 6: edge_sum_kernel<0, 4><<<g, kSumThreads, 0, st>>>(a); break;
      case 12: edge_sum_kernel<0, 3, false, true><<<g, kSumThreads, 0, st>>>(a); break;
      case 13: edge_sum_kernel<4, 2, true, true><<<g, kSumThreads, 0, st>>>(a); break;
      default: edge_sum_kernel<4, 2, true><<<g, kSumThreads, 0, st>>>(a); break;
    }
    exec::detail::check_launch("tree edge sums");
    return;
  }
#endif
  // (elsewhere one loop; variants 12 and 13 its lockstep cuts, so the host tests cover them too)
  if (variant >= 12) exec::parallel_for(S, a.nq, [=] BEATNIK_HOST_DEVICE(long i) { sum_target<0, false, true>(a.q0 + i, a); });
  else exec::parallel_for(S, a.nq, [=] BEATNIK_HOST_DEVICE(long i) { sum_target<0>(a.q0 + i, a); });
}

}  // namespace

TreeEdgeDevice::TreeEdgeDevice(exec::Space space)
    : space_(space),
      tabs_(space, 0),
      nodes_(space, 0),
      keys_(space, 0),
      keys_sorted_(space, 0),
      sorted_(space, 0),
      prefix_(space, 0),
      lagrange_(space, 0),
      acc_(space, 0),
      vals_(space, 0),
      vals_sorted_(space, 0),
      idx2_(space, 0),
      seg_(space, 0),
      seg2_(space, 0),
      segs_(space, 0),
      first_(space, 0),
      start_(space, 0),
      terms_(space, 0),
      counts_(space, 4),
      temp_(space, 0) {
#if defined(BEATNIK_DEVICE_COMPILE)
  if (space_ == exec::Space::Device) {
    // A blocking stream: its work follows the default stream's synchronous copies (the pools
    // and targets are filled there) and runs beside the sums' streams, which are blocking too.
    // At the device's highest priority (BEATNIK_TREE_EDGE_PRIORITY=normal: the default one):
    // the edge stage's latency-bound kernel then runs beside the sums instead of alone after
    // them, and the sums fill the call's end (2048² on one H200: 0.558 → 0.536 s a call,
    // docs/tree-log.md "The edge stream's priority").
    static const std::optional<std::string> knob = env::choice("BEATNIK_TREE_EDGE_PRIORITY", {"high", "normal"});
    int least = 0, greatest = 0;
    cuda_check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
    const int priority = knob.value_or("high") == "high" ? greatest : least;
    cudaStream_t st;
    cuda_check(cudaStreamCreateWithPriority(&st, cudaStreamDefault, priority), "cudaStreamCreateWithPriority");
    stream_ = st;
  }
#endif
}

TreeEdgeDevice::~TreeEdgeDevice() {
#if defined(BEATNIK_DEVICE_COMPILE)
  if (stream_) cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
  for (void* e : events_) cudaEventDestroy(static_cast<cudaEvent_t>(e));
  if (stage_) cudaFreeHost(stage_);
  if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
#endif
}

namespace {
void record(void* event, void* stream) {
#if defined(BEATNIK_DEVICE_COMPILE)
  if (event)
    cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)), "cudaEventRecord");
#else
  (void)event, (void)stream;
#endif
}

double elapsed(void* a, void* b) {
  float ms = 0;
#if defined(BEATNIK_DEVICE_COMPILE)
  cuda_check(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(a), static_cast<cudaEvent_t>(b)), "cudaEventElapsedTime");
#else
  (void)a, (void)b;
#endif
  return 1e-3 * ms;
}
}  // namespace

void TreeEdgeDevice::sync() const {
#if defined(BEATNIK_DEVICE_COMPILE)
  if (stream_) cuda_check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)), "cudaStreamSynchronize");
#endif
}

void* TreeEdgeDevice::event() {
#if defined(BEATNIK_DEVICE_COMPILE)
  if (!stream_) return nullptr;
  if (next_event_ == events_.size()) {
    cudaEvent_t ev;
    cuda_check(cudaEventCreate(&ev), "cudaEventCreate");
    events_.push_back(ev);
  }
  return events_[next_event_++];
#else
  return nullptr;
#endif
}

#if defined(BEATNIK_DEVICE_COMPILE)
// A large upload's bytes into the page-locked staging by the team, a small one's by this thread:
// one thread's memcpy was most of `.edge.copy` (one H200, four interleaved rounds: 2048² 18.0 ->
// 3.9 ms a call, 1024² 4.5 -> 3.0; docs/tree-log.md "The edge uploads by the team").
static void copy_to_stage(char* to, const void* from, size_t bytes) {
  constexpr size_t kChunk = size_t(1) << 18;
  if (bytes < 4 * kChunk || omp_in_parallel()) {
    std::memcpy(to, from, bytes);
    return;
  }
  const long chunks = static_cast<long>((bytes + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static)
  for (long c = 0; c < chunks; ++c) {
    const size_t at = size_t(c) * kChunk;
    std::memcpy(to + at, static_cast<const char*>(from) + at, std::min(kChunk, bytes - at));
  }
}
#endif

template <class T>
void TreeEdgeDevice::upload(T* dst, const T* v, size_t n) {
  if (n == 0) return;
  if (space_ == exec::Space::Host) {
    std::copy_n(v, n, dst);
    return;
  }
#if defined(BEATNIK_DEVICE_COMPILE)
  const size_t bytes = n * sizeof(T), at = (stage_used_ + 15) / 16 * 16;
  stage_peak_ = std::max(stage_peak_, at + bytes);  // begin() sizes the staging for the next call
  const void* from = v;
  if (stage_ && at + bytes <= stage_cap_) {
    copy_to_stage(stage_ + at, v, bytes);
    from = stage_ + at;
  }
  stage_used_ = at + bytes;
  cuda_check(cudaMemcpyAsync(dst, from, bytes, cudaMemcpyHostToDevice, static_cast<cudaStream_t>(stream_)),
             "cudaMemcpyAsync");
#else
  (void)dst, (void)v;
  exec::no_device_backend("tree edge tables");
#endif
}

template <class T>
void TreeEdgeDevice::grow(exec::Buffer<T>& b, size_t n, size_t keep) {
  n = std::max<size_t>(n, 1);
  if (b.size() >= n && b.data()) return;
  exec::Buffer<T> nb(space_, n + n / 2);
  keep = std::min(keep, b.size());
  if (keep > 0) {
    if (space_ == exec::Space::Host) {
      std::copy_n(b.data(), keep, nb.data());
    } else {
#if defined(BEATNIK_DEVICE_COMPILE)
      cuda_check(cudaMemcpyAsync(nb.data(), b.data(), keep * sizeof(T), cudaMemcpyDeviceToDevice,
                                 static_cast<cudaStream_t>(stream_)),
                 "cudaMemcpyAsync");
#endif
    }
  }
  // Queued work may still read the old buffer: freed at wait() (cudaFree would also wait here).
  if (b.data()) retired_.push_back(std::make_shared<exec::Buffer<T>>(std::move(b)));
  b = std::move(nb);
}

void TreeEdgeDevice::begin(const double* src_pool, const double* prox_pool, int p) {
  const double t0 = wall_seconds();
  sync();  // the previous call's work reads the buffers reused here
  retired_.clear();
  tabs_peak_ = std::max(tabs_peak_, static_cast<long>(host_tabs_.size()));
  sorted_peak_ = std::max(sorted_peak_, sorted_used_);
  prefix_peak_ = std::max(prefix_peak_, prefix_used_);
  host_tabs_.clear();
  sorted_of_.clear();
  shared_tables = 0;
  sorted_used_ = prefix_used_ = 0;
  // Room for the largest call so far, so that a steady call's pieces neither wait nor allocate.
  grow(tabs_, tabs_peak_);
  grow(sorted_, sorted_peak_);
  grow(prefix_, prefix_peak_);
#if defined(BEATNIK_DEVICE_COMPILE)
  if (stream_ && stage_peak_ > stage_cap_) {
    if (stage_) cudaFreeHost(stage_);
    stage_ = nullptr;
    stage_cap_ = 0;
    const size_t cap = stage_peak_ + stage_peak_ / 8;
    if (cudaMallocHost(reinterpret_cast<void**>(&stage_), cap) != cudaSuccess) stage_ = nullptr;
    else stage_cap_ = cap;  // (without it the uploads are pageable: correct, may wait)
  }
#endif
  stage_used_ = 0;
  next_event_ = 0;
  table_events_.clear();
  sum_events_.clear();
  src_pool_ = src_pool;
  prox_pool_ = prox_pool;
  p_ = p;
  bytes = 0;
  table_pieces = sum_pieces = 0;
  summed_ = false;
  n_ = 0;
  proxy_pairs = direct_pairs = 0;
  tables_s = kernel_s = copy_s = 0;
  host_s = wall_seconds() - t0;
}

void TreeEdgeDevice::build(const std::vector<EdgeTableSpec>& specs, const double* src_pool, const double* prox_pool,
                           int p) {
  begin(src_pool, prox_pool, p);
  add_tables(specs);
}

int TreeEdgeDevice::add_tables(const std::vector<EdgeTableSpec>& specs) {
  const exec::Space S = space_;
  const double t0 = wall_seconds();
  const int k0 = tables(), nt = static_cast<int>(specs.size());
  if (nt == 0) return k0;
  const int p = p_, p1 = p + 1, NW = 6 * p1;
  host_tabs_.resize(size_t(k0) + nt);
  Tab* piece = host_tabs_.data() + k0;
  std::vector<double> host_nodes(size_t(nt) * NW, 0.0);
  std::vector<long> host_segs(nt + 1, 0);
  const int tv = S == exec::Space::Device ? table_pass_variant(table_variant) : 0;
  // A sharing table has no items of its own (its `item` is the next table's: table_of, the last
  // table at or below an item, never picks it) and the sorted offset of the table it shares.
  const bool share = tv == 1 && share_variant(share_sorted);
  // Which tables share a sorted copy, looked up in parallel by shard (a random access a table:
  // one map in the offsets' serial loop took 15.8 ms a call at 2048² on an H200's host, the
  // shards 12.1); first[k] as ShardedKeyMap::find_first gives it.
  std::vector<long> first;
  if (share) {
    std::vector<ShardedKeyMap::Key> keys(nt);
#pragma omp parallel for schedule(static)
    for (int k = 0; k < nt; ++k) keys[k] = {specs[k].src, specs[k].n, specs[k].axis};
    first.resize(nt);
    sorted_of_.find_first(keys.data(), nt, first.data());
  }
  // The offsets: each table's sizes in parallel, their running sums, then the tables in parallel
  // (as one serial loop, after the shards' lookups, they took 2.4 ms a call at 1024² on an H200's
  // host).
  enum { kItem, kSorted, kPre, kCitem, kPitem, kBitem, kSums };
  std::vector<std::array<long, kSums>> at_k(size_t(nt) + 1);
  bool bad = false;
#pragma omp parallel for schedule(static) reduction(|| : bad)
  for (int k = 0; k < nt; ++k) {
    const EdgeTableSpec& e = specs[k];
    bad = bad || e.block < 1 || e.m < 1 || e.n < 0 || e.n > 0x7fffffffL || e.dg[0] > p || e.dg[1] > p || e.dg[2] > p;
    if (bad) continue;
    const long rows = e.n / e.block;
    const bool own = !share || first[k] == -1;  // else an earlier piece's copy, or a table's of this one
    at_k[k + 1] = {own ? e.n : 0, own ? 6 * e.n : 0, 3L * e.m * (rows + 1), rows * e.m, e.m,
                   fused_blocks(e.m, e.block, rows)};
  }
  if (bad) throw Error("tree edge tables: a bad table (a size out of range or a grid degree above p)");
  at_k[0] = {0, sorted_used_, prefix_used_, 0, 0, 0};
  for (int k = 0; k < nt; ++k)
    for (int i = 0; i < kSums; ++i) at_k[k + 1][i] += at_k[k][i];
  int shared = 0;
#pragma omp parallel for schedule(static) reduction(+ : shared)
  for (int k = 0; k < nt; ++k) {
    const EdgeTableSpec& e = specs[k];
    const std::array<long, kSums>& o = at_k[k];
    // Its own copy, an earlier piece's (first ≥ 0) or that of table −2 − first of this piece.
    const bool own = !share || first[k] == -1;
    const long at = own ? o[kSorted] : first[k] >= 0 ? first[k] : at_k[-2 - first[k]][kSorted];
    piece[k] = {o[kItem], at, o[kPre], o[kCitem], o[kPitem], o[kBitem], e.src, e.stride, e.n, e.prox, e.block,
                e.n / e.block, e.m, e.axis, {e.dg[0], e.dg[1], e.dg[2]}};
    host_segs[k] = o[kItem];
    shared += !own;
  }
  shared_tables += shared;
  const long item = at_k[nt][kItem], sorted = at_k[nt][kSorted], pre = at_k[nt][kPre];
  const long citem = at_k[nt][kCitem], pitem = at_k[nt][kPitem];
  [[maybe_unused]] const long bitem = at_k[nt][kBitem];  // (the fused kernel's blocks: device only)
  if (share) {  // the new keys' copies, for the pieces after this one
    std::vector<long> at(nt);
#pragma omp parallel for schedule(static)
    for (int k = 0; k < nt; ++k) at[k] = piece[k].sorted;
    sorted_of_.store_new(at.data());
  }
#pragma omp parallel for schedule(static)
  for (int k = 0; k < nt; ++k) {
    const EdgeTableSpec& e = specs[k];
    double* nd = &host_nodes[size_t(k) * NW];
    for (int d = 0; d < 3; ++d) tree::chebyshev(e.lo[d], e.hi[d], e.dg[d], nd + d * p1, nd + 3 * p1 + d * p1);
  }
  host_segs[nt] = item;
  exec::WorkStreamScope on(stream_);
  void* ev0 = event();
  record(ev0, stream_);
  // The call's tables grow in place (earlier pieces' tables kept); the piece's scratch is reused
  // piece after piece (in stream order).
  grow(tabs_, size_t(k0) + nt, k0);
  grow(sorted_, sorted, sorted_used_);
  grow(prefix_, pre, prefix_used_);
  sorted_used_ = sorted;
  prefix_used_ = pre;
  grow(nodes_, host_nodes.size());
  grow(segs_, host_segs.size());
  const double tc = wall_seconds();
  upload(tabs_.data() + k0, piece, nt);
  upload(nodes_.data(), host_nodes.data(), host_nodes.size());
  upload(segs_.data(), host_segs.data(), host_segs.size());
  copy_s += wall_seconds() - tc;
  const Tab* tabs = tabs_.data() + k0;
  const double* nd = nodes_.data();
  const long* sg = segs_.data();
  grow(keys_, item);
  grow(keys_sorted_, item);
  grow(vals_, item);
  grow(vals_sorted_, item);
  const double t1 = wall_seconds();
  if (item > 0) {
    keys_pass(S, item, tabs, nt, src_pool_, keys_.data(), vals_.data());
    // (CUB's scratch may grow: the old one is kept until wait(), as the other buffers.)
    const auto scratch = [&](size_t b) -> void* {
      grow(temp_, b);
      return temp_.data();
    };
    if (S == exec::Space::Device && radix_sort) {
      grow(idx2_, item);
      grow(seg_, item);
      grow(seg2_, item);
      stable_sort_radix(item, nt, tabs, keys_.data(), keys_sorted_.data(), vals_.data(), idx2_.data(), seg_.data(),
                        seg2_.data(), vals_sorted_.data(), scratch);
    } else {
      stable_sort(S, item, nt, piece, sg, keys_.data(), keys_sorted_.data(), vals_.data(), vals_sorted_.data(),
                  scratch);
    }
#if defined(BEATNIK_DEVICE_COMPILE)
    if (tv == 1) copy_pass(S, item, tabs, nt, src_pool_, vals_sorted_.data(), sorted_.data());
#endif
    // The Lagrange values (3(p+1) doubles a source, the largest buffer) for a group of whole
    // tables at a time, at most max_lagrange_items sources unless one table has more.
    std::vector<int> group{0};  // tables [group[g], group[g+1]) share one fill of the buffer
    long most = 0;
    for (int k0g = 0, k1; k0g < nt; k0g = k1) {
      for (k1 = k0g + 1; k1 < nt && piece[k1].item + piece[k1].n - piece[k0g].item <= max_lagrange_items;) ++k1;
      most = std::max(most, (k1 < nt ? piece[k1].item : item) - piece[k0g].item);
      group.push_back(k1);
    }
    if (tv == 0) grow(lagrange_, size_t(most) * 3 * p1);
    for (size_t g = 0; tv == 0 && g + 1 < group.size(); ++g) {
      const int a = group[g], b = group[g + 1];
      const long i0 = piece[a].item, i1 = b < nt ? piece[b].item : item;
      const long c0 = piece[a].citem, c1 = b < nt ? piece[b].citem : citem;
      gather_pass(S, i0, i1 - i0, tabs, nt, src_pool_, vals_sorted_.data(), nd, p1, sorted_.data(), lagrange_.data());
      blocks_pass(S, c0, c1 - c0, i0, tabs, nt, sorted_.data(), lagrange_.data(), p1, prefix_.data());
    }
  }
#if defined(BEATNIK_DEVICE_COMPILE)
  // (Outside the items' branch: a piece whose tables all share earlier copies has no items.)
  if (tv == 1 && bitem > 0) {
    const size_t sh = (size_t(kFuseSrc) * 3 * p1 + 3 * kFuseSrc) * sizeof(double);
    grow(btab_, bitem);
    block_tables(S, bitem, tabs, nt, btab_.data());
    fused_blocks_kernel<<<static_cast<unsigned>(bitem), kFuseThreads, sh, exec::detail::stream()>>>(
        tabs, btab_.data(), sorted_.data(), nd, p1, prefix_.data());
    exec::detail::check_launch("tree edge tables (fused block sums)");
  }
#endif
  scan_pass(S, pitem, tabs, nt, prefix_.data());
  void* ev1 = event();
  record(ev1, stream_);
  if (ev0) table_events_.push_back({ev0, ev1});
  else tables_s += wall_seconds() - t1;  // on the host the passes ran here; on the device wait() reads the events
  bytes = (sorted_used_ + prefix_used_) * long(sizeof(double));
  ++table_pieces;
  host_s += wall_seconds() - t0;
  return k0;
}

void TreeEdgeDevice::begin_sums(const double* tgt, long n, const BRImages& img, double eps) {
  tgt_ = tgt;
  n_ = n;
  img_ = img;
  eps_ = eps;
  summed_ = false;
  if (n <= 0) return;
  exec::WorkStreamScope on(stream_);
  grow(acc_, 3 * size_t(n));
  if (space_ == exec::Space::Host) {
    std::fill_n(acc_.data(), 3 * size_t(n), 0.0);
    counts_.zero();
  } else {
#if defined(BEATNIK_DEVICE_COMPILE)
    const cudaStream_t st = static_cast<cudaStream_t>(stream_);
    cuda_check(cudaMemsetAsync(acc_.data(), 0, 3 * size_t(n) * sizeof(double), st), "cudaMemsetAsync");
    cuda_check(cudaMemsetAsync(counts_.data(), 0, 4 * sizeof(unsigned long long), st), "cudaMemsetAsync");
#endif
  }
}

void TreeEdgeDevice::add_sums(const std::vector<long>& first, const std::vector<long>& start,
                              const std::vector<EdgeTermDev>& terms) {
  const double t0 = wall_seconds();
  const int nb = static_cast<int>(first.size()) - 1;
  const long nterms = static_cast<long>(terms.size());
  if (start.size() != first.size() || (nb >= 0 && (start.front() != 0 || start.back() != nterms)))
    throw Error("tree edge sums: batch and term lists do not match");
  if (nb <= 0 || nterms == 0 || n_ <= 0) return;
  if (first.back() > n_ || first.front() < 0) throw Error("tree edge sums: batches beyond the targets");
  int lo = 0, hi = -1;
#pragma omp parallel for reduction(min : lo) reduction(max : hi)
  for (long i = 0; i < nterms; ++i) {
    lo = std::min(lo, terms[i].table);
    hi = std::max(hi, terms[i].table);
  }
  if (lo < 0 || hi >= tables()) throw Error("tree edge sums: no such table");
  exec::WorkStreamScope on(stream_);
  // Scratch reused piece after piece: the stream runs this piece's copies after the last kernel.
  grow(first_, first.size());
  grow(start_, start.size());
  grow(terms_, terms.size());
  const double tc = wall_seconds();
  upload(first_.data(), first.data(), first.size());
  upload(start_.data(), start.data(), start.size());
  upload(terms_.data(), terms.data(), terms.size());
  copy_s += wall_seconds() - tc;
  queue_sums(first, start_.data(), terms_.data(), t0);
}

void TreeEdgeDevice::add_sums(const std::vector<long>& first, const long* start, const EdgeTermDev* terms,
                              long nterms) {
  const double t0 = wall_seconds();
  const int nb = static_cast<int>(first.size()) - 1;
  if (nb <= 0 || nterms == 0 || n_ <= 0) return;
  if (first.back() > n_ || first.front() < 0) throw Error("tree edge sums: batches beyond the targets");
  exec::WorkStreamScope on(stream_);
  grow(first_, first.size());
  const double tc = wall_seconds();
  upload(first_.data(), first.data(), first.size());
  copy_s += wall_seconds() - tc;
  queue_sums(first, start, terms, t0);
}

void TreeEdgeDevice::queue_sums(const std::vector<long>& first, const long* start, const EdgeTermDev* terms,
                                double t0) {
  const exec::Space S = space_;
  const int nb = static_cast<int>(first.size()) - 1;
  void* ev0 = event();
  record(ev0, stream_);
  const double t1 = wall_seconds();
  const long q0 = first.front(), nq = first.back() - q0;
  sum_pass(S, SumArgs{n_, q0, nq, tgt_, nb, first_.data(), start, terms, tabs_.data(), sorted_.data(),
                     prefix_.data(), prox_pool_, img_, eps_, acc_.data(), counts_.data()},
           sum_variant(kernel_variant));
  void* ev1 = event();
  record(ev1, stream_);
  if (ev0) sum_events_.push_back({ev0, ev1});
  else kernel_s += wall_seconds() - t1;  // on the host the kernel ran here; on the device wait() reads the events
  summed_ = true;
  ++sum_pieces;
  host_s += wall_seconds() - t0;
}

void TreeEdgeDevice::wait() {
  sync();
  if (stream_) {
    tables_s = kernel_s = 0;
    for (const auto& [a, b] : table_events_) tables_s += elapsed(a, b);
    for (const auto& [a, b] : sum_events_) kernel_s += elapsed(a, b);
  }
  retired_.clear();
  if (!summed_) return;
  unsigned long long c[4] = {0, 0, 0, 0};
  exec::copy(c, exec::Space::Host, counts_.data(), space_, 4);
  static const bool stats = env::choice("BEATNIK_TREE_EDGE_STATS", {"0", "1"}) == "1";
  if (stats)  // the warp kernel's terms with proxy pairs: rows staged, rows from global memory
    std::fprintf(stderr, "tree edge kernel: %llu warp terms staged, %llu not\n", c[2], c[3]);
  proxy_pairs = static_cast<long>(c[0]);
  direct_pairs = static_cast<long>(c[1]);
}

void TreeEdgeDevice::sum(const double* tgt, long n, const std::vector<long>& first, const std::vector<long>& start,
                         const std::vector<EdgeTermDev>& terms, const BRImages& img, double eps, double* acc) {
  begin_sums(tgt, n, img, eps);
  add_sums(first, start, terms);
  wait();
  if (!summed_) return;
  const double t = wall_seconds();
  std::vector<double> u(3 * size_t(n));
  exec::copy(u.data(), exec::Space::Host, acc_.data(), space_, 3 * size_t(n));
#pragma omp parallel for
  for (long k = 0; k < 3 * n; ++k) acc[k] += u[k];
  copy_s += wall_seconds() - t;
}

std::vector<double> TreeEdgeDevice::sorted(int k) {
  sync();
  const Tab& t = host_tabs_.at(k);
  std::vector<double> out(6 * size_t(t.n));
  exec::copy(out.data(), exec::Space::Host, sorted_.data() + t.sorted, space_, out.size());
  return out;
}

std::vector<double> TreeEdgeDevice::prefix(int k) {
  sync();
  const Tab& t = host_tabs_.at(k);
  std::vector<double> out(3 * size_t(t.m) * (t.rows + 1));
  exec::copy(out.data(), exec::Space::Host, prefix_.data() + t.prefix, space_, out.size());
  return out;
}

}  // namespace beatnik::model
