// The tree solver's sums on the device (tree_sums_device.hpp): a warp per batch (a leaf of at
// most --tree-leaf targets), two targets per lane, each range's sources staged 32 at a time
// through shared memory; each target sums its ranges in list order, as the host kernel does.
// The lists travel launch by launch through page-locked staging, queued on the work stream.
#include "beatnik/model/tree_sums_device.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>

#include "beatnik/base/error.hpp"
#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/exec/scratch.hpp"

namespace beatnik::model {
namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

#if defined(BEATNIK_DEVICE_COMPILE)
constexpr int kWarps = 4;    // batches per thread block: one warp each
constexpr int kStreams = 4;  // launches in flight at once

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

// A warp per batch, two targets per lane (t and t + 32): each source is loaded once for two
// pairs. A range's sources pass through shared memory 32 at a time (one coalesced load per lane
// and array, then read by every lane at the same address). Every target sums its ranges, and each
// range's sources, in list order (the host kernel's order).
__global__ void __launch_bounds__(32 * kWarps) tree_sums_kernel(Args a) {
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
      pairs_(exec::Space::Device, 2) {}

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
  if (n > s.cap) resize(s, std::max<size_t>(n + n / 2, 1024));
  s.used = n;
  return 0;
}
#endif

TreeSumsDevice::~TreeSumsDevice() {
#if defined(BEATNIK_DEVICE_COMPILE)
  release(ranges_);
  release(index_);
  for (void* e : events_) cudaEventDestroy(static_cast<cudaEvent_t>(e));
  for (void* st : streams_) cudaStreamDestroy(static_cast<cudaStream_t>(st));
#endif
}

void TreeSumsDevice::begin(const double* targets, long n, const Arrays& near, const Arrays& far, const BRImages& img,
                           double eps) {
#if defined(BEATNIK_DEVICE_COMPILE)
  const auto D = exec::Space::Device, H = exec::Space::Host;
  const double t = now();
  n_ = n;
  img_ = img;
  eps_ = eps;
  near_ = make_pool(near);
  far_ = make_pool(far);
  const auto upload = [&](exec::Buffer<double>& pool, const Pool& p) {
    exec::grow(pool, D, std::max(p.base.back(), 1L));
    for (size_t i = 0; i < p.arrays.size(); ++i)
      if (p.arrays[i].second > 0) exec::copy(pool.data() + p.base[i], D, p.arrays[i].first, H, p.arrays[i].second);
  };
  upload(near_pool_, near_);
  upload(far_pool_, far_);
  exec::grow(tgt_, D, std::max(3 * n, 1L));
  exec::grow(acc_near_, D, std::max(3 * n, 1L));
  exec::grow(acc_far_, D, std::max(3 * n, 1L));
  if (n > 0) exec::copy(tgt_.data(), D, targets, H, 3 * n);
  pairs_.zero();
  prepare(ranges_);
  prepare(index_);
  launches_ = 0;
  pack_s = near_kernel_s = far_kernel_s = finish_s = 0;
  upload_s = now() - t;
#else
  (void)targets, (void)n, (void)near, (void)far, (void)img, (void)eps;
  (void)now, (void)flatten, (void)csr, (void)make_pool;
  exec::no_device_backend("tree solver sums");
#endif
}

void TreeSumsDevice::launch(int b0, int b1, const std::vector<long>& batch,
                            const std::vector<std::vector<BRSourceRange>>& near,
                            const std::vector<std::vector<BRSourceRange>>& far) {
#if defined(BEATNIK_DEVICE_COMPILE)
  const int nb = b1 - b0;
  if (nb <= 0 || n_ <= 0) return;
  const double t = now();
  // Launches go round the streams, so that one launch's kernels fill the GPU while the previous
  // one's last batches finish. The streams are blocking ones: ordered after the synchronous
  // uploads and memsets of begin() on the default stream.
  if (streams_.empty())
    for (int k = 0; k < kStreams; ++k) {
      cudaStream_t st;
      cudaStreamCreate(&st);
      streams_.push_back(st);
    }
  cudaStream_t st = static_cast<cudaStream_t>(streams_[launches_ % kStreams]);
  // Index block: batch bounds (2·nb), the near CSR (nb + 1), the far CSR (nb + 1).
  const size_t ni = 4 * size_t(nb) + 2;
  const size_t oi = reserve(index_, ni);
  long* I = index_.host + oi;
  for (int b = b0; b < b1; ++b) {
    I[2 * (b - b0)] = batch[2 * size_t(b)];
    I[2 * (b - b0) + 1] = batch[2 * size_t(b) + 1];
  }
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
  while (events_.size() < 3 * size_t(launches_ + 1)) {
    cudaEvent_t e;
    cudaEventCreate(&e);
    events_.push_back(e);
  }
  cudaEvent_t* ev = reinterpret_cast<cudaEvent_t*>(events_.data()) + 3 * launches_;
  const long* Id = index_.dev.data() + oi;
  const TreeSumRange* Rd = ranges_.dev.data() + orr;
  const unsigned grid = static_cast<unsigned>((nb + kWarps - 1) / kWarps);
  cudaEventRecord(ev[0], st);
  Args an{tgt_.data(), n_, nb, near_pool_.data(), Id, Id + 2 * nb, Rd, img_, eps_, acc_near_.data(), pairs_.data()};
  tree_sums_kernel<<<grid, 32 * kWarps, 0, st>>>(an);
  exec::detail::check_launch("tree sums kernel (near)");
  cudaEventRecord(ev[1], st);
  Args af{tgt_.data(), n_, nb, far_pool_.data(), Id, Id + 3 * nb + 1, Rd + nrn, img_, eps_, acc_far_.data(),
          pairs_.data() + 1};
  tree_sums_kernel<<<grid, 32 * kWarps, 0, st>>>(af);
  exec::detail::check_launch("tree sums kernel (far)");
  cudaEventRecord(ev[2], st);
  ++launches_;
  pack_s += now() - t;
#else
  (void)b0, (void)b1, (void)batch, (void)near, (void)far;
  exec::no_device_backend("tree solver sums");
#endif
}

void TreeSumsDevice::finish(double* acc_near, double* acc_far, long& near_pairs, long& far_pairs) {
#if defined(BEATNIK_DEVICE_COMPILE)
  const auto D = exec::Space::Device, H = exec::Space::Host;
  const double t = now();
  sync_streams();
  const cudaEvent_t* ev = reinterpret_cast<const cudaEvent_t*>(events_.data());
  for (int l = 0; l < launches_; ++l) {
    float a = 0, b = 0;
    cudaEventElapsedTime(&a, ev[3 * l], ev[3 * l + 1]);
    cudaEventElapsedTime(&b, ev[3 * l + 1], ev[3 * l + 2]);
    near_kernel_s += 1e-3 * a;
    far_kernel_s += 1e-3 * b;
  }
  unsigned long long pairs[2] = {0, 0};
  if (n_ > 0) {
    exec::copy(acc_near, H, acc_near_.data(), D, 3 * n_);
    exec::copy(acc_far, H, acc_far_.data(), D, 3 * n_);
  }
  exec::copy(pairs, H, pairs_.data(), D, 2);
  near_pairs = static_cast<long>(pairs[0]);
  far_pairs = static_cast<long>(pairs[1]);
  finish_s = now() - t;
#else
  (void)acc_near, (void)acc_far, (void)near_pairs, (void)far_pairs;
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
