// The single traversal's interaction lists, and the dual traversal's leaves', by kernels written
// once (tree_lists_device.hpp).
#include "beatnik/model/tree_lists_device.hpp"

#include <algorithm>

#include "beatnik/base/error.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/exec/scratch.hpp"
#include "beatnik/exec/stream.hpp"

#if defined(BEATNIK_DEVICE_COMPILE)
#include <cuda_runtime.h>
#endif

namespace beatnik::model::tree {

namespace {

// The walk's explicit stack: a binary tree's pre-order walk holds at most depth + 1 entries.
constexpr int kListStack = 128;

BEATNIK_HOST_DEVICE inline int images_of(const Rules& r) { return (r.hi[0] - r.lo[0] + 1) * (r.hi[1] - r.lo[1] + 1); }

// TreeBRSolver::cheapest_low: the lower-degree set of cluster c with the fewest proxies valid for
// batch B at image (mx, my) at margin·ρ (−1: none); the same doubles in the same order.
BEATNIK_HOST_DEVICE inline int list_cheapest_low(const ListTree& T, const Ball& B, int c, int mx, int my,
                                                 double margin, const Rules& r) {
  if (T.low_first[c] == T.low_first[c + 1]) return -1;
  const Ball& C = T.balls[c];
  const double rho = margin * (B.r + C.r) / distance(B, C, mx, my, r.images);
  int best = -1;
  for (int k = T.low_first[c]; k < T.low_first[c + 1]; ++k)
    if (rho < T.low_theta[k]) best = k;
  return best;
}

// One walk: batch b, source tree s, image (mx, my), pre-order from cluster `root` (whose pairs
// take the image whole when root_full) with child 0 first, each visit TreeBRSolver::decide's
// (leaf_visit's for a dual leaf's pair). sink(kind, term): kind 0 near, 1 far, 2 edge.
// Returns false where the host would throw (or the stack overflows).
template <class Sink>
BEATNIK_HOST_DEVICE inline bool walk_from(const ListsInput& in, int b, int s, int mx, int my, int root, bool root_full,
                                          Sink& sink) {
  const Rules& r = in.rules;
  const ListTarget& tg = in.targets[b];
  const ListTree& S = in.trees[s];
  search::Cluster B;
  for (int d = 0; d < 3; ++d) {
    B.lo[d] = tg.lo[d];
    B.hi[d] = tg.hi[d];
  }
  int stack[kListStack];
  bool stack_full[kListStack];
  int top = 0;
  stack[top] = root;
  stack_full[top++] = root_full;
  while (top > 0) {
    --top;
    const int cluster = stack[top];
    const bool full = stack_full[top];
    const search::Cluster& C = S.clusters[cluster];
    const Ball& c = S.balls[cluster];
    const bool leaf = C.child[0] < 0;
    auto separated_ = [&](bool edge) {
      return separated(tg.b, c, mx, my, r, edge) ||
             (box_rule(r, S.remote, leaf) && separated(tg.t, c, mx, my, r, edge));
    };
    int kind = -1;  // a term of this kind, or (−1) none
    ListTerm e{s, cluster, mx, my, 0, -1, -1};
    bool split = false, full_next = false;
    bool decided = false;
    if (!full) {
      int cut = 0;
      const Cover cv = cover(span(B, C, r.images), mx, my, r.images, &cut);
      if (cv == Cover::None) {
        decided = true;
      } else if (cv == Cover::Partial) {
        decided = true;
        const int axis = edge_axis(cut);
        bool edge_term = false;
        if (r.edge && axis >= 0 && S.full[cluster] && separated_(true)) {
          const int low = list_cheapest_low(S, tg.b, cluster, mx, my, r.edge_margin, r);
          if (low >= 0 || S.proxy_start[cluster] >= 0) {
            kind = 2;
            e.low = low;
            e.axis = axis;
            edge_term = true;
          }
        }
        if (!edge_term) {
          if (leaf) {
            if (!S.full[cluster]) return false;
            kind = 0;
            e.partial = 1;
          } else {
            split = true;
            full_next = false;
          }
        }
      }
    }
    if (!decided) {  // every pair takes this image
      bool leaf_direct = false, go_down = true;
      if (separated_(false)) {
        const int low = list_cheapest_low(S, tg.b, cluster, mx, my, 1.0, r);
        if (low >= 0 || S.proxy_start[cluster] >= 0) {
          kind = 1;
          e.low = low;
          go_down = false;
        } else if (S.full[cluster] && leaf) {
          leaf_direct = true;
        }
      } else if (leaf) {
        leaf_direct = true;
      }
      if (leaf_direct) {
        if (!S.full[cluster]) return false;
        kind = 0;
        go_down = false;
      }
      if (go_down) {
        split = true;
        full_next = true;
      }
    }
    if (kind >= 0) sink(kind, e);
    if (split) {
      // The host visits both children (child 0 first); a split cluster without children would be
      // read out of bounds there.
      if (leaf || top + 2 > kListStack) return false;
      stack[top] = C.child[1];
      stack_full[top++] = full_next;
      stack[top] = C.child[0];
      stack_full[top++] = full_next;
    }
  }
  return true;
}

// Item `item`'s walk: a dual leaf's pending pair, else (batch, tree, image) from the root.
template <class Sink>
BEATNIK_HOST_DEVICE inline bool walk_item(const ListsInput& in, long item, Sink& sink) {
  if (in.pending) {
    const ListPending& p = in.pending[item];
    return walk_from(in, p.batch, p.tree, p.mx, p.my, p.cluster, p.full != 0, sink);
  }
  const Rules& r = in.rules;
  const int ni = images_of(r), ny = r.hi[1] - r.lo[1] + 1;
  const int i = static_cast<int>(item % ni);
  const int s = static_cast<int>((item / ni) % in.nt);
  const int b = static_cast<int>(item / (long(ni) * in.nt));
  return walk_from(in, b, s, r.lo[0] + i / ny, r.lo[1] + i % ny, 0, false, sink);
}

}  // namespace

long ListsInput::items() const { return pending ? npending : long(nb) * nt * images_of(rules); }

void list_counts(exec::Space space, const ListsInput& in, long* counts, int* bad) {
  const ListsInput w = in;
  const long n = in.items();
  exec::parallel_for(space, n, [=] BEATNIK_HOST_DEVICE(long item) {
    long c[3] = {0, 0, 0};
    auto sink = [&](int kind, const ListTerm&) { ++c[kind]; };
    bad[item] = walk_item(w, item, sink) ? 0 : 1;
    for (int k = 0; k < 3; ++k) counts[k * n + item] = c[k];
  });
}

void list_fill(exec::Space space, const ListsInput& in, const long* at, ListTerm* near, ListTerm* far,
               ListTerm* edge) {
  const ListsInput w = in;
  const long n = in.items();
  exec::parallel_for(space, n, [=] BEATNIK_HOST_DEVICE(long item) {
    long k[3] = {at[item], at[(n + 1) + item], at[2 * (n + 1) + item]};
    ListTerm* out[3] = {near, far, edge};
    auto sink = [&](int kind, const ListTerm& e) { out[kind][k[kind]++] = e; };
    walk_item(w, item, sink);
  });
}

namespace {
// Host → the pass's space, queued on the work stream (the pass's own stream on the device): the
// host array may go once this returns (a pageable copy is staged before it returns).
template <class T>
void upload(exec::Buffer<T>& b, exec::Space s, const T* src, long n) {
  exec::grow(b, s, size_t(n));
  if (n > 0) exec::copy_async(b.data(), s, src, exec::Space::Host, size_t(n));
}
}  // namespace

ListsPass::ListsPass(exec::Space space) : space_(space), scan_(space) {}

ListsPass::~ListsPass() {
#if defined(BEATNIK_DEVICE_COMPILE)
  if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
#endif
}

// The device's passes run on a non-blocking stream of their own, so that nothing here waits for
// the work queued on the legacy stream before them (the upward pass, the lower-degree sets): the
// lists need only the trees' host arrays. At the device's highest priority: the dual's leaves
// run while earlier runs' sums fill the GPU (docs/tree-log.md "The dual leaves on the device").
// Host: null (the host runs everything in place).
void* ListsPass::stream() {
#if defined(BEATNIK_DEVICE_COMPILE)
  if (space_ == exec::Space::Device && !stream_) {
    cudaStream_t st;
    int least = 0, greatest = 0;
    if (cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess ||
        cudaStreamCreateWithPriority(&st, cudaStreamNonBlocking, greatest) != cudaSuccess)
      throw Error("tree lists: cudaStreamCreateWithPriority failed");
    stream_ = st;
  }
#endif
  return stream_;
}

// The copies and kernels queued on stream() done (the host waits for that stream only).
void ListsPass::wait() {
#if defined(BEATNIK_DEVICE_COMPILE)
  if (stream_ && cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)) != cudaSuccess)
    throw Error("tree lists: cudaStreamSynchronize failed");
#endif
}

template <class T>
void ListsPass::download(T* host, const T* src, size_t n) {
  if (n == 0) return;
  exec::copy_async(host, exec::Space::Host, src, space_, n);
  wait();
}

// The trees and targets queued for upload on the pass's stream (the pass's own kernels follow
// them there; other passes' streams need upload_trees' wait).
void ListsPass::trees_in(const ListsInput& host, const std::vector<long>& clusters, const std::vector<long>& sets) {
  exec::WorkStreamScope on(stream());
  const int nt = host.nt;
  trees_.resize(size_t(nt));
  std::vector<ListTree> dev(static_cast<size_t>(nt));
  for (int s = 0; s < nt; ++s) {
    const ListTree& h = host.trees[s];
    TreeArrays& a = trees_[size_t(s)];
    const long nc = clusters[size_t(s)];
    upload(a.clusters, space_, h.clusters, nc);
    upload(a.full, space_, h.full, nc);
    upload(a.proxy_start, space_, h.proxy_start, nc);
    upload(a.balls, space_, h.balls, nc);
    upload(a.low_first, space_, h.low_first, nc + 1);
    upload(a.low_theta, space_, h.low_theta, sets[size_t(s)]);
    dev[size_t(s)] = {a.clusters.data(), a.full.data(), a.proxy_start.data(), a.balls.data(), a.low_first.data(),
                      a.low_theta.data(),  h.remote};
  }
  upload(tree_table_, space_, dev.data(), nt);
  host_trees_ = dev;  // (device pointers: for per-tree kernels)
  host_clusters_ = clusters;
  upload(targets_, space_, host.targets, host.nb);
  in_ = host;
  in_.trees = tree_table_.data();
  in_.targets = targets_.data();
}

void ListsPass::upload_trees(const ListsInput& host, const std::vector<long>& clusters, const std::vector<long>& sets) {
  trees_in(host, clusters, sets);
  wait();  // other passes' streams read them (run_pending, queue_pending)
}

void ListsPass::run(const ListsInput& host, const std::vector<long>& clusters, const std::vector<long>& sets) {
  trees_in(host, clusters, sets);
  exec::WorkStreamScope on(stream());
  walk(nullptr);
}

// The pending pairs' input on this pass's arrays (uploaded), the trees `owner`'s.
void ListsPass::pending_input(const ListsPass& owner, int b0, int nb, const ListPending* pending,
                              const long* item_first, const Rules& rules) {
  host_trees_ = owner.host_trees_;
  host_clusters_ = owner.host_clusters_;
  const long n = item_first[nb];
  upload(pending_, space_, pending, n);
  upload(item_first_, space_, item_first, nb + 1L);
  in_ = owner.in_;
  in_.targets = owner.in_.targets + b0;
  in_.nb = nb;
  in_.rules = rules;
  in_.pending = pending_.data();
  in_.npending = n;
}

void ListsPass::run_pending(const ListsPass& owner, int b0, int nb, const ListPending* pending, const long* item_first,
                            const Rules& rules) {
  exec::WorkStreamScope on(stream());
  pending_input(owner, b0, nb, pending, item_first, rules);
  walk(item_first_.data());
}

// The count pass, the scans, the fill and each batch's bounds: batch b's items start at
// item_first[b] (in the pass's space), or, null, at b·nt·images.
void ListsPass::walk(const long* item_first) {
  const long n = in_.items();
  exec::grow(counts_, space_, size_t(3 * n));
  exec::grow(at_, space_, size_t(3 * (n + 1)));
  exec::grow(bad_, space_, size_t(n));
  list_counts(space_, in_, counts_.data(), bad_.data());
  {  // any item the host would have thrown on: one flag back (the counts' sum of bad, by a scan)
    std::vector<int> bad(static_cast<size_t>(n));
    download(bad.data(), bad_.data(), size_t(n));
    for (int x : bad)
      if (x) throw Error("tree solver: a LET part lacks the sources of a cluster it needs");
  }
  for (int k = 0; k < 3; ++k) {
    total_[k] = scan_.run(counts_.data() + k * n, at_.data() + k * (n + 1), n);
    exec::grow(terms_[k], space_, size_t(total_[k]));
    kterms_[k] = terms_[k].data();
  }
  list_fill(space_, in_, at_.data(), terms_[0].data(), terms_[1].data(), terms_[2].data());
  const int nb = in_.nb;
  exec::grow(first_, space_, size_t(3 * (nb + 1)));
  const long per = nb > 0 ? n / nb : 0;
  const long* at = at_.data();
  long* first = first_.data();
  kfirst_ = first;
  exec::parallel_for(space_, 3L * (nb + 1), [=] BEATNIK_HOST_DEVICE(long i) {
    const long k = i / (nb + 1), b = i % (nb + 1);
    first[i] = at[k * (n + 1) + (item_first ? item_first[b] : b * per)];
  });
}

namespace {

// A near term's range in the near pool: the cluster's sources, the window tested when partial.
BEATNIK_HOST_DEVICE inline TreeSumRange near_range(const ListTree& L, const RangeTree& R, const ListTerm& e) {
  const search::Cluster& C = L.clusters[e.cluster];
  return {static_cast<int>(R.near_base + C.begin), static_cast<int>(R.n), static_cast<int>(C.end - C.begin),
          static_cast<signed char>(e.mx), static_cast<signed char>(e.my), static_cast<unsigned char>(e.partial ? 1 : 0)};
}

// TreeBRSolver::near_ranges' merge: e continues the range r of the previous term p (neither
// tests the window, the same tree and image, r ends where e's cluster begins).
BEATNIK_HOST_DEVICE inline bool continues(const ListTerm& p, const TreeSumRange& r, const ListTerm& e,
                                          const TreeSumRange& x) {
  return !e.partial && !p.partial && p.tree == e.tree && p.mx == e.mx && p.my == e.my && r.off + r.count == x.off;
}

// Batch b's near ranges (out null: only counted); returns how many.
BEATNIK_HOST_DEVICE inline long batch_near_ranges(const ListTree* trees, const RangeTree* ranges, const ListTerm* terms,
                                                  long t0, long t1, TreeSumRange* out) {
  long k = 0;
  TreeSumRange r{};
  for (long i = t0; i < t1; ++i) {
    const ListTerm& e = terms[i];
    const TreeSumRange x = near_range(trees[e.tree], ranges[e.tree], e);
    if (i > t0 && continues(terms[i - 1], r, e, x)) {
      r.count += x.count;
    } else {
      if (i > t0 && out) out[k - 1] = r;
      r = x;
      ++k;
    }
  }
  if (k > 0 && out) out[k - 1] = r;
  return k;
}

// A far term's range in the far pool: its lower-degree set, else the cluster's degree-p proxies.
BEATNIK_HOST_DEVICE inline TreeSumRange far_range(const ListTree& L, const RangeTree& R, const ListTerm& e) {
  long off;
  int m;
  if (e.low >= 0) {
    off = R.low_base + R.low_start[e.low];
    m = R.low_count[e.low];
  } else {
    off = R.far_base + L.proxy_start[e.cluster];
    m = R.proxy_count[e.cluster];
  }
  return {static_cast<int>(off), m, m, static_cast<signed char>(e.mx), static_cast<signed char>(e.my), 0};
}

}  // namespace

// The trees' range tables (host arrays) uploaded to range_table_.
void ListsPass::range_tables(const std::vector<RangeTree>& trees, const std::vector<long>& clusters,
                             const std::vector<long>& sets) {
  const int nt = static_cast<int>(trees.size());
  range_arrays_.resize(size_t(nt));
  std::vector<RangeTree> dev(trees);
  for (int s = 0; s < nt; ++s) {
    RangeArrays& a = range_arrays_[size_t(s)];
    upload(a.proxy_count, space_, trees[size_t(s)].proxy_count, clusters[size_t(s)]);
    upload(a.low_start, space_, trees[size_t(s)].low_start, sets[size_t(s)]);
    upload(a.low_count, space_, trees[size_t(s)].low_count, sets[size_t(s)]);
    dev[size_t(s)].proxy_count = a.proxy_count.data();
    dev[size_t(s)].low_start = a.low_start.data();
    dev[size_t(s)].low_count = a.low_count.data();
  }
  upload(range_table_, space_, dev.data(), nt);
}

void ListsPass::upload_ranges(const std::vector<RangeTree>& trees, const std::vector<long>& clusters,
                              const std::vector<long>& sets) {
  exec::WorkStreamScope on(stream());
  range_tables(trees, clusters, sets);
  wait();  // other passes' streams read them (queue_pending)
}

void ListsPass::ranges(const std::vector<RangeTree>& trees, const std::vector<long>& clusters,
                       const std::vector<long>& sets, const std::vector<long>& batch) {
  exec::WorkStreamScope on(stream());
  const int nb = in_.nb;
  range_tables(trees, clusters, sets);
  upload(batch_, space_, batch.data(), 2L * nb);
  const ListTree* L = in_.trees;
  const RangeTree* R = range_table_.data();
  const ListTerm* near = kterms_[0];
  const ListTerm* far = kterms_[1];
  const long* fn = first(0);
  const long* ff = first(1);
  const long* bounds = batch_.data();
  exec::grow(near_counts_, space_, size_t(nb) + 1);
  exec::grow(near_first_, space_, size_t(nb) + 1);
  exec::grow(low_, space_, size_t(nb));
  exec::grow(far_ranges_, space_, size_t(total_[1]));
  long* nc = near_counts_.data();
  long* low = low_.data();
  TreeSumRange* fr = far_ranges_.data();
  // One item per batch: its near ranges counted; its far ranges written and its terms through a
  // lower-degree set counted (times its targets).
  exec::parallel_for(space_, nb, [=] BEATNIK_HOST_DEVICE(long b) {
    nc[b] = batch_near_ranges(L, R, near, fn[b], fn[b + 1], nullptr);
    long k = 0;
    for (long i = ff[b]; i < ff[b + 1]; ++i) {
      const ListTerm& e = far[i];
      fr[i] = far_range(L[e.tree], R[e.tree], e);
      k += e.low >= 0;
    }
    low[b] = k * (bounds[2 * b + 1] - bounds[2 * b]);
  });
  near_total_ = scan_.run(nc, near_first_.data(), nb);
  exec::grow(near_ranges_, space_, size_t(near_total_));
  const long* at = near_first_.data();
  TreeSumRange* nr = near_ranges_.data();
  exec::parallel_for(space_, nb, [=] BEATNIK_HOST_DEVICE(long b) {
    batch_near_ranges(L, R, near, fn[b], fn[b + 1], nr + at[b]);
  });
  // The low terms' sum: one more scan of the per-batch counts (its total comes back).
  low_total_ = scan_.run(low, near_counts_.data(), nb);
}

namespace {
// An edge term's slot in TreeBRSolver::edge_keys' layout (its edge_slot): tree s's slots from
// base[s]; cluster c's at base[s] + 2·(c + first[c]), 1 + its sets per axis.
BEATNIK_HOST_DEVICE inline long edge_slot(const ListTree& T, const long* base, const ListTerm& e) {
  const int c = e.cluster, f = T.low_first[c], sets = T.low_first[c + 1] - f;
  return base[e.tree] + 2L * (c + f) + e.axis * (1L + sets) + (e.low < 0 ? 0 : 1 + e.low - f);
}
}  // namespace

std::vector<std::array<int, 4>> ListsPass::edge_keys(const std::vector<long>& base) {
  exec::WorkStreamScope on(stream());
  const int nt = in_.nt;
  const long slots = base[size_t(nt)], ne = total_[2];
  upload(slot_base_, space_, base.data(), nt + 1);
  exec::grow(slot_mark_, space_, size_t(slots) + 1);
  exec::grow(slot_index_, space_, size_t(slots) + 1);
  exec::grow(edge_terms_, space_, size_t(ne));
  long* mark = slot_mark_.data();
  long* index = slot_index_.data();
  const long* b = slot_base_.data();
  const ListTree* L = in_.trees;
  const ListTerm* edge = kterms_[2];
  exec::parallel_for(space_, slots, [=] BEATNIK_HOST_DEVICE(long q) { mark[q] = 0; });
  // Every slot a term uses marked (the same value from every term: no race on its result).
  exec::parallel_for(space_, ne, [=] BEATNIK_HOST_DEVICE(long i) { mark[edge_slot(L[edge[i].tree], b, edge[i])] = 1; });
  const long nk = scan_.run(mark, index, slots);  // a marked slot's key number
  exec::grow(keys_, space_, 4 * size_t(nk));
  int* keys = keys_.data();
  for (int s = 0; s < nt; ++s) {  // each cluster's slots, in order: its keys at their numbers
    const ListTree T = host_trees_[size_t(s)];
    const long nc = host_clusters_[size_t(s)];
    const long b0 = base[size_t(s)];
    exec::parallel_for(space_, nc, [=] BEATNIK_HOST_DEVICE(long c) {
      const int f0 = T.low_first[c], f1 = T.low_first[c + 1];
      long q = b0 + 2 * (c + f0);
      for (int axis = 0; axis < 2; ++axis)
        for (int low = f0 - 1; low < f1; ++low, ++q)
          if (mark[q]) {
            int* k = keys + 4 * index[q];
            k[0] = s;
            k[1] = static_cast<int>(c);
            k[2] = axis;
            k[3] = low < f0 ? -1 : low;
          }
    });
  }
  EdgeTermDev* out = edge_terms_.data();
  exec::parallel_for(space_, ne, [=] BEATNIK_HOST_DEVICE(long i) {
    const ListTerm& e = edge[i];
    out[i] = {static_cast<int>(index[edge_slot(L[e.tree], b, e)]), e.mx, e.my};
  });
  std::vector<int> flat(4 * size_t(nk));
  download(flat.data(), keys, flat.size());
  std::vector<std::array<int, 4>> k(static_cast<size_t>(nk));
  for (long i = 0; i < nk; ++i) k[size_t(i)] = {flat[4 * i], flat[4 * i + 1], flat[4 * i + 2], flat[4 * i + 3]};
  return k;
}

HostLists ListsPass::to_host(bool near_far, bool edge) {
  exec::WorkStreamScope on(stream());
  HostLists h;
  const int nb = in_.nb;
  for (int k = 0; k < 3; ++k) {
    h.first[k].resize(size_t(nb + 1));
    if (kfirst_ == first_.data()) download(h.first[k].data(), kfirst_ + k * (nb + 1), size_t(nb + 1));
    else std::copy_n(host_meta_.begin() + 8 + k * (nb + 1), nb + 1, h.first[k].begin());  // (queued: read by complete)
    if (!(k < 2 ? near_far : edge)) continue;
    h.terms[k].resize(size_t(total_[k]));
    download(h.terms[k].data(), kterms_[k], size_t(total_[k]));
  }
  return h;
}

void ListsPass::queue_pending(const ListsPass& owner, int b0, int nb, const ListPending* pending, const long* item_first,
                              const Rules& rules, const std::vector<long>& batch) {
  exec::WorkStreamScope on(stream());
  pending_input(owner, b0, nb, pending, item_first, rules);
  upload(batch_, space_, batch.data(), 2L * nb);
  owner_ranges_ = owner.range_table_.data();
  queue_again();
}

// queue_pending's kernels, nothing waited for. The counts of the three kinds and a flag per item
// (the walk failed) scanned as one array, so the terms of all kinds lie in one array (kind k's
// from at[k·n]); the batches' bounds relative to each kind's start; writes past a buffer's
// capacity are skipped (complete() finds them). The totals land in meta_, before the bounds.
void ListsPass::queue_again() {
  exec::WorkStreamScope on(stream());
  const ListsInput in = in_;
  const long n = in.items();
  const int nb = in.nb;
  exec::grow(counts_, space_, size_t(4 * n));
  exec::grow(at_, space_, size_t(4 * n + 1));
  exec::grow(meta_, space_, 8 + size_t(3 * (nb + 1)));
  exec::grow(near_counts_, space_, size_t(nb) + 1);
  exec::grow(near_first_, space_, size_t(nb) + 1);
  exec::grow(low_, space_, size_t(nb));
  exec::grow(low_first_, space_, size_t(nb) + 1);
  long* counts = counts_.data();
  exec::parallel_for(space_, n, [=] BEATNIK_HOST_DEVICE(long item) {
    long c[3] = {0, 0, 0};
    auto sink = [&](int kind, const ListTerm&) { ++c[kind]; };
    const bool ok = walk_item(in, item, sink);
    for (int k = 0; k < 3; ++k) counts[k * n + item] = c[k];
    counts[3 * n + item] = ok ? 0 : 1;
  });
  scan_.queue(counts, at_.data(), 4 * n);
  const long cap = static_cast<long>(all_.size());
  ListTerm* all = all_.data();
  const long* at = at_.data();
  exec::parallel_for(space_, n, [=] BEATNIK_HOST_DEVICE(long item) {
    long k[3] = {at[item], at[n + item], at[2 * n + item]};
    auto sink = [&](int kind, const ListTerm& e) {
      const long q = k[kind]++;
      if (q < cap) all[q] = e;
    };
    walk_item(in, item, sink);
  });
  long* tot = meta_.data();
  long* first = tot + 8;
  kfirst_ = first;
  const long* itf = item_first_.data();
  exec::parallel_for(space_, 3L * (nb + 1), [=] BEATNIK_HOST_DEVICE(long i) {
    const long k = i / (nb + 1), b = i % (nb + 1);
    first[i] = at[k * n + itf[b]] - at[k * n];
  });
  // The ranges (ranges()'s kernels), from the terms where they all fit.
  const ListTree* L = in.trees;
  const RangeTree* R = owner_ranges_;
  const long* fn = first;
  const long* ff = first + (nb + 1);
  const long* bounds = batch_.data();
  long* nc = near_counts_.data();
  long* low = low_.data();
  TreeSumRange* fr = far_ranges_.data();
  const long capf = static_cast<long>(far_ranges_.size());
  exec::parallel_for(space_, nb, [=] BEATNIK_HOST_DEVICE(long b) {
    if (at[3 * n] > cap) {
      nc[b] = low[b] = 0;
      return;
    }
    nc[b] = batch_near_ranges(L, R, all, fn[b], fn[b + 1], nullptr);
    const ListTerm* far = all + at[n];
    long k = 0;
    for (long i = ff[b]; i < ff[b + 1]; ++i) {
      const ListTerm& e = far[i];
      if (i < capf) fr[i] = far_range(L[e.tree], R[e.tree], e);
      k += e.low >= 0;
    }
    low[b] = k * (bounds[2 * b + 1] - bounds[2 * b]);
  });
  scan_.queue(nc, near_first_.data(), nb);
  const long capn = static_cast<long>(near_ranges_.size());
  TreeSumRange* nr = near_ranges_.data();
  const long* nf = near_first_.data();
  exec::parallel_for(space_, nb, [=] BEATNIK_HOST_DEVICE(long b) {
    if (at[3 * n] <= cap && nf[b + 1] <= capn) batch_near_ranges(L, R, all, fn[b], fn[b + 1], nr + nf[b]);
  });
  scan_.queue(low, low_first_.data(), nb);
  const long* lf = low_first_.data();
  exec::parallel_for(space_, 1, [=] BEATNIK_HOST_DEVICE(long) {
    for (int k = 0; k < 4; ++k) tot[k] = at[(k + 1) * n] - at[k * n];
    tot[4] = nf[nb];
    tot[5] = lf[nb];
    tot[6] = at[n];
    tot[7] = at[2 * n];
  });
}

bool ListsPass::complete() {
  exec::WorkStreamScope on(stream());
  host_meta_.resize(8 + size_t(3 * (in_.nb + 1)));
  download(host_meta_.data(), meta_.data(), host_meta_.size());  // (waits for the pass's stream)
  const long* t = host_meta_.data();
  if (t[3] > 0) throw Error("tree solver: a LET part lacks the sources of a cluster it needs");
  bool fits = true;
  auto fit = [&](auto& buffer, long n) {
    if (n > static_cast<long>(buffer.size())) exec::grow(buffer, space_, size_t(n)), fits = false;
  };
  fit(all_, t[0] + t[1] + t[2]);
  fit(far_ranges_, t[1]);
  fit(near_ranges_, t[4]);
  if (!fits) return false;
  for (int k = 0; k < 3; ++k) total_[k] = t[k];
  kterms_[0] = all_.data();
  kterms_[1] = all_.data() + t[6];
  kterms_[2] = all_.data() + t[7];
  near_total_ = t[4];
  low_total_ = t[5];
  return true;
}

}  // namespace beatnik::model::tree
