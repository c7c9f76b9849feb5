#include "beatnik/exec/scan.hpp"

#include "beatnik/base/error.hpp"
#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/exec/scratch.hpp"

#if defined(BEATNIK_DEVICE_COMPILE)
#include <cub/device/device_scan.cuh>
#endif

namespace beatnik::exec {

long ExclusiveScan::run(const long* in, long* out, long n) {
  if (space_ == Space::Host) {
    long acc = 0;
    for (long k = 0; k < n; ++k) {
      out[k] = acc;
      acc += in[k];
    }
    out[n] = acc;
    return acc;
  }
#if defined(BEATNIK_DEVICE_COMPILE)
  fill_zero(space_, out, sizeof(long));
  if (n > 0) {
    // out[1..n] = inclusive sums of in[0..n-1].
    std::size_t bytes = 0;
    cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out + 1, n, detail::stream());
    grow(scratch_, space_, bytes);
    if (cub::DeviceScan::InclusiveSum(scratch_.data(), bytes, in, out + 1, n, detail::stream()) != cudaSuccess)
      throw Error("cub::DeviceScan::InclusiveSum failed");
  }
  long total = 0;
  copy(&total, Space::Host, out + n, space_, 1);
  return total;
#else
  no_device_backend("exclusive scan");
#endif
}

}  // namespace beatnik::exec
