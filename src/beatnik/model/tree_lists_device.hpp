#pragma once
// The single traversal's interaction lists written once for host and device (exec::parallel_for;
// docs/tree-log.md "The lists on the device"): the same terms in the same order as
// TreeBRSolver::lists (walk/visit → decide, cheapest_low), so that the sums give the same bits.
//
// An item per (batch, source tree, image), in that order (images mx-major as lists' loops): the
// host's lists of a batch are, per source tree, the image-by-image concatenation of one
// pre-order walk (child 0 first) per image — exactly the items' outputs laid end to end. Each
// item walks its image with an explicit stack. Two passes: count (near, far, edge terms per
// item), an exclusive scan of the counts, fill (each item writes its terms at its offsets).
//
// The solver builds its lists here on -x cuda (BEATNIK_TREE_LISTS=device, the default there;
// compute_device), and ranges() turns them into the device sums' source ranges without a trip
// through the host. Compared term for term with the host's lists on the host
// (ListsKernelEqualsTheHost) and on the device (ListsKernelOnTheDeviceEqualsTheHosts).
//
// The dual traversal's leaves use the same walk from the (cluster, image) pairs their parents
// hand down (ListPending: an item per pair, run_pending / queue_pending; BEATNIK_TREE_DUAL_LEAVES=
// device), compared with the host's leaf_visit lists (DualFastListsEqualTheReference).
#include <array>
#include <vector>

#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/scan.hpp"
#include "beatnik/exec/space.hpp"
#include "beatnik/model/tree_edge_device.hpp"
#include "beatnik/model/tree_let.hpp"
#include "beatnik/model/tree_sums_device.hpp"

namespace beatnik::model::tree {

// One source tree as the walk reads it: pointers in the walk's space.
struct ListTree {
  const search::Cluster* clusters;  // root first; child[0] < 0: a leaf (or, remote, not opened)
  const char* full;                 // every source of the cluster present
  const long* proxy_start;          // < 0: no degree-p proxies
  const Ball* balls;                // each cluster's centre and radius (tree::ball)
  const int* low_first;             // its lower-degree sets [low_first[c], low_first[c+1])
  const double* low_theta;          // per set: valid at ρ < theta
  int remote;                       // a LET part: also the owner's test against T
};
// One target batch B: its box (the span's) and ball, and the ball of the target box T holding it.
struct ListTarget {
  double lo[3], hi[3];
  Ball b, t;
};
// One term, as TreeBRSolver::Term (tree, cluster, image, partial, low, axis).
struct ListTerm {
  int tree, cluster, mx, my, partial, low, axis;
};
// The dual traversal's leaves: a (source cluster, image) pair a leaf's parent handed down
// (TreeBRSolver::Pending), walked from that cluster as TreeBRSolver::leaf_visit walks it.
struct ListPending {
  int tree, cluster, mx, my, full;
  int batch;  // its batch, from the pass's first
};
struct ListsInput {
  const ListTree* trees;  // nt, in the walk's space
  int nt = 0;
  const ListTarget* targets;  // nb batches, in the walk's space
  int nb = 0;
  Rules rules;
  // Dual leaves (pending non-null): an item per pending pair, in the walk's space; else an item
  // per (batch, tree, image) from the trees' roots.
  const ListPending* pending = nullptr;
  long npending = 0;
  long items() const;  // npending, else nb · nt · images
};
// The count pass: counts[k·items + item] = its terms of kind k (0 near, 1 far, 2 edge);
// bad[item] = 1 when the walk met a cluster it needs the sources of that its LET part lacks
// (the host throws), or its stack overflowed. Both arrays in `space`.
void list_counts(exec::Space space, const ListsInput& in, long* counts, int* bad);
// The fill pass: at[k·(items + 1) + item] is where item's terms of kind k start in out[k] (the
// exclusive scan of each kind's counts); out: near, far and edge terms, in `space`.
void list_fill(exec::Space space, const ListsInput& in, const long* at, ListTerm* near, ListTerm* far,
               ListTerm* edge);

// Where one tree's terms read their sources in the device sums' pools (TreeSumsDevice::base) and
// how many proxies each of its sets holds: what the sums' ranges need besides the lists' arrays.
struct RangeTree {
  long n = 0;          // the tree's sources: a near range's stride
  long near_base = 0;  // its sources in the near pool
  long far_base = 0;   // its degree-p proxies in the far pool
  long low_base = 0;   // its lower-degree sets in the far pool
  const int* proxy_count = nullptr;  // per cluster
  const long* low_start = nullptr;   // per set: offset from low_base
  const int* low_count = nullptr;    // per set
};

// The terms of batch b of kind k at terms[k][first[k][b], first[k][b+1]).
struct HostLists {
  std::vector<long> first[3];
  std::vector<ListTerm> terms[3];
};

// Both passes in a space: the input's arrays uploaded (host → space; a copy on the host), the
// counts, three exclusive scans (exec::ExclusiveScan: cub on the device), the fill and each
// batch's bounds, all in the pass's space; on the device all on a non-blocking stream of the
// pass's own, which nothing queued before waits for. Buffers kept across runs.
class ListsPass {
 public:
  explicit ListsPass(exec::Space space);
  ~ListsPass();
  ListsPass(const ListsPass&) = delete;
  ListsPass& operator=(const ListsPass&) = delete;
  // host: the input with host pointers; clusters[s], sets[s]: tree s's clusters and
  // lower-degree sets (the arrays' lengths). Throws the host's error where the host would.
  void run(const ListsInput& host, const std::vector<long>& clusters, const std::vector<long>& sets);
  // The trees and the targets alone (run's first part), for passes that share them
  // (run_pending, queue_pending); done when this returns.
  void upload_trees(const ListsInput& host, const std::vector<long>& clusters, const std::vector<long>& sets);
  // The dual traversal's leaves (docs/tree-log.md "The dual leaves on the device"): the trees those
  // `owner` uploaded (the passes of one call share them); its batches [b0, b0 + nb), their
  // pending pairs in batch order (batch b0 + b's from item_first[b], nb + 1 entries): host
  // arrays, uploaded. The terms per batch in leaf_visit's order, which walks a batch's pairs one
  // after another: the host's lists term for term.
  void run_pending(const ListsPass& owner, int b0, int nb, const ListPending* pending, const long* item_first,
                   const Rules& rules);
  // run's and run_pending's passes over the input's items (public only because nvcc's device
  // lambdas may not live in a private member).
  void walk(const long* item_first);
  // The dual's leaves without waiting (docs/tree-log.md "The dual leaves on the device"): run_pending
  // and ranges() (with `owner`'s range tables, upload_ranges; batch: the nb batches' bounds)
  // queued on the pass's stream into the buffers this pass has from its earlier runs. complete()
  // waits for them and returns true when everything fit; false: the buffers were grown, so
  // queue_again() and complete() again. Throws the host's error where the host would.
  void queue_pending(const ListsPass& owner, int b0, int nb, const ListPending* pending, const long* item_first,
                     const Rules& rules, const std::vector<long>& batch);
  void queue_again();  // (public only because nvcc's device lambdas may not live in a private member)
  bool complete();
  void upload_ranges(const std::vector<RangeTree>& trees, const std::vector<long>& clusters,
                     const std::vector<long>& sets);  // done when this returns
  const ListTerm* terms(int kind) const { return kterms_[kind]; }  // in the pass's space
  long count(int kind) const { return total_[kind]; }
  const long* first(int kind) const { return kfirst_ + kind * (in_.nb + 1); }  // nb + 1 bounds
  // The lists brought back: every kind's batch bounds, the near and far terms when near_far,
  // the edge terms when edge.
  HostLists to_host(bool near_far = true, bool edge = true);
  // After run(): the sums' ranges of every batch in the pass's space, as TreeBRSolver's
  // near_ranges and far_ranges make them (adjacent near terms of one tree and image without a
  // window merged; one far range per far term) and flattened as TreeSumsDevice::launch does.
  // trees[s]: host arrays, uploaded here; sets[s] as run()'s. Near CSR near_first() (nb + 1,
  // from 0); the far CSR is first(1). low_terms(): the far terms through a lower-degree set
  // times their batch's targets, summed (the solver's load statistics); batch[2b], batch[2b+1]:
  // batch b's targets.
  void ranges(const std::vector<RangeTree>& trees, const std::vector<long>& clusters, const std::vector<long>& sets,
              const std::vector<long>& batch);
  const TreeSumRange* near_ranges() const { return near_ranges_.data(); }
  const TreeSumRange* far_ranges() const { return far_ranges_.data(); }
  const long* near_first() const { return near_first_.data(); }
  const long* batch() const { return batch_.data(); }  // the batches' bounds, in the pass's space
  long near_range_count() const { return near_total_; }
  long low_terms() const { return low_total_; }
  // After run(): the edge stage's keys from the edge terms, as TreeBRSolver::edge_keys numbers
  // them (every (tree, cluster, axis, set) a term uses, once, in slot order: tree, cluster, axis,
  // the degree-p proxies then the cluster's lower-degree sets) and each edge term's table (its
  // key's number) and image in edge_terms(), in the pass's space; base[s]: tree s's first slot
  // (TreeBRSolver::edge_layout, nt + 1 entries). Returns the keys (tree, cluster, axis, set or −1).
  std::vector<std::array<int, 4>> edge_keys(const std::vector<long>& base);
  const EdgeTermDev* edge_terms() const { return edge_terms_.data(); }

 private:
  struct TreeArrays {
    exec::Buffer<search::Cluster> clusters;
    exec::Buffer<char> full;
    exec::Buffer<long> proxy_start;
    exec::Buffer<Ball> balls;
    exec::Buffer<int> low_first;
    exec::Buffer<double> low_theta;
  };
  struct RangeArrays {
    exec::Buffer<int> proxy_count, low_count;
    exec::Buffer<long> low_start;
  };
  std::vector<RangeArrays> range_arrays_;
  exec::Buffer<RangeTree> range_table_;
  exec::Buffer<long> batch_, near_counts_, near_first_, low_;
  exec::Buffer<TreeSumRange> near_ranges_, far_ranges_;
  long near_total_ = 0, low_total_ = 0;
  exec::Buffer<long> slot_mark_, slot_index_, slot_base_;
  exec::Buffer<int> keys_;
  exec::Buffer<EdgeTermDev> edge_terms_;
  std::vector<ListTree> host_trees_;  // the trees as the kernels read them (pointers in the pass's space)
  std::vector<long> host_clusters_;
  exec::Space space_;
  void* stream_ = nullptr;  // the device's passes' own stream (stream())
  void* stream();
  void wait();
  template <class T>
  void download(T* host, const T* src, size_t n);  // from the pass's space, waiting for its stream
  exec::ExclusiveScan scan_;
  std::vector<TreeArrays> trees_;
  exec::Buffer<ListTree> tree_table_;
  exec::Buffer<ListTarget> targets_;
  exec::Buffer<ListPending> pending_;
  exec::Buffer<long> item_first_;
  void trees_in(const ListsInput& host, const std::vector<long>& clusters, const std::vector<long>& sets);
  void pending_input(const ListsPass& owner, int b0, int nb, const ListPending* pending, const long* item_first,
                     const Rules& rules);
  void range_tables(const std::vector<RangeTree>& trees, const std::vector<long>& clusters,
                    const std::vector<long>& sets);
  exec::Buffer<ListTerm> all_;  // queue_pending: the terms of every kind
  exec::Buffer<long> low_first_;
  exec::Buffer<long> meta_;  // queue_pending: 8 totals (queue_again), then each kind's batch bounds
  std::vector<long> host_meta_;  // meta_ as complete() read it (to_host's bounds)
  const long* kfirst_ = nullptr;  // each kind's batch bounds (first_ or in meta_)
  const RangeTree* owner_ranges_ = nullptr;
  const ListTerm* kterms_[3] = {nullptr, nullptr, nullptr};  // each kind's terms (terms_ or all_)
  exec::Buffer<long> counts_, at_, first_;
  exec::Buffer<int> bad_;
  exec::Buffer<ListTerm> terms_[3];
  long total_[3] = {0, 0, 0};
  ListsInput in_;  // with the pass's arrays
};

}  // namespace beatnik::model::tree
