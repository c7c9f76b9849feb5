#pragma once
// The window's edge terms (tree_edge.hpp) where the sums run on the device (-S tree -x cuda,
// docs/tree.md "On the GPU"): the prefix tables are built from the source and proxy pools the
// sums already uploaded — each table's sources sorted stably (ties in tree order, as the host's
// std::stable_sort; on the device two radix sorts, or CUB's segmented sort), the prefix
// strengths as sums over each block of sources (on the device one thread block per block of
// sources, its Lagrange values in shared memory) and a running sum per proxy — then one kernel
// item per target adds its batch's edge terms in list order with the host's binary searches,
// proxy pairs and direct pairs beside the rows (or, variants 8–11, a warp per batch). Written
// with exec::parallel_for (the sort and the device-only kernels apart), so it also
// runs on the host, where the unit test holds it against build_edge_table. On the device all of
// it is queued on a CUDA stream of this object's own (copies included: nothing on the default
// stream), so the solver lets it run beside the near and far sums still in flight.
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "beatnik/base/sharded_key_map.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/model/br_kernel.hpp"

namespace beatnik::model {

struct EdgeTableSpec {  // one table: cluster C's sources along `axis` through one proxy set
  long src = 0;     // C's first source in the source pool (x there, y at src + stride, ...)
  long stride = 0;  // of C's source array
  long n = 0;       // C's sources
  long prox = 0;    // the set's proxies in the proxy pool ([x|y|z|..], m apart)
  int m = 0, axis = 0;
  long block = 1;   // a prefix row every `block` sources (tree::edge_block(m) in the solver)
  int dg[3] = {0, 0, 0};
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};  // C's box (its proxy grid's)
};

struct EdgeTermDev {  // one edge term of a batch's list
  int table, mx, my;
};

// One call's work comes in pieces (the solver's edge stage pipelined with its lists: tables of
// the keys a run of batches adds, then that run's sums): begin(), add_tables() and add_sums() as
// often as wanted (a sum's terms must name tables added before it), wait(). Everything is
// queued in order on this object's stream, so a piece never waits for the device; the tables
// grow in place (their buffers copied on the stream when they must grow: queued work keeps
// reading the old ones, kept until wait()), and the uploads go through page-locked memory sized
// from the largest call so far (pageable memory would wait for the stream's earlier work).
class TreeEdgeDevice {
 public:
  explicit TreeEdgeDevice(exec::Space space);
  ~TreeEdgeDevice();
  TreeEdgeDevice(const TreeEdgeDevice&) = delete;
  TreeEdgeDevice& operator=(const TreeEdgeDevice&) = delete;
  // Starts a call: no table, no sum. The pools (this object's space) must stay unchanged until
  // wait(); p bounds every side's degree. Waits for the previous call's work.
  void begin(const double* src_pool, const double* prox_pool, int p);
  // Queues the tables of `specs`, numbered from tables() on (returned). Returns without waiting.
  int add_tables(const std::vector<EdgeTableSpec>& specs);
  int tables() const { return static_cast<int>(host_tabs_.size()); }
  // Starts the sums into velocity() for the targets tgt (this space, [x|y|z], n each): zero for
  // every target until a sum adds its batch.
  void begin_sums(const double* tgt, long n, const BRImages& img, double eps);
  // Queues the sums of some batches: batch b holds targets [first[b], first[b+1]) (first
  // ascending, first.back() ≤ n) and the terms [start[b], start[b+1]) of `terms` (start[0] = 0),
  // in list order; a target's velocity is its batch's terms' sum. Returns without waiting.
  void add_sums(const std::vector<long>& first, const std::vector<long>& start, const std::vector<EdgeTermDev>& terms);
  // The same with the CSR (nb + 1, from 0) and the terms (nterms, tables added before) already
  // in this object's space, unchanged until wait() (the lists built on the device:
  // tree_lists_device.hpp); their tables are not checked on the host.
  void add_sums(const std::vector<long>& first, const long* start, const EdgeTermDev* terms, long nterms);
  // begin() and add_tables() at once (the tests, the one-shot path).
  void build(const std::vector<EdgeTableSpec>& specs, const double* src_pool, const double* prox_pool, int p);
  // Waits for the queued work; then the pair counts and the device times below are the call's.
  void wait();
  // After wait(): the call's velocities ([ux|uy|uz], n each, this space), or null when no sum
  // had a term.
  const double* velocity() const { return summed_ ? acc_.data() : nullptr; }
  // begin_sums, add_sums, wait, and the velocities added to acc (host, [ux|uy|uz], n each).
  void sum(const double* tgt, long n, const std::vector<long>& first, const std::vector<long>& start,
           const std::vector<EdgeTermDev>& terms, const BRImages& img, double eps, double* acc);
  // Table k's sorted sources ([x|y|z|qx|qy|qz], n each) and prefix rows (3m per row), on the host.
  std::vector<double> sorted(int k);
  std::vector<double> prefix(int k);

  // Sources whose Lagrange values are held at once (216 bytes each at degree 8): the tables are
  // built in groups of about this many (at 1024² the tables hold ~2e7 sources a call).
  long max_lagrange_items = 1L << 24;
  // The device kernel's variant (tree_edge_device.cpp's sum_pass; the same bits in each): −1
  // takes BEATNIK_TREE_EDGE_KERNEL or the default; the host runs one loop whatever it is.
  int kernel_variant = -1;
  static constexpr int kKernelVariants = 14;  // 0 … 13
  // The device tables' passes (tree_edge_device.cpp's table_pass_variant): −1 takes
  // BEATNIK_TREE_EDGE_TABLES or the default 1 (the Lagrange values and block sums in one kernel,
  // no Lagrange buffer); 0 the Lagrange values' buffer (grouped by max_lagrange_items) then the
  // block sums. The same bits; the host runs 0.
  int table_variant = -1;
  // Device: each piece's sort by two stable radix sorts (by key, then by table; the same
  // permutation) instead of CUB's segmented sort, which waits on the host for the stream (it
  // reads sizes back): the solver sets it in both paths, one-shot and pipelined, unless
  // BEATNIK_TREE_EDGE_SORT=segmented (docs/tree-log.md "The edge stage's sort, kernel and tables").
  // The host sorts per table.
  bool radix_sort = false;
  // Device, fused tables (table_variant 1): a table whose sources (the same first source, count
  // and axis) an earlier table of the call has sorted reads that table's sorted copy instead of
  // sorting and copying its own when this is 1; 0 gives every table its own copy; −1 takes
  // BEATNIK_TREE_EDGE_SHARE, else 1. The same doubles either way (the same sources sorted by the
  // same stable rule); only the tables' proxy sets differ. The host always copies.
  int share_sorted = -1;
  long shared_tables = 0;  // this call's tables that read an earlier table's sorted copy
  long proxy_pairs = 0, direct_pairs = 0;  // of the call's sums
  long bytes = 0;                          // of the call's tables
  int table_pieces = 0, sum_pieces = 0;    // add_tables / add_sums calls with work, this call
  // This call: host set-up and queueing (host_s), the uploads queued (copy_s), the tables' passes
  // (tables_s) and the sums' kernels (kernel_s). On the device tables_s and kernel_s are device
  // times (CUDA events, summed over the pieces, read by wait()) that may overlap other streams'
  // work; on the host, wall times.
  double host_s = 0, tables_s = 0, kernel_s = 0, copy_s = 0;

  struct Tab {  // a table as the passes read it
    long item;    // its first source among its piece's tables' sources (the sort's segments)
    long sorted;  // offset of its sorted sources (among all of the call's)
    long prefix;  // offset of its prefix rows (among all of the call's)
    long citem;   // its first (block, proxy) item in its piece
    long pitem;   // its first proxy item in its piece
    long bitem;   // its first block of sources in its piece (the fused tables' thread blocks)
    long src, stride, n, prox, block, rows;
    int m, axis;
    int dg[3];
  };

 private:
  void sync() const;  // waits for this object's stream (device)
  // A piece's sums on the stream (add_sums): first_ uploaded, start and terms in this space.
  void queue_sums(const std::vector<long>& first, const long* start, const EdgeTermDev* terms, double t0);
  // n elements of v (host) to dst (this space), queued on the stream (through the page-locked
  // staging while it has room, else from v: pageable, which may wait for the stream).
  template <class T>
  void upload(T* dst, const T* v, size_t n);
  // b to at least n elements: its first `keep` copied on the stream, the old buffer kept until
  // wait() (queued work may still read it).
  template <class T>
  void grow(exec::Buffer<T>& b, size_t n, size_t keep = 0);
  void* event();  // the next of this call's events (device), created as needed
  exec::Space space_;
  // Device: this object's CUDA stream, a blocking one (ordered after the default stream's
  // copies: the pools' fills), and the call's events: per piece its start and end.
  void* stream_ = nullptr;
  std::vector<void*> events_;
  size_t next_event_ = 0;
  std::vector<std::pair<void*, void*>> table_events_, sum_events_;
  bool summed_ = false;        // a sum of this call had a term
  long n_ = 0;                 // begin_sums: targets
  const double* tgt_ = nullptr;
  BRImages img_{};
  double eps_ = 0;
  std::vector<Tab> host_tabs_;  // every table of this call
  // This call's sorted copies by their sources (first source, count, axis): the offset in sorted_.
  ShardedKeyMap sorted_of_;
  long sorted_used_ = 0, prefix_used_ = 0;          // this call's, in doubles
  long sorted_peak_ = 0, prefix_peak_ = 0, tabs_peak_ = 0;  // the most of any call
  // Page-locked staging for the uploads, filled from the front each call.
  char* stage_ = nullptr;
  size_t stage_cap_ = 0, stage_used_ = 0, stage_peak_ = 0;
  std::vector<std::shared_ptr<void>> retired_;  // buffers grown out of during this call
  exec::Buffer<Tab> tabs_;
  exec::Buffer<double> nodes_, keys_, keys_sorted_, sorted_, prefix_, lagrange_, acc_;
  exec::Buffer<int> vals_, vals_sorted_, idx2_, seg_, seg2_;  // the last three: radix_sort's
  exec::Buffer<int> btab_;  // the fused tables kernel's table per thread block
  exec::Buffer<long> segs_, first_, start_;
  exec::Buffer<EdgeTermDev> terms_;
  exec::Buffer<unsigned long long> counts_;
  exec::Buffer<char> temp_;  // the device sort's scratch
  const double* src_pool_ = nullptr;
  const double* prox_pool_ = nullptr;
  int p_ = 0;
};

}  // namespace beatnik::model
