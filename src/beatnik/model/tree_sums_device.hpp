#pragma once
// The tree solver's near and far sums on the device (-S tree -x cuda, docs/tree.md "On the
// GPU"). With lists built on the host the sums take the batches' source ranges (the host
// kernel's BRSourceRange, pointing into host arrays; with lists built on the device their ranges
// come ready in device memory, launch_device), flatten
// them (CSR: batch → ranges, each an offset into one pool of the source arrays, an image shift
// and the window flag), copy them to the device and run a kernel (the batch's ranges read as one
// stream of sources, staged through shared memory in tiles of 32, two targets per lane, one or
// more warps per batch) in double with the host's pair formula and window rule; the velocities
// come back into host arrays.
// Compiled by nvcc in the CUDA build; the host build's run() throws (no device backend).
#include <functional>
#include <utility>
#include <vector>

#include "beatnik/exec/memory.hpp"
#include "beatnik/mesh/field.hpp"
#include "beatnik/mesh/surface_mesh.hpp"
#include "beatnik/model/br_kernel.hpp"
#include "beatnik/model/br_targets_host.hpp"

namespace beatnik::model {

struct TreeSumRange {  // a BRSourceRange as the device reads it (16 bytes: the lists run to GB)
  int off;                   // the range's first source in the pool (x; y at off + stride, ...)
  int stride, count;
  signed char mx, my;        // image shift (run() checks the range)
  unsigned char window;
};

// One call's sums, pipelined with the host's list building: pools() and fill() place the two
// pools (the solver does that before the lower-degree sets, which the device writes into the far
// pool), begin() uploads the targets, each launch() flattens a run of batches' lists into page-locked memory and queues
// its copy and both kernels without waiting, finish() waits and brings the velocities back. So
// the device sums batches [0, b) while the host builds the lists of the batches after b.
class TreeSumsDevice {
 public:
  using Arrays = std::vector<std::pair<const double*, long>>;  // host arrays, length in doubles
  TreeSumsDevice();
  ~TreeSumsDevice();
  TreeSumsDevice(const TreeSumsDevice&) = delete;
  TreeSumsDevice& operator=(const TreeSumsDevice&) = delete;
  // The pools: the arrays the near (sources) and far (proxies) ranges point into, back to back
  // in the given order in one device array each (array i at base(far, i)); a range finds its
  // array by host address (flatten). Sizes the device memory, copies nothing.
  void pools(const Arrays& near, const Arrays& far);
  // Array i of a pool from its host array, or from `src` of the same length in space `from` (a
  // copy elsewhere: the upward pass's device buffers, the LET blocks as received). An array may
  // instead be written on the device through pool() (the lower-degree sets:
  // tree_low_device.hpp); every array a range reads must be filled before launch().
  void fill(bool far, size_t i, const double* src = nullptr, exec::Space from = exec::Space::Device);
  double* pool(bool far) { return far ? far_pool_.data() : near_pool_.data(); }
  long base(bool far, size_t i) const { return (far ? far_ : near_).base[i]; }
  // Targets ([x|y|z], n each; on the device when targets_on_device, else host), after pools()
  // and the fills.
  void begin(const double* targets, long n, const BRImages& img, double eps, bool targets_on_device = false);
  // Batches [b0, b1): batch b covers targets [batch[2b], batch[2b+1]) and sums near[b], then
  // (separately) far[b], each in list order. Returns once the work is queued.
  void launch(int b0, int b1, const std::vector<long>& batch, const std::vector<std::vector<BRSourceRange>>& near,
              const std::vector<std::vector<BRSourceRange>>& far);
  // Batches' lists built on the device (the lists' kernels, tree_lists_device.hpp): nb batches
  // from the first, bounds `batch` (2 per batch), the near and far CSR (nb + 1 each, from 0) and
  // their ranges, all device arrays that stay as they are until finish(). Queued like launch();
  // the bench (BEATNIK_TREE_SUMS_BENCH) cannot replay such launches.
  void launch_device(int nb, const long* batch, const long* near_start, const TreeSumRange* near,
                     const long* far_start, const TreeSumRange* far);
  // Room for the next launch_grids' m extra targets in the page-locked staging ([x|y|z], m
  // apart): the caller writes them there (in parallel), and launch_grids sends them as they lie
  // (a vector of them copied there serially was most of the grids' host time).
  double* stage_grid_points(long m);
  // The dual traversal's target grids (tree_br_dual.cpp, docs/tree-log.md "The dual traversal on
  // the device"): the m extra targets of the last stage_grid_points(m) in grids [bounds[2i],
  // bounds[2i+1]) of them, grid i summing near[i] (clusters' sources, the near pool) and far[i]
  // (proxies and lower-degree sets, the far pool), each in list order, by the same kernel as the
  // batches. Queued like launch(); returns the offset of this block's grid velocities in the
  // two grid-velocity arrays (the near and far parts, [ux|uy|uz] of stride m from there).
  long launch_grids(long m, const std::vector<long>& bounds, const std::vector<std::vector<BRSourceRange>>& near,
                    const std::vector<std::vector<BRSourceRange>>& far);
  // The downward pass, run by finish() on the far field after the edge terms are added: target
  // t of batch b (bounds `batch`, 2 per batch, ascending) adds, in chain order
  // chain[start[b] .. start[b+1]), each grid's velocities (near + far part) interpolated at t.
  // Merged grids (tree_down.hpp) are made first, level by level: each the sum of its sources'
  // polynomials interpolated on its points (one thread block each, separably).
  struct DownGrid {
    long u;           // offset of the grid's Ux in the grid-velocity arrays (merged: the merged ones)
    int stride, m;    // the block's stride (Uy at u + stride, Uz at u + 2·stride); its points
    int dg[3];        // side degrees
    long sw;          // its Chebyshev nodes and weights in `sw`: s0, w0, s1, w1, s2, w2 (dg + 1 each)
    int merged;       // 1: a merged grid (its values made by the downward pass), 0: a grid's sums
  };
  struct DownMerges {  // grids[first + i] is merged grid i (tree::DownPlan's numbering)
    int first = 0;
    long points = 0;                          // their points (stride of the merged values)
    std::vector<int> src_start{0}, src;       // merged grid i's sources (grid indices)
    std::vector<int> order, level_start{0};   // by level: a merged source is in an earlier level
    int max_side = 0;                         // the largest side degree of these grids and sources
  };
  // grids and sw are swapped with the last call's (their storage reused; their contents then
  // stale).
  void queue_down(std::vector<long> batch, std::vector<int> start, std::vector<int> chain,
                  std::vector<DownGrid>& grids, std::vector<double>& sw, DownMerges merges);
  // The largest side degree a merged grid (or its source) may have: its block's shared memory.
  static constexpr int kMergeMaxSide = 16;
  // Waits for every launch; velocities into acc_near and acc_far (host, [ux|uy|uz], n each,
  // every target of a launched batch overwritten); the pairs each field summed. far_extra, if
  // given, is called once the sums are done and returns a device array ([ux|uy|uz], n each,
  // complete when it returns) added into the far field before it comes back, or null (the edge
  // terms: tree_edge_device.hpp). acc_near and acc_far null: nothing comes back; the velocities
  // stay in near_velocity() and far_velocity() (the device migration, br_migrate.hpp).
  void finish(double* acc_near, double* acc_far, long& near_pairs, long& far_pairs,
              const std::function<const double*()>& far_extra = {});
  // For the edge terms (tree_edge_device.hpp): the device pools (array i at base(far, i)) and
  // the targets begin() placed.
  const double* near_pool() const { return near_pool_.data(); }
  const double* far_pool() const { return far_pool_.data(); }
  const double* targets() const { return tgt_.data(); }
  // After finish: the velocities on the device ([ux|uy|uz], n each, in tree order; far with the
  // edge terms added), until the next call's launches.
  const double* near_velocity() const { return acc_near_.data(); }
  const double* far_velocity() const { return acc_far_.data(); }
  // Seconds of the last call: host flattening (launch), target upload (begin), device time of the
  // kernels (CUDA events, summed over the launches: they overlap the host's work and each other),
  // the wait and download (finish).
  double pack_s = 0, upload_s = 0, near_kernel_s = 0, far_kernel_s = 0, finish_s = 0;
  // The grids' sums (launch_grids, both pools) and the downward pass: device seconds; the
  // grids' pairs (set by finish()).
  double cc_kernel_s = 0, down_kernel_s = 0;
  long cc_pairs = 0;

  struct Pool {  // one pool's arrays, for finding a range's array by its host address
    std::vector<long> base;        // pool offset of each array
    std::vector<const double*> first;  // array starts, sorted
    std::vector<int> by_addr;      // array index of each sorted start
    Arrays arrays;
  };

 private:
  // Page-locked host memory and device memory of the same size, filled launch by launch.
  template <class T>
  struct Staging {
    T* host = nullptr;
    exec::Buffer<T> dev;
    size_t cap = 0, used = 0;
    size_t total = 0, peak = 0;  // elements reserved this call, the most of any call
  };
  template <class T>
  size_t reserve(Staging<T>& s, size_t n);
  template <class T>
  void prepare(Staging<T>& s);
  template <class T>
  void resize(Staging<T>& s, size_t n);
  template <class T>
  void release(Staging<T>& s);

  long n_ = 0;
  BRImages img_;
  double eps_ = 0;
  Pool near_, far_;
  exec::Buffer<double> tgt_, near_pool_, far_pool_, acc_near_, acc_far_;
  exec::Buffer<unsigned long long> pairs_;  // near, far, grids
  Staging<TreeSumRange> ranges_;
  Staging<long> index_;  // per launch: batch bounds, near CSR, far CSR
  Staging<double> gpts_;  // the grids' points, launch by launch
  size_t gpts_op_ = 0;    // stage_grid_points' reservation: its offset and its m (−1: none pending)
  long gpts_m_ = -1;
  exec::Buffer<double> gacc_near_, gacc_far_;  // the grids' velocities (this call's, until finish)
  size_t gused_ = 0, gpeak_ = 0;
  // The downward pass queued for finish(): its tables on the device.
  bool down_ = false;
  std::vector<long> h_batch_;
  std::vector<int> h_start_, h_chain_;
  std::vector<DownGrid> h_grids_;
  std::vector<double> h_sw_;
  exec::Buffer<long> down_batch_;
  exec::Buffer<int> down_start_, down_chain_;
  exec::Buffer<DownGrid> down_grids_;
  exec::Buffer<double> down_sw_;
  DownMerges h_merges_;
  exec::Buffer<int> down_src_start_, down_src_, down_order_;
  exec::Buffer<double> down_merged_;  // the merged grids' values ([ux|uy|uz] of stride points)
  // One launch's copies and kernels (launch, launch_grids): bounds of nb batches (host, relative
  // to the targets `tgt` of stride n), their near and far lists [b0, b0 + nb) of the vectors.
  void queue(int b0, int nb, const long* bounds, const std::vector<std::vector<BRSourceRange>>& near,
             const std::vector<std::vector<BRSourceRange>>& far, const double* tgt, long n, double* acc_near,
             double* acc_far, bool grids);
  // The kernels of one launch on the next stream, its events recorded (queue, launch_device).
  void queue_kernels(int nb, const long* batch, const long* near_start, const TreeSumRange* near,
                     const long* far_start, const TreeSumRange* far, const double* tgt, long n, double* acc_near,
                     double* acc_far, bool grids, void* stream);
  void run_down();
  void* next_stream();
  void sync_streams();
  // The call's launches again with every kernel variant (BEATNIK_TREE_SUMS_BENCH, finish()).
  void bench(const double* acc_near, const double* acc_far, long near_pairs, long far_pairs);
  struct LaunchRec {  // one launch: its index block and ranges in the staging, batches, near ranges
    size_t oi, orr;
    int nb;
    long nrn;
  };
  std::vector<LaunchRec> recs_;
  bool wrapped_ = false;  // a launch of this call waited and refilled the staging from its start
  int calls_ = 0;
  std::vector<void*> streams_;  // CUDA streams the launches take in turn
  std::vector<void*> events_;  // per launch: 3 CUDA events (start, near done, far done)
  void* ready_ = nullptr;  // begin(): recorded on the work stream, waited for by every stream
  std::vector<char> grid_launch_;  // per launch: a launch_grids one
  int launches_ = 0;
};

// BEATNIK_TREE_SUMS_BENCH=k (measurement only): the call after whose sums every kernel variant
// is replayed on its launches (TreeSumsDevice::finish); 0 when unset. Read once.
long tree_sums_bench_call();

// For the tests: of the n values d (host), how many rsqrt_normal (the sums kernel's branch-free
// reciprocal square root) and the library's rsqrt give different bits for on the device.
long tree_rsqrt_mismatches(const double* d, long n);
// For the tests: for the n values d (host), on the device, f = the sums' one-step d^(−3/2)
// (rsqrt_cubed, variant 9), e = the hardware estimate's error term 1 − d·y², and g =
// rsqrt_normal(d)³ (variant 8's); each n values on the host.
void tree_rsqrt_cubed(const double* d, long n, double* f, double* e, double* g);

// Host velocities in surface order ([ux|uy|uz], owned_count each, row-major) into the device
// field `out` (through a device scratch copy).
void tree_velocity_to_field(const mesh::SurfaceMesh& mesh, const double* host, const mesh::Field& out,
                            exec::Buffer<double>& scratch);
// NaN velocities on the device (non-finite positions).
void tree_nan_field(const mesh::SurfaceMesh& mesh, const mesh::Field& out);

}  // namespace beatnik::model
