#include "beatnik/exec/scan.hpp"

#include "beatnik/base/error.hpp"
#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/exec/scratch.hpp"

#if defined(BEATNIK_DEVICE_COMPILE)
#include <cub/device/device_scan.cuh>
#endif

namespace beatnik::exec {

long ExclusiveScan::run(const long* in, long* out, long n) {
  queue(in, out, n);
  if (space_ == Space::Host) return out[n];
#if defined(BEATNIK_DEVICE_COMPILE)
  // The total read back by waiting for the work stream only (a synchronous copy would also wait
  // for the legacy stream's work: the lists' kernels run on a stream of their own beside the
  // upward pass, tree_lists_device.cpp).
  const cudaStream_t st = detail::stream();
  long total = 0;
  if (cudaMemcpyAsync(&total, out + n, sizeof(long), cudaMemcpyDeviceToHost, st) != cudaSuccess ||
      cudaStreamSynchronize(st) != cudaSuccess)
    throw Error("exclusive scan: reading the total back failed");
  return total;
#else
  no_device_backend("exclusive scan");
#endif
}

void ExclusiveScan::queue(const long* in, long* out, long n) {
  if (space_ == Space::Host) {
    long acc = 0;
    for (long k = 0; k < n; ++k) {
      out[k] = acc;
      acc += in[k];
    }
    out[n] = acc;
    return;
  }
#if defined(BEATNIK_DEVICE_COMPILE)
  const cudaStream_t st = detail::stream();
  if (cudaMemsetAsync(out, 0, sizeof(long), st) != cudaSuccess) throw Error("cudaMemsetAsync failed");
  if (n > 0) {
    // out[1..n] = inclusive sums of in[0..n-1].
    std::size_t bytes = 0;
    cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out + 1, n, detail::stream());
    grow(scratch_, space_, bytes);
    if (cub::DeviceScan::InclusiveSum(scratch_.data(), bytes, in, out + 1, n, detail::stream()) != cudaSuccess)
      throw Error("cub::DeviceScan::InclusiveSum failed");
  }
#else
  no_device_backend("exclusive scan");
#endif
}

}  // namespace beatnik::exec
