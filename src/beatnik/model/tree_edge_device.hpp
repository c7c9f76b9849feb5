#pragma once
// The window's edge terms (tree_edge.hpp) where the sums run on the device (-S tree -x cuda,
// docs/tree.md "On the GPU"): the prefix tables are built from the source and proxy pools the
// sums already uploaded — each table's sources sorted by a stable segmented sort (ties in tree
// order, as the host's std::stable_sort), the prefix strengths as sums over each block of
// sources (one item per block and proxy) and a running sum per proxy — then one kernel item per
// target adds its batch's edge terms in list order with the host's binary searches, proxy pairs
// and direct pairs beside the rows. Written with exec::parallel_for (the sort apart), so it also
// runs on the host, where the unit test holds it against build_edge_table. On the device all of
// it is queued on a CUDA stream of this object's own (copies included: nothing on the default
// stream), so the solver lets it run beside the near and far sums still in flight.
#include <vector>

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

class TreeEdgeDevice {
 public:
  explicit TreeEdgeDevice(exec::Space space);
  ~TreeEdgeDevice();
  TreeEdgeDevice(const TreeEdgeDevice&) = delete;
  TreeEdgeDevice& operator=(const TreeEdgeDevice&) = delete;
  // Queues the tables of `specs` from the pools (in this object's space; they must stay unchanged
  // until wait()); p bounds every side's degree. Returns without waiting for the device.
  void build(const std::vector<EdgeTableSpec>& specs, const double* src_pool, const double* prox_pool, int p);
  // Queues the upload of the term lists: batch b holds targets [first[b], first[b+1]) (first
  // ascending) and the terms [start[b], start[b+1]) of `terms`, in list order. Before or after
  // build() (before: the host need not wait for the tables to queue the copies).
  void terms(const std::vector<long>& first, const std::vector<long>& start, const std::vector<EdgeTermDev>& terms);
  // Queues, after build() and terms(), the edge terms of every batch into velocity(), for the
  // targets tgt (this space, [x|y|z], n each; first.back() ≤ n): a target's velocity is its
  // batch's terms' sum (0 outside every batch).
  void queue_sum(const double* tgt, long n, const BRImages& img, double eps);
  // Waits for the queued work; then the pair counts and the device times below are the last sum's.
  void wait();
  // After wait(): the last queue_sum's velocities ([ux|uy|uz], n each, this space), or null when
  // it had no terms.
  const double* velocity() const { return summed_ ? acc_.data() : nullptr; }
  // terms, queue_sum, wait, and the velocities added to acc (host, [ux|uy|uz], n each).
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
  long proxy_pairs = 0, direct_pairs = 0;  // of the last sum
  long bytes = 0;                          // of the last build's tables
  // Last build (host set-up and queueing: host_s; the passes: tables_s), terms (uploads queued:
  // copy_s) and sum (the kernel: kernel_s). On the device tables_s and kernel_s are device times
  // (CUDA events, read by wait()) that may overlap other streams' work; on the host, wall times.
  double host_s = 0, tables_s = 0, kernel_s = 0, copy_s = 0;

  struct Tab {  // a table as the passes read it
    long item;    // its first source among all tables' sources (the sort's segments)
    long sorted;  // offset of its sorted sources
    long prefix;  // offset of its prefix rows
    long citem;   // its first (block, proxy) item
    long pitem;   // its first proxy item
    long src, stride, n, prox, block, rows;
    int m, axis;
    int dg[3];
  };

 private:
  void sync() const;  // waits for this object's stream (device)
  exec::Space space_;
  // Device: this object's CUDA stream, a blocking one (ordered after the default stream's
  // copies: the pools' fills), and its events: tables start and done, sum start and done.
  void* stream_ = nullptr;
  void* events_[4] = {};
  bool built_ = false;         // build() recorded its events
  bool summed_ = false;        // the last queue_sum launched its kernel
  int nb_ = 0;                 // the last terms(): batches, terms, first.back(), largest table
  long nterms_ = 0, last_target_ = 0, max_table_ = -1;
  std::vector<Tab> host_tabs_;
  std::vector<double> host_nodes_;  // the uploads' sources, kept until the copies are done
  std::vector<long> host_segs_;
  exec::Buffer<Tab> tabs_;
  exec::Buffer<double> nodes_, keys_, keys_sorted_, sorted_, prefix_, lagrange_, acc_;
  exec::Buffer<int> vals_, vals_sorted_;
  exec::Buffer<long> segs_, first_, start_;
  exec::Buffer<EdgeTermDev> terms_;
  exec::Buffer<unsigned long long> counts_;
  exec::Buffer<char> temp_;  // the device sort's scratch
  const double* prox_pool_ = nullptr;  // the last build's proxy pool
  long items_ = 0;
  int p_ = 0;
};

}  // namespace beatnik::model
