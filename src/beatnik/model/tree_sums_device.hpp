#pragma once
// The tree solver's near and far sums on the device (-S tree -x cuda, docs/tree.md "On the
// GPU"). The tree, the LET, the upward pass and the interaction lists stay on the host; a sum
// takes the batches' source ranges (the host kernel's BRSourceRange, pointing into host arrays),
// flattens them (CSR: batch → ranges, each an offset into one pool of the source arrays, an image
// shift and the window flag), copies targets, pool and lists to the device, runs one kernel (a
// block per batch, a thread per target, every source read once per block) in double with the
// host's pair formula and window rule, and copies the velocities back into the host array.
// Compiled by nvcc in the CUDA build; the host build's run() throws (no device backend).
#include <utility>
#include <vector>

#include "beatnik/exec/memory.hpp"
#include "beatnik/mesh/field.hpp"
#include "beatnik/mesh/surface_mesh.hpp"
#include "beatnik/model/br_kernel.hpp"
#include "beatnik/model/br_targets_host.hpp"

namespace beatnik::model {

struct TreeSumRange {  // a BRSourceRange as the device reads it (24 bytes: the lists are large)
  long off;                  // the range's first source in the pool (x; y at off + stride, ...)
  int stride, count;
  short mx, my;
  int window;
};

class TreeSumsDevice {
 public:
  TreeSumsDevice();
  // Velocities of targets (host, [x|y|z], n each) into acc (host, [ux|uy|uz], overwritten):
  // batch b covers targets [batch[2b], batch[2b+1]) and takes ranges[b] in order, whose p
  // point into `arrays` (host pointer, length). Returns the pairs summed.
  long run(const double* targets, long n, const std::vector<std::pair<const double*, long>>& arrays,
           const std::vector<long>& batch, const std::vector<std::vector<BRSourceRange>>& ranges,
           const BRImages& img, double eps, double* acc);
  // Seconds of the last run spent flattening the lists (host), copying to the device, in the
  // kernel, copying back.
  double pack_s = 0, upload_s = 0, kernel_s = 0, download_s = 0;

 private:
  exec::Buffer<double> tgt_, pool_, acc_;
  exec::Buffer<long> batch_, start_;
  exec::Buffer<TreeSumRange> ranges_;
  exec::Buffer<unsigned long long> pairs_;
  exec::Buffer<TreeSumRange> flat_;  // host, uninitialised (the lists run to GB at 1024²)
};

// Host velocities in surface order ([ux|uy|uz], owned_count each, row-major) into the device
// field `out` (through a device scratch copy).
void tree_velocity_to_field(const mesh::SurfaceMesh& mesh, const double* host, const mesh::Field& out,
                            exec::Buffer<double>& scratch);
// NaN velocities on the device (non-finite positions).
void tree_nan_field(const mesh::SurfaceMesh& mesh, const mesh::Field& out);

}  // namespace beatnik::model
