// -x cuda: the tree solver's edge stage on the device (docs/tree-log.md "Edge terms on the device"):
// the keys, table specs and term lists on the host, the tables and sums queued on the edge
// object's stream (tree_edge_device.hpp). Either once after every run's lists (edges_device, the
// one-shot path) or pipelined with them (edge_pipe_begin, then edge_pipe_run per run or few runs
// of batches: the tables of the keys no earlier run used, then those batches' sums), so that
// the edge work overlaps the list building and the near and far sums instead of following them.
// A key's table is the same whatever its number, and each target still sums its batch's terms
// in list order: the velocities are the same bits either way.

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include <omp.h>
#if defined(__GLIBCXX__)
#include <parallel/algorithm>  // libstdc++'s OpenMP sort
#endif

#include "beatnik/base/env.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/exec/space.hpp"
#include "beatnik/model/tree_br_solver.hpp"

namespace beatnik::model {
namespace {
}  // namespace

// The table spec of an edge key: its sources in the sums' near pool, its proxy set in the far
// pool (every tree's proxies, arrays 0 .. nt−1, then its lower-degree sets).
EdgeTableSpec TreeBRSolver::edge_spec(const std::array<int, 4>& key) const {
  const auto [s, c, axis, low] = key;
  const int nt = static_cast<int>(sources_.size());
  const tree::SourceTree& S = sources_[s];
  const search::Cluster& C = S.clusters[c];
  EdgeTableSpec e;
  const double* proxies = edge_set(key, e.dg, e.m);
  e.prox = low >= 0 ? device_->base(true, nt + s) + (proxies - low_[s].pts.data())
                    : device_->base(true, s) + (proxies - S.proxies.data());
  e.src = device_->base(false, s) + C.begin;
  e.stride = S.n;
  e.n = C.count();
  e.axis = axis;
  e.block = tree::edge_block(e.m);
  for (int d = 0; d < 3; ++d) {
    e.lo[d] = C.lo[d];
    e.hi[d] = C.hi[d];
  }
  return e;
}

// edge_pipe, else BEATNIK_TREE_EDGE_PIPE (for the A/B), else 0: one-shot. Pipelined, a piece
// per run, was slower at 1024² on an H100 (0.329–0.342 against 0.297–0.302 s a call): CUB's
// segmented sort waits on the host for the edge stream (it reads its segment groups' sizes back),
// so each piece holds the list loop until the edge stream has caught up (docs/tree-log.md "The edge
// stage pipelined with the lists").
int TreeBRSolver::edge_pipe_runs() const {
  // 0: one-shot; else the runs per piece.
  static const std::optional<long> knob = env::integer("BEATNIK_TREE_EDGE_PIPE", 0, 1 << 20);
  // Unset: pipelined every 2 runs with the dual traversal, whose lists are the host's longest
  // step (1024² on an H200: 0.137–0.139 s a call against 0.145–0.147 pipelined every run and
  // 0.1676 one-shot; docs/tree-log.md "The dual traversal as the device's default"), else one-shot.
  const int v = edge_pipe >= 0 ? edge_pipe : knob ? int(*knob) : settings_.tree_dual ? 2 : 0;
  if (v < 0) throw Error("tree solver: the edge stage's pipe must be 0 (one-shot) or the runs per piece");
  return v;
}

// The edge pipe's worker thread: BEATNIK_TREE_EDGE_WORKER=N gives it N OpenMP threads (its own
// team; the lists keep theirs); 0, the default, runs the pieces inline on the calling thread (the
// same bits either way). Measured on one H200 at 1024² (docs/tree-log.md "The edge pieces on a thread
// of their own"): 5 % faster on an instance whose host lists were slow, 7 % slower on a quiet one
// (its 20 threads on 16 cores), even at 2048²; so opt-in.
HostWorker* TreeBRSolver::edge_worker() {
  static const long threads = env::integer("BEATNIK_TREE_EDGE_WORKER", 0, 256).value_or(0);
  if (threads == 0) return nullptr;
  // The worker queues device work: on this rank's GPU (a new thread starts on GPU 0).
  if (!edge_worker_)
    edge_worker_ = std::make_unique<HostWorker>([n = static_cast<int>(threads), dev = exec::current_device()] {
      omp_set_num_threads(n);
      if (dev >= 0) exec::set_device(dev);
    });
  return edge_worker_.get();
}

// The device tables' sort: two stable radix sorts (TreeEdgeDevice::radix_sort), which never wait
// on the host, unless BEATNIK_TREE_EDGE_SORT=segmented asks for CUB's segmented sort, which
// reads its segment groups' sizes back and so holds the host until the edge stream has run it.
// At 1024² on an H100 (2026-11-27) `.edge.keys` went from 31–35 to 20–25 ms a call with the
// radix sorts, the sort itself (isolated) from 10.2 to 2.5 ms. The same permutation either way
// (test_tree_edge_tables_device; the final states the same bits).
static bool edge_radix_sort() {
  static const bool segmented = env::choice("BEATNIK_TREE_EDGE_SORT", {"radix", "segmented"}) == "segmented";
  return !segmented;
}

// -x cuda, one-shot: the edge terms' keys, table specs and term lists (host, in parallel), then
// their tables (from the pools the sums uploaded: the sources of every tree, the proxies and
// lower-degree sets) and their sums, batch by batch in list order, queued on the edge object's
// own stream; compute_device() waits for them and adds them into the far field.
void TreeBRSolver::edges_device() {
  const double t0 = wall_seconds();
  const std::vector<std::array<int, 4>> keys = edge_keys();
  const std::vector<EdgeTableSpec> specs = edge_specs(keys);
  const std::vector<long> first = batch_first();
  const int nb = static_cast<int>(edge_.size());
  std::vector<long> start(nb + 1, 0);
  for (int b = 0; b < nb; ++b) start[b + 1] = start[b] + static_cast<long>(edge_[b].size());  // the CSR
  std::vector<EdgeTermDev> terms(start[nb]);
  long edge_terms = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : edge_terms)
  for (int b = 0; b < nb; ++b) {
    for (size_t i = 0; i < edge_[b].size(); ++i)
      terms[start[b] + i] = {edge_table_[b][i], edge_[b][i].mx, edge_[b][i].my};
    edge_terms += (first[b + 1] - first[b]) * static_cast<long>(edge_[b].size());
  }
  load_.edge_terms += edge_terms;
  const double host_s = wall_seconds() - t0;
  edge_tables_queue(specs);
  edge_dev_->add_sums(first, start, terms);
  edge_stage_queued(static_cast<int>(keys.size()), host_s);
}

// -x cuda, the lists built on the device (tree_br_lists_device.cpp): the same stage as
// edges_device() with the keys numbered and the term lists made on the device from the device's
// edge terms (ListsPass::edge_keys: the same slots in the same order, so the same tables and
// bits); only the keys come back, for the tables' specs.
void TreeBRSolver::edges_device_lists() {
  const double t0 = wall_seconds();
  edge_layout();
  const std::vector<std::array<int, 4>> keys = lists_dev_->edge_keys(edge_base_);
  const std::vector<EdgeTableSpec> specs = edge_specs(keys);
  const std::vector<long> first = batch_first();
  const double host_s = wall_seconds() - t0;
  edge_tables_queue(specs);
  edge_dev_->add_sums(first, lists_dev_->first(2), lists_dev_->edge_terms(), lists_dev_->count(2));
  edge_stage_queued(static_cast<int>(keys.size()), host_s);
}

// The keys' table specs (in parallel).
std::vector<EdgeTableSpec> TreeBRSolver::edge_specs(const std::vector<std::array<int, 4>>& keys) const {
  const int nk = static_cast<int>(keys.size());
  std::vector<EdgeTableSpec> specs(nk);
#pragma omp parallel for schedule(static)
  for (int k = 0; k < nk; ++k) specs[k] = edge_spec(keys[k]);
  return specs;
}

// The batches' target bounds: batch b holds this tree's sources [first[b], first[b+1]).
std::vector<long> TreeBRSolver::batch_first() const {
  const auto& cl = sources_[0].clusters;
  const std::vector<int>& leaves = tree_.leaves();
  const int nb = batches();
  std::vector<long> first(nb + 1, 0);
  for (int b = 0; b < nb; ++b) {
    first[b] = cl[leaves[b]].begin;
    if (b > 0 && cl[leaves[b - 1]].end != first[b]) throw Error("tree solver: the batches are not consecutive");
  }
  first[nb] = nb > 0 ? cl[leaves[nb - 1]].end : 0;
  return first;
}

// The one-shot edge stage's call begun on the edge object's stream: its tables queued, its sums
// started (the caller adds them).
void TreeBRSolver::edge_tables_queue(const std::vector<EdgeTableSpec>& specs) {
  if (!edge_dev_) edge_dev_ = std::make_unique<TreeEdgeDevice>(space_);
  edge_dev_->radix_sort = edge_radix_sort();
  edge_dev_->begin(device_->near_pool(), device_->far_pool(), settings_.tree_degree);
  edge_dev_->add_tables(specs);
  edge_dev_->begin_sums(device_->targets(), sources_[0].n, rules_.images, eps_);
}

// The one-shot stage queued: its loads and its host timers (nk keys; host_s before the queueing).
void TreeBRSolver::edge_stage_queued(int nk, double host_s) {
  load_.edge_tables = nk;
  load_.edge_bytes = edge_dev_->bytes;
  if (timers_) {
    timers_->add("br.tree.compute.edge.keys", host_s + edge_dev_->host_s);
    timers_->add("br.tree.compute.edge.copy", edge_dev_->copy_s);
  }
}

// -x cuda, pipelined: before the first run's lists. Every key's slot (edge_keys()'s layout)
// starts unnumbered (−1); edge_pipe_run numbers the slots its batches are the first to use.
void TreeBRSolver::edge_pipe_begin() {
  edge_layout();
  edge_slot_.assign(edge_base_.back(), -1);
  if (!edge_dev_) edge_dev_ = std::make_unique<TreeEdgeDevice>(space_);
  edge_dev_->radix_sort = edge_radix_sort();  // the pieces' sorts must not wait on the host
  edge_dev_->begin(device_->near_pool(), device_->far_pool(), settings_.tree_degree);
  edge_dev_->begin_sums(device_->targets(), sources_[0].n, rules_.images, eps_);
}

// -x cuda, pipelined: the edge work of batches [b0, b1), whose lists are built: the keys none of
// the earlier batches used (claimed by their slot, numbered in slot order after the earlier
// ones), their tables, then these batches' sums (every table they read is queued before).
double TreeBRSolver::edge_pipe_run(int b0, int b1) {
  using Key = std::array<int, 4>;
  const double t0 = wall_seconds();
  int* mark = edge_slot_.data();
  std::vector<std::pair<long, Key>> fresh;
#pragma omp parallel
  {
    std::vector<std::pair<long, Key>> mine;
#pragma omp for schedule(dynamic, 16) nowait
    for (int b = b0; b < b1; ++b)
      for (const Term& e : edge_[b]) {
        const long q = edge_slot(e);
        // Read first: most slots are claimed already (a table serves ~20 batches), and a
        // compare-exchange takes the cache line even when it fails (1.6 against 5.3 ms a call
        // at 1024² on one H200's 16 threads, 6 against 22 at 2048²: docs/tree-log.md "The
        // grids' points in place").
        std::atomic_ref<int> slot(mark[q]);
        if (slot.load(std::memory_order_relaxed) != -1) continue;
        int unnumbered = -1;
        if (slot.compare_exchange_strong(unnumbered, -2, std::memory_order_relaxed))
          mine.push_back({q, {e.tree, e.cluster, e.axis, e.low}});
      }
#pragma omp critical
    fresh.insert(fresh.end(), mine.begin(), mine.end());
  }
  // Slot order: the numbers do not depend on the threads (the slots are unique, so any sort gives
  // one order; serial, it took 1.4 ms a call at 1024² and 6.7 at 2048² on an H200's host).
#if defined(__GLIBCXX__)
  __gnu_parallel::sort(fresh.begin(), fresh.end());
#else
  std::sort(fresh.begin(), fresh.end());
#endif
  const int k0 = edge_dev_->tables(), nk = static_cast<int>(fresh.size());
  std::vector<EdgeTableSpec> specs(nk);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < nk; ++i) {
    mark[fresh[i].first] = k0 + i;
    specs[i] = edge_spec(fresh[i].second);
  }
  const auto& cl = sources_[0].clusters;
  const std::vector<int>& leaves = tree_.leaves();
  const int nr = b1 - b0;
  std::vector<long> first(nr + 1, 0), start(nr + 1, 0);
  for (int r = 0; r < nr; ++r) {  // batch bounds and the CSR offsets (a running sum)
    const int b = b0 + r;
    first[r] = cl[leaves[b]].begin;
    if (b > 0 && cl[leaves[b - 1]].end != first[r]) throw Error("tree solver: the batches are not consecutive");
    start[r + 1] = start[r] + static_cast<long>(edge_[b].size());
  }
  first[nr] = nr > 0 ? cl[leaves[b1 - 1]].end : 0;
  std::vector<EdgeTermDev> terms(start[nr]);
  long edge_terms = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : edge_terms)
  for (int r = 0; r < nr; ++r) {
    const int b = b0 + r;
    for (size_t i = 0; i < edge_[b].size(); ++i)
      terms[start[r] + i] = {mark[edge_slot(edge_[b][i])], edge_[b][i].mx, edge_[b][i].my};
    edge_terms += cl[leaves[b]].count() * static_cast<long>(edge_[b].size());
  }
  load_.edge_terms += edge_terms;
  const double host_s = wall_seconds() - t0;
  edge_dev_->add_tables(specs);
  edge_dev_->add_sums(first, start, terms);
  load_.edge_tables = edge_dev_->tables();
  load_.edge_bytes = edge_dev_->bytes;
  return host_s;
}

}  // namespace beatnik::model
