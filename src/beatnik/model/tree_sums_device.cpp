// The tree solver's sums on the device (tree_sums_device.hpp). One block per batch (a leaf of at
// most --tree-leaf targets), a thread per target: every thread of a block reads the same source
// at the same step, which the caches serve once per block; no shared-memory tiles (measured in
// docs/tree.md). Each target sums its ranges in list order, as the host kernel does.
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
constexpr int kThreads = 64;

struct Args {
  const double* tgt;
  long n;
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

__global__ void __launch_bounds__(kThreads) tree_sums_kernel(Args a) {
  const int b = blockIdx.x;
  const long t0 = a.batch[2 * b], t1 = a.batch[2 * b + 1];
  const long r0 = a.start[b], r1 = a.start[b + 1];
  const long n = a.n;
  const double L0 = a.img.period[0], L1 = a.img.period[1];
  const double h0 = a.img.centring_half(0), h1 = a.img.centring_half(1);
  const int K = a.img.k;
  unsigned long long cnt = 0;
  for (long t = t0 + threadIdx.x; t < t1; t += kThreads) {
    const double tx = a.tgt[t], ty = a.tgt[n + t], tz = a.tgt[2 * n + t];
    double ux = 0.0, uy = 0.0, uz = 0.0;
    for (long r = r0; r < r1; ++r) {
      const TreeSumRange R = a.ranges[r];
      const double* xs = a.pool + R.off;
      const double *ys = xs + R.stride, *zs = ys + R.stride, *qxs = zs + R.stride, *qys = qxs + R.stride,
                   *qzs = qys + R.stride;
      const double ox = R.mx * L0, oy = R.my * L1;
      for (int s = 0; s < R.count; ++s) {
        const double sx = __ldg(xs + s), sy = __ldg(ys + s);
        if (R.window) {  // |m − a₀| ≤ K per dimension, a₀ from the unshifted separation
          const int ax = nearest(tx - sx, L0, h0), ay = nearest(ty - sy, L1, h1);
          if (R.mx - ax > K || ax - R.mx > K || R.my - ay > K || ay - R.my > K) continue;
        }
        br_pair(tx, ty, tz, sx + ox, sy + oy, __ldg(zs + s), __ldg(qxs + s), __ldg(qys + s), __ldg(qzs + s), a.eps,
                ux, uy, uz);
        ++cnt;
      }
    }
    a.acc[t] = ux;
    a.acc[n + t] = uy;
    a.acc[2 * n + t] = uz;
  }
  for (int o = 16; o > 0; o /= 2) cnt += __shfl_down_sync(0xffffffffu, cnt, o);
  if ((threadIdx.x & 31) == 0 && cnt) atomicAdd(a.pairs, cnt);
}
#endif

}  // namespace

TreeSumsDevice::TreeSumsDevice()
    : tgt_(exec::Space::Device, 0),
      pool_(exec::Space::Device, 0),
      acc_(exec::Space::Device, 0),
      batch_(exec::Space::Device, 0),
      start_(exec::Space::Device, 0),
      ranges_(exec::Space::Device, 0),
      pairs_(exec::Space::Device, 1) {}

long TreeSumsDevice::run(const double* targets, long n, const std::vector<std::pair<const double*, long>>& arrays,
                         const std::vector<long>& batch, const std::vector<std::vector<BRSourceRange>>& ranges,
                         const BRImages& img, double eps, double* acc) {
#if defined(BEATNIK_DEVICE_COMPILE)
  const auto D = exec::Space::Device, H = exec::Space::Host;
  double t = now();
  const int nb = static_cast<int>(ranges.size());
  if (n <= 0 || nb <= 0) return 0;
  // The pool: every array in turn; a range's block is found by its host pointer.
  std::vector<long> base(arrays.size() + 1, 0);
  for (size_t i = 0; i < arrays.size(); ++i) base[i + 1] = base[i] + arrays[i].second;
  // CSR offsets, then each batch's ranges flattened in parallel.
  std::vector<long> start(size_t(nb) + 1, 0);
  for (int b = 0; b < nb; ++b) start[b + 1] = start[b] + static_cast<long>(ranges[b].size());
  const long nr = start[nb];
  exec::grow(flat_, H, std::max(nr, 1L));
  TreeSumRange* flat = flat_.data();
  const std::less<const double*> lt;
  bool outside = false;
#pragma omp parallel for schedule(dynamic, 64) reduction(|| : outside)
  for (int b = 0; b < nb; ++b) {
    long q = start[b];
    for (const BRSourceRange& R : ranges[b]) {
      size_t i = 0;
      while (i < arrays.size() && !(!lt(R.p, arrays[i].first) && lt(R.p, arrays[i].first + arrays[i].second))) ++i;
      if (i == arrays.size()) {
        outside = true;
        break;
      }
      flat[q++] = {base[i] + (R.p - arrays[i].first) + R.k0, static_cast<int>(R.stride),
                   static_cast<int>(R.k1 - R.k0), static_cast<short>(R.mx), static_cast<short>(R.my),
                   R.window ? 1 : 0};
    }
  }
  if (outside) throw Error("tree device sums: a source range outside the uploaded arrays");
  const double tp = now();
  pack_s = tp - t;
  t = tp;
  exec::grow(pool_, D, std::max(base.back(), 1L));
  for (size_t i = 0; i < arrays.size(); ++i)
    if (arrays[i].second > 0) exec::copy(pool_.data() + base[i], D, arrays[i].first, H, arrays[i].second);
  exec::grow(tgt_, D, 3 * n);
  exec::grow(acc_, D, 3 * n);
  exec::grow(batch_, D, batch.size());
  exec::grow(start_, D, start.size());
  exec::grow(ranges_, D, std::max(nr, 1L));
  exec::copy(tgt_.data(), D, targets, H, 3 * n);
  exec::copy(batch_.data(), D, batch.data(), H, batch.size());
  exec::copy(start_.data(), D, start.data(), H, start.size());
  if (nr > 0) exec::copy(ranges_.data(), D, flat, H, nr);
  pairs_.zero();
  cudaDeviceSynchronize();
  const double t1 = now();
  upload_s = t1 - t;
  Args a{tgt_.data(), n, pool_.data(), batch_.data(), start_.data(), ranges_.data(), img, eps, acc_.data(),
         pairs_.data()};
  tree_sums_kernel<<<nb, kThreads>>>(a);
  exec::detail::check_launch("tree sums kernel");
  cudaDeviceSynchronize();
  const double t2 = now();
  kernel_s = t2 - t1;
  unsigned long long pairs = 0;
  exec::copy(acc, H, acc_.data(), D, 3 * n);
  exec::copy(&pairs, H, pairs_.data(), D, 1);
  download_s = now() - t2;
  return static_cast<long>(pairs);
#else
  (void)targets, (void)n, (void)arrays, (void)batch, (void)ranges, (void)img, (void)eps, (void)acc;
  (void)now;
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
