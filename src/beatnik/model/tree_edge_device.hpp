#pragma once
// The window's edge terms (tree_edge.hpp) where the sums run on the device (-S tree -x cuda,
// docs/tree.md "On the GPU"): the prefix tables are built from the source and proxy pools the
// sums already uploaded — each table's sources sorted by a stable segmented sort (ties in tree
// order, as the host's std::stable_sort), the prefix strengths as sums over each block of
// sources (one item per block and proxy) and a running sum per proxy — then one kernel item per
// target adds its batch's edge terms in list order with the host's binary searches, proxy pairs
// and direct pairs beside the rows. Written with exec::parallel_for (the sort apart), so it also
// runs on the host, where the unit test holds it against build_edge_table.
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
  // The tables of `specs` from the pools (in this object's space); p bounds every side's degree.
  void build(const std::vector<EdgeTableSpec>& specs, const double* src_pool, const double* prox_pool, int p);
  // Adds to acc (host, [ux|uy|uz], n each) the edge terms of every batch: batch b holds targets
  // [first[b], first[b+1]) of tgt (this space, [x|y|z], n each; first ascending, first.back() ≤ n)
  // and the terms [start[b], start[b+1]) of `terms`, in list order.
  void sum(const double* tgt, long n, const std::vector<long>& first, const std::vector<long>& start,
           const std::vector<EdgeTermDev>& terms, const BRImages& img, double eps, double* acc);
  // Table k's sorted sources ([x|y|z|qx|qy|qz], n each) and prefix rows (3m per row), on the host.
  std::vector<double> sorted(int k) const;
  std::vector<double> prefix(int k) const;

  // Sources whose Lagrange values are held at once (216 bytes each at degree 8): the tables are
  // built in groups of about this many (at 1024² the tables hold ~2e7 sources a call).
  long max_lagrange_items = 1L << 24;
  long proxy_pairs = 0, direct_pairs = 0;  // of the last sum
  long bytes = 0;                          // of the last build's tables
  double tables_s = 0, kernel_s = 0, copy_s = 0;  // last build; last sum (kernel, copies)

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
  exec::Space space_;
  std::vector<Tab> host_tabs_;
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
