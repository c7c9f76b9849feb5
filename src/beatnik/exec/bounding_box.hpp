#pragma once
// Bounding box of n points given as three coordinate arrays, host or device, returned in host
// memory. Unlike reduce.hpp this is meant for the hot path: the device version keeps its
// per-block partial results in scratch grown across calls and copies six numbers back.
#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/scratch.hpp"
#include "beatnik/exec/space.hpp"

namespace beatnik::exec {

class BoundingBox {
 public:
  explicit BoundingBox(Space s) : space_(s) {}
  // lo[d], hi[d]: minimum and maximum of coordinate d over the n points (NaN entries are
  // skipped). n = 0 (or all NaN) gives lo = +inf, hi = -inf. Device: waits for the result.
  void compute(const double* x, const double* y, const double* z, long n, double lo[3], double hi[3]);

 private:
  void compute_device(const double* x, const double* y, const double* z, long n, double lo[3], double hi[3]);
  Space space_;
  Buffer<double> partial_;  // device: 6 values per thread block, then the final 6
};

}  // namespace beatnik::exec
