// The source tree's level-by-level build (tree_build_device.hpp). Compiled by nvcc in the CUDA
// build (the lambdas run as device kernels there, the sorts are CUB's radix sort), by the host
// compiler otherwise (std::stable_sort).
#include "beatnik/model/tree_build_device.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "beatnik/base/error.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/exec/last_at_most.hpp"
#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/exec/scratch.hpp"

#if defined(BEATNIK_DEVICE_COMPILE)
#include <cub/device/device_radix_sort.cuh>
#endif

namespace beatnik::model {
namespace {

using u64 = unsigned long long;
using Seg = TreeBuildDevice::Seg;

constexpr long kChunk = 64;  // points per item of the box pass

// An unsigned key in the order of the doubles (not NaN); −0 and +0 are one key, as they compare
// equal (the host's ties go to the index).
BEATNIK_HOST_DEVICE inline u64 order_key(double v) {
  if (v == 0.0) v = 0.0;
  u64 u;
#if defined(__CUDA_ARCH__)
  u = static_cast<u64>(__double_as_longlong(v));
#else
  std::memcpy(&u, &v, sizeof u);
#endif
  return (u >> 63) ? ~u : (u | (u64(1) << 63));
}

BEATNIK_HOST_DEVICE inline double key_value(u64 k) {
  const u64 u = (k >> 63) ? (k & ~(u64(1) << 63)) : ~k;
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double v;
  std::memcpy(&v, &u, sizeof v);
  return v;
#endif
}

BEATNIK_HOST_DEVICE inline void min_key(u64* p, u64 v) {
#if defined(__CUDA_ARCH__)
  atomicMin(p, v);
#else
  u64 cur = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
#endif
}

BEATNIK_HOST_DEVICE inline void max_key(u64* p, u64 v) {
#if defined(__CUDA_ARCH__)
  atomicMax(p, v);
#else
  u64 cur = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
#endif
}

// Stable sort of (keys, vals) by the keys' low `bits` bits into (keys2, vals2).
void sort_pairs(exec::Space S, const u64* keys, u64* keys2, const int* vals, int* vals2, long n, int bits,
                exec::Buffer<char>& temp) {
  if (S == exec::Space::Host) {
    (void)temp;
    std::vector<long> id(n);
    std::iota(id.begin(), id.end(), 0L);
    const u64 mask = bits >= 64 ? ~u64(0) : ((u64(1) << bits) - 1);
    std::stable_sort(id.begin(), id.end(), [&](long a, long b) { return (keys[a] & mask) < (keys[b] & mask); });
    for (long j = 0; j < n; ++j) {
      keys2[j] = keys[id[j]];
      vals2[j] = vals[id[j]];
    }
    return;
  }
#if defined(BEATNIK_DEVICE_COMPILE)
  const int m = static_cast<int>(n);
  size_t bytes = 0;
  cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, keys2, vals, vals2, m, 0, bits,
                                                  exec::detail::stream());
  if (e == cudaSuccess) {
    exec::grow(temp, S, std::max<size_t>(bytes, 1));
    e = cub::DeviceRadixSort::SortPairs(temp.data(), bytes, keys, keys2, vals, vals2, m, 0, bits,
                                        exec::detail::stream());
  }
  if (e != cudaSuccess) throw Error(std::string("tree build: CUB radix sort failed: ") + cudaGetErrorString(e));
#else
  (void)keys, (void)keys2, (void)vals, (void)vals2, (void)n, (void)bits, (void)temp;
  exec::no_device_backend("tree build");
#endif
}

}  // namespace

TreeBuildDevice::TreeBuildDevice(exec::Space space)
    : space_(space),
      segs_(space, 0),
      rank_(space, 0),
      idx_(space, 0),
      idx2_(space, 0),
      perm_(space, 0),
      perm2_(space, 0),
      flag_(space, 1),
      keys_(space, 0),
      keys2_(space, 0),
      box_(space, 0),
      out_(space, 0),
      boxd_(space, 0),
      temp_(space, 0) {}

// The clusters of each depth, by position (depth-first numbering keeps a depth's clusters in
// position order), and the box pass's chunks of each: a function of (n, leaf) alone, so kept
// while they repeat (every call on one rank).
void TreeBuildDevice::layout(long n, int leaf) {
  if (n == n_ && leaf == leaf_) return;
  shape_ = search::ClusterTree::shape(n, leaf);
  const int nc = static_cast<int>(shape_.size());
  std::vector<int> depth(nc, 0);
  int maxd = 0;
  for (int c = 0; c < nc; ++c)
    for (int k : shape_[c].child)
      if (k >= 0) maxd = std::max(maxd, depth[k] = depth[c] + 1);
  std::vector<std::vector<int>> by(maxd + 1);
  for (int c = 0; c < nc; ++c) by[depth[c]].push_back(c);
  std::vector<Seg> segs;
  levels_.clear();
  for (const std::vector<int>& list : by) {
    Level L{static_cast<int>(segs.size()), 0, 0, false};
    for (int c : list) {
      const search::Cluster& C = shape_[c];
      segs.push_back({C.begin, C.end, L.chunks, c, C.leaf() ? 0 : 1});
      L.chunks += (C.count() + kChunk - 1) / kChunk;
      L.cuts = L.cuts || !C.leaf();
    }
    L.s1 = static_cast<int>(segs.size());
    levels_.push_back(L);
  }
  exec::grow(segs_, space_, std::max<size_t>(segs.size(), 1));
  exec::copy(segs_.data(), space_, segs.data(), exec::Space::Host, segs.size());
  n_ = n;
  leaf_ = leaf;
}

void TreeBuildDevice::run(const double* pts, long n, int leaf, search::ClusterTree& tree, bool host_order) {
  const exec::Space S = space_;
  kernel_s = copy_s = 0;
  if (n >= (1L << 31) - 1) throw Error("tree build: more than 2^31 − 2 points on one rank");
  double t = wall_seconds();
  layout(n, std::max(leaf, 1));
  const int nc = static_cast<int>(shape_.size());
  if (n == 0) {  // the host's empty root: a zero box
    tree.assign(shape_, {});
    return;
  }
  const size_t N = static_cast<size_t>(n);
  exec::grow(rank_, S, 3 * N);
  exec::grow(idx_, S, N);
  exec::grow(idx2_, S, N);
  exec::grow(perm_, S, N);
  exec::grow(perm2_, S, N);
  exec::grow(keys_, S, N);
  exec::grow(keys2_, S, N);
  exec::grow(box_, S, 6 * size_t(nc));
  exec::grow(boxd_, S, 6 * size_t(nc));
  exec::grow(out_, S, 6 * N);
  copy_s = wall_seconds() - t;
  t = wall_seconds();
  int bn = 1;  // bits of a position or rank (< n)
  while ((1L << bn) < n) ++bn;
  int* rank = rank_.data();
  int* perm = perm_.data();
  int* perm2 = perm2_.data();
  u64* keys = keys_.data();
  u64* keys2 = keys2_.data();
  u64* box = box_.data();
  const Seg* segs = segs_.data();
  // Each point's rank along each dimension by (coordinate, index): a stable sort of the keys in
  // index order.
  for (int d = 0; d < 3; ++d) {
    const double* x = pts + d * n;
    exec::parallel_for(S, n, [=] BEATNIK_HOST_DEVICE(long i) {
      keys[i] = order_key(x[i]);
      perm[i] = static_cast<int>(i);
    });
    sort_pairs(S, keys, keys2, perm, perm2, n, 64, temp_);
    int* r = rank + d * n;
    exec::parallel_for(S, n, [=] BEATNIK_HOST_DEVICE(long j) { r[perm2[j]] = static_cast<int>(j); });
  }
  {
    int* idx = idx_.data();
    exec::parallel_for(S, n, [=] BEATNIK_HOST_DEVICE(long i) { idx[i] = static_cast<int>(i); });
    exec::parallel_for(S, 6L * nc, [=] BEATNIK_HOST_DEVICE(long k) { box[k] = (k % 6) < 3 ? ~u64(0) : u64(0); });
  }
  for (const Level& L : levels_) {
    const int s0 = L.s0, s1 = L.s1;
    const int* idx = idx_.data();
    // (1) The boxes of the depth's clusters.
    exec::parallel_for(S, L.chunks, [=] BEATNIK_HOST_DEVICE(long i) {
      const Seg& g = segs[exec::last_at_most(segs, s0, s1, i, &Seg::chunk0)];
      const long q0 = g.begin + (i - g.chunk0) * kChunk;
      const long q1 = q0 + kChunk < g.end ? q0 + kChunk : g.end;
      u64 lo[3] = {~u64(0), ~u64(0), ~u64(0)}, hi[3] = {0, 0, 0};
      for (long q = q0; q < q1; ++q) {
        const long k = idx[q];
        for (int d = 0; d < 3; ++d) {
          const u64 v = order_key(pts[d * n + k]);
          lo[d] = v < lo[d] ? v : lo[d];
          hi[d] = v > hi[d] ? v : hi[d];
        }
      }
      u64* b = box + 6L * g.node;
      for (int d = 0; d < 3; ++d) {
        min_key(b + d, lo[d]);
        max_key(b + 3 + d, hi[d]);
      }
    });
    if (!L.cuts) continue;
    // (2) Keys: a cut cluster's points by their rank along its widest side after its first
    // position; every other point keeps its position.
    const int b = bn;
    exec::parallel_for(S, n, [=] BEATNIK_HOST_DEVICE(long i) {
      const Seg& g = segs[exec::last_at_most(segs, s0, s1, i, &Seg::begin)];
      u64 key = u64(i) << b;
      if (g.cut && g.begin <= i && i < g.end) {
        const u64* bx = box + 6L * g.node;
        double lo[3], hi[3];
        for (int d = 0; d < 3; ++d) {
          lo[d] = key_value(bx[d]);
          hi[d] = key_value(bx[3 + d]);
        }
        int dim = 0;
        for (int d = 1; d < 3; ++d)
          if (hi[d] - lo[d] > hi[dim] - lo[dim]) dim = d;
        key = (u64(g.begin) << b) | u64(rank[dim * n + idx[i]]);
      }
      keys[i] = key;
      perm[i] = static_cast<int>(i);
    });
    // (3) Sorted: each cut cluster's lower half by (coordinate, index) first, then the gather.
    sort_pairs(S, keys, keys2, perm, perm2, n, 2 * bn, temp_);
    int* idx2 = idx2_.data();
    exec::parallel_for(S, n, [=] BEATNIK_HOST_DEVICE(long j) { idx2[j] = idx[perm2[j]]; });
    idx_.swap(idx2_);
  }
  {
    const int* idx = idx_.data();
    double* out = out_.data();
    exec::parallel_for(S, n, [=] BEATNIK_HOST_DEVICE(long q) {
      const long k = idx[q];
      for (int c = 0; c < 6; ++c) out[c * n + q] = pts[c * n + k];
    });
    double* bd = boxd_.data();
    exec::parallel_for(S, 6L * nc, [=] BEATNIK_HOST_DEVICE(long k) { bd[k] = key_value(box[k]); });
  }
  exec::fence(S);
  kernel_s = wall_seconds() - t;
  t = wall_seconds();
  box_h_.resize(6 * size_t(nc));
  if (host_order) {
    order_h_.resize(N);
    exec::copy(order_h_.data(), exec::Space::Host, idx_.data(), S, N);
  }
  exec::copy(box_h_.data(), exec::Space::Host, boxd_.data(), S, 6 * size_t(nc));
  // Into the tree's previous storage (a fresh vector's pages were faulted in every call) and in
  // parallel: this is on the host's path to the upward pass, the GPU idle meanwhile.
  std::vector<search::Cluster> nodes = tree.release_clusters();
  nodes.resize(size_t(nc));
  const double* bh = box_h_.data();
#pragma omp parallel for schedule(static)
  for (int c = 0; c < nc; ++c) {
    nodes[c] = shape_[c];
    for (int d = 0; d < 3; ++d) {
      nodes[c].lo[d] = bh[6 * size_t(c) + d];
      nodes[c].hi[d] = bh[6 * size_t(c) + 3 + d];
    }
  }
  std::vector<long> order(host_order ? N : 0);
  if (host_order) {
#pragma omp parallel for
    for (long q = 0; q < n; ++q) order[q] = order_h_[q];
  }
  tree.assign(std::move(nodes), std::move(order));
  copy_s += wall_seconds() - t;
}

void TreeBuildDevice::download(double* host) const {
  if (n_ > 0) exec::copy(host, exec::Space::Host, out_.data(), space_, 6 * size_t(n_));
}

bool TreeBuildDevice::finite(const double* p, long n) {
  if (n <= 0) return true;
  int* f = flag_.data();
  int h = 0;
  if (space_ == exec::Space::Host) f = &h;
  else exec::copy(f, space_, &h, exec::Space::Host, 1);
  exec::parallel_for(space_, n, [=] BEATNIK_HOST_DEVICE(long k) {
    const double v = p[k];
    if (!(v - v == 0.0)) {  // inf − inf and NaN are NaN
#if defined(__CUDA_ARCH__)
      *f = 1;
#else
      __atomic_store_n(f, 1, __ATOMIC_RELAXED);
#endif
    }
  });
  if (space_ != exec::Space::Host) exec::copy(&h, exec::Space::Host, f, space_, 1);
  return h == 0;
}

}  // namespace beatnik::model
