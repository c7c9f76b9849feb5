// -x cuda: the single traversal's interaction lists built on the device by the lists' kernels
// (tree_lists_device.hpp; docs/tree-log.md "The lists on the device") and turned there into the
// sums' source ranges, which the sums read without a trip through the host. The same terms in
// the same order as the host's lists(), so the velocities are the same bits either way
// (BEATNIK_TREE_LISTS=host keeps the host's walk, the A/B). Only the batches' bounds come back;
// the edge stage numbers its tables' keys from the device's edge terms (edges_device_lists).
// The dual traversal's leaves the same way when asked (BEATNIK_TREE_DUAL_LEAVES=device; docs/
// tree-log.md "The dual leaves on the device"): each run's pairs walked and its ranges made there,
// queued without waiting and finished after the next run's host work; its edge terms come back.

#include <cstdlib>
#include <optional>
#include <string>

#include "beatnik/base/env.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/model/tree_br_solver.hpp"
#include "beatnik/model/tree_lists_device.hpp"

namespace beatnik::model {

// lists_on_device, else BEATNIK_TREE_LISTS (host | device), else the device's.
bool TreeBRSolver::device_lists() const {
  static const std::optional<std::string> knob = env::choice("BEATNIK_TREE_LISTS", {"host", "device"});
  const int v = lists_on_device >= 0 ? lists_on_device : !knob ? -1 : *knob == "device";
  return device_ && !settings_.tree_dual && v != 0;
}

// The lists' kernels' input from this call's trees (balls() done): host arrays, which ListsPass
// uploads; clusters[s] and sets[s] are tree s's array lengths.
void TreeBRSolver::lists_input(std::vector<tree::ListTree>& trees, std::vector<tree::ListTarget>& targets,
                               std::vector<long>& clusters, std::vector<long>& sets) const {
  const int nt = static_cast<int>(sources_.size()), nb = batches();
  trees.resize(nt);
  clusters.resize(nt);
  sets.resize(nt);
  for (int s = 0; s < nt; ++s) {
    const tree::SourceTree& S = sources_[s];
    trees[s] = {S.clusters.data(),    S.full.data(),        S.proxy_start.data(), balls_[s].data(),
                low_[s].first.data(), low_[s].theta.data(), S.remote ? 1 : 0};
    clusters[s] = static_cast<long>(S.clusters.size());
    sets[s] = static_cast<long>(low_[s].theta.size());
  }
  targets.resize(nb);
  const std::vector<int>& leaves = tree_.leaves();
  for (int b = 0; b < nb; ++b) {
    const Target tg = target(leaves[b]);
    tree::ListTarget& t = targets[b];
    for (int d = 0; d < 3; ++d) {
      t.lo[d] = tg.B.lo[d];
      t.hi[d] = tg.B.hi[d];
    }
    t.b = tg.b;
    t.t = tg.t;
  }
}

namespace {
tree::ListsInput input_of(const std::vector<tree::ListTree>& trees, const std::vector<tree::ListTarget>& targets,
                          const tree::Rules& rules) {
  tree::ListsInput in;
  in.trees = trees.data();
  in.nt = static_cast<int>(trees.size());
  in.targets = targets.data();
  in.nb = static_cast<int>(targets.size());
  in.rules = rules;
  return in;
}
}  // namespace

// compute_device(): every batch's lists and ranges on the device (lists_dev_; near_, far_ and
// edge_ left empty), the (target, cluster image) edge terms counted into load_. batch: 2 bounds
// per batch. Returns the (target, cluster image) far terms.
long TreeBRSolver::lists_device(const std::vector<long>& batch) {
  const int nb = batches(), nt = static_cast<int>(sources_.size());
  balls();
  if (!lists_dev_) lists_dev_ = std::make_unique<tree::ListsPass>(space_);
  std::vector<long> clusters, sets;
  lists_kernel(*lists_dev_, &clusters, &sets);
  std::vector<tree::RangeTree> ranges(nt);
  for (int s = 0; s < nt; ++s) {
    const tree::SourceTree& S = sources_[s];
    ranges[s] = {S.n, device_->base(false, s), device_->base(true, s), device_->base(true, nt + s),
                 S.proxy_count.data(), low_[s].start.data(), low_[s].count.data()};
  }
  lists_dev_->ranges(ranges, clusters, sets, batch);
  // Every kind's batch bounds back (the terms stay there: the edge stage numbers its keys on the
  // device too, edges_device_lists).
  const tree::HostLists h = lists_dev_->to_host(false, false);
  const std::vector<long>* first = h.first;
  near_.resize(nb);
  far_.resize(nb);
  edge_.resize(nb);
  long terms = 0, edge_terms = 0;
#pragma omp parallel for schedule(static) reduction(+ : terms, edge_terms)
  for (int b = 0; b < nb; ++b) {
    near_[b].clear();
    far_[b].clear();
    edge_[b].clear();
    terms += (batch[2 * b + 1] - batch[2 * b]) * (first[1][b + 1] - first[1][b]);
    edge_terms += (batch[2 * b + 1] - batch[2 * b]) * (first[2][b + 1] - first[2][b]);
  }
  load_.edge_terms += edge_terms;
  return terms;
}

// The dual traversal's leaves on the device: dual_leaves_on_device, else BEATNIK_TREE_DUAL_LEAVES
// (host | device), else the host's walk (measured faster on one H200 at 1024² and 2048²:
// docs/tree-log.md "The dual leaves on the device").
bool TreeBRSolver::device_dual_leaves() const {
  static const std::optional<std::string> knob = env::choice("BEATNIK_TREE_DUAL_LEAVES", {"host", "device"});
  const int v = dual_leaves_on_device >= 0 ? dual_leaves_on_device : knob && *knob == "device";
  return device_ && settings_.tree_dual && v > 0;
}

// The trees and their range tables once per call (lists_dev_ holds them; every run's pass reads
// them), and the batches' targets; after dual_device_begin (the balls).
void TreeBRSolver::dual_leaves_begin() {
  if (batches() == 0) return;
  if (!lists_dev_) lists_dev_ = std::make_unique<tree::ListsPass>(space_);
  std::vector<tree::ListTree> trees;
  DualLeaves& d = dual_dev_;
  lists_input(trees, d.targets, d.clusters, d.sets);
  lists_dev_->upload_trees(input_of(trees, d.targets, rules_), d.clusters, d.sets);
  const int nt = static_cast<int>(sources_.size());
  std::vector<tree::RangeTree> ranges(nt);
  for (int s = 0; s < nt; ++s) {
    const tree::SourceTree& S = sources_[s];
    ranges[s] = {S.n, device_->base(false, s), device_->base(true, s), device_->base(true, nt + s),
                 S.proxy_count.data(), low_[s].start.data(), low_[s].count.data()};
  }
  lists_dev_->upload_ranges(ranges, d.clusters, d.sets);
  pend_.resize(batches());
}

// Batches [b0, b1)'s pairs (pend_) as the leaves' pass reads them: in batch order (each with its
// batch from b0), first[i] batch b0 + i's first item (b1 − b0 + 1 entries).
void TreeBRSolver::pending_items(int b0, int b1, std::vector<tree::ListPending>& items,
                                 std::vector<long>& first) const {
  const int nb = b1 - b0;
  first.assign(nb + 1, 0);
  for (int i = 0; i < nb; ++i) first[i + 1] = first[i] + static_cast<long>(pend_[b0 + i].size());
  items.resize(static_cast<size_t>(first[nb]));
#pragma omp parallel for schedule(static)
  for (int i = 0; i < nb; ++i) {
    long q = first[i];
    for (const Pending& c : pend_[b0 + i]) items[q++] = {c.tree, c.cluster, c.mx, c.my, c.full ? 1 : 0, i};
  }
}

// Tests: the last call's dual lists made again with the leaves' walks by the lists' kernels (in
// `space`; queued: -x cuda's queue_pending and complete, else run_pending), flattened as
// dual_terms(); the host's lists are made again afterwards.
std::vector<long> TreeBRSolver::dual_terms_kernel(exec::Space space, bool queued) {
  dual_lists(true);
  const int nb = batches();
  std::vector<tree::ListTree> trees;
  std::vector<tree::ListTarget> targets;
  std::vector<long> clusters, sets;
  lists_input(trees, targets, clusters, sets);
  tree::ListsPass owner(space), pass(space);
  owner.upload_trees(input_of(trees, targets, rules_), clusters, sets);
  std::vector<tree::ListPending> items;
  std::vector<long> first;
  pending_items(0, nb, items, first);
  if (queued) {  // the ranges' tables too (the pools' bases do not matter to the lists)
    const int nt = static_cast<int>(sources_.size());
    std::vector<tree::RangeTree> ranges(nt);
    for (int s = 0; s < nt; ++s)
      ranges[s] = {sources_[s].n, 0, 0, 0, sources_[s].proxy_count.data(), low_[s].start.data(), low_[s].count.data()};
    owner.upload_ranges(ranges, clusters, sets);
    const std::vector<long> bf = batch_first();
    std::vector<long> bounds;
    for (int b = 0; b < nb; ++b) bounds.insert(bounds.end(), {bf[b], bf[b + 1]});
    pass.queue_pending(owner, 0, nb, items.data(), first.data(), rules_, bounds);
    while (!pass.complete()) pass.queue_again();
  } else {
    pass.run_pending(owner, 0, nb, items.data(), first.data(), rules_);
  }
  const tree::HostLists h = pass.to_host();
  std::vector<long> out;
  for (int b = 0; b < nb; ++b)
    for (int k = 0; k < 3; ++k) {
      out.push_back(h.first[k][b + 1] - h.first[k][b]);
      for (long i = h.first[k][b]; i < h.first[k][b + 1]; ++i) {
        const tree::ListTerm& e = h.terms[k][i];
        out.insert(out.end(), {e.tree, e.cluster, e.mx, e.my, e.partial, e.low, e.axis, 0});
      }
    }
  for (const auto& v : cc_) {
    out.push_back(static_cast<long>(v.size()));
    for (const Term& e : v)
      out.insert(out.end(), {e.tree, e.cluster, e.mx, e.my, e.partial, e.low, e.axis, e.target_degree});
  }
  dual_lists();
  return out;
}

void TreeBRSolver::dual_leaves_queue(int run, int b0, int b1, const std::vector<long>& batch) {
  DualLeaves& d = dual_dev_;
  if (static_cast<int>(d.passes.size()) <= run) d.passes.resize(run + 1);
  if (!d.passes[run]) d.passes[run] = std::make_unique<tree::ListsPass>(space_);
  std::vector<tree::ListPending> items;
  std::vector<long> first;
  pending_items(b0, b1, items, first);
  const std::vector<long> bounds(batch.begin() + 2L * b0, batch.begin() + 2L * b1);
  d.passes[run]->queue_pending(*lists_dev_, b0, b1 - b0, items.data(), first.data(), rules_, bounds);
}

long TreeBRSolver::dual_leaves_finish(int run, int b0, int b1, const std::vector<long>& batch, long& low) {
  tree::ListsPass& pass = *dual_dev_.passes[run];
  while (!pass.complete()) pass.queue_again();  // (a buffer grew: the first calls)
  low += pass.low_terms();
  const tree::HostLists h = pass.to_host(false, true);
  const int nb = b1 - b0;
  long terms = 0;
#pragma omp parallel for schedule(static) reduction(+ : terms)
  for (int i = 0; i < nb; ++i) {
    const int b = b0 + i;
    near_[b].clear();
    far_[b].clear();
    edge_[b].clear();
    for (long k = h.first[2][i]; k < h.first[2][i + 1]; ++k) {
      const tree::ListTerm& e = h.terms[2][k];
      edge_[b].push_back({e.tree, e.cluster, e.mx, e.my, e.partial != 0, e.low, e.axis});
    }
    terms += (batch[2 * b + 1] - batch[2 * b]) * (h.first[1][i + 1] - h.first[1][i]);
  }
  device_->launch_device(nb, pass.batch(), pass.near_first(), pass.near_ranges(), pass.first(1), pass.far_ranges());
  return terms;
}

// The lists' kernels run by `pass` on this call's trees (balls() done); the trees' cluster and
// set counts out where asked.
void TreeBRSolver::lists_kernel(tree::ListsPass& pass, std::vector<long>* clusters_out, std::vector<long>* sets_out) const {
  std::vector<tree::ListTree> trees;
  std::vector<tree::ListTarget> targets;
  std::vector<long> clusters, sets;
  lists_input(trees, targets, clusters, sets);
  pass.run(input_of(trees, targets, rules_), clusters, sets);
  if (clusters_out) *clusters_out = clusters;
  if (sets_out) *sets_out = sets;
}

// Tests: the lists' kernels run in `space` on this call's trees, flattened as list_terms().
std::vector<long> TreeBRSolver::list_terms_kernel(exec::Space space) const {
  tree::ListsPass pass(space);
  lists_kernel(pass);
  const tree::HostLists h = pass.to_host();
  std::vector<long> out;
  for (int b = 0; b < batches(); ++b)
    for (int k = 0; k < 3; ++k) {
      out.push_back(h.first[k][b + 1] - h.first[k][b]);
      for (long i = h.first[k][b]; i < h.first[k][b + 1]; ++i) {
        const tree::ListTerm& e = h.terms[k][i];
        out.insert(out.end(), {e.tree, e.cluster, e.mx, e.my, e.partial, e.low, e.axis});
      }
    }
  return out;
}

std::vector<long> TreeBRSolver::edge_key_terms() {
  const std::vector<std::array<int, 4>> keys = edge_keys();
  std::vector<long> out{static_cast<long>(keys.size())};
  for (const auto& k : keys) out.insert(out.end(), k.begin(), k.end());
  for (const std::vector<int>& t : edge_table_) {
    out.push_back(static_cast<long>(t.size()));
    out.insert(out.end(), t.begin(), t.end());
  }
  return out;
}

std::vector<long> TreeBRSolver::edge_key_terms_kernel(exec::Space space) {
  tree::ListsPass pass(space);
  lists_kernel(pass);
  edge_layout();
  const std::vector<std::array<int, 4>> keys = pass.edge_keys(edge_base_);
  const tree::HostLists h = pass.to_host(false, false);
  std::vector<EdgeTermDev> terms(static_cast<size_t>(pass.count(2)));
  if (!terms.empty()) exec::copy(terms.data(), exec::Space::Host, pass.edge_terms(), space, terms.size());
  std::vector<long> out{static_cast<long>(keys.size())};
  for (const auto& k : keys) out.insert(out.end(), k.begin(), k.end());
  for (int b = 0; b < batches(); ++b) {
    out.push_back(h.first[2][b + 1] - h.first[2][b]);
    for (long i = h.first[2][b]; i < h.first[2][b + 1]; ++i) out.push_back(terms[size_t(i)].table);
  }
  return out;
}

namespace {
// The tests' pools: tree by tree, the sources (near), the degree-p proxies then the sets (far).
struct TestPools {
  std::vector<long> near, far, low;
};
TestPools test_pools(const std::vector<tree::SourceTree>& sources, const std::vector<tree::LowSets>& low) {
  TestPools p;
  long n = 0, f = 0;
  for (const tree::SourceTree& S : sources) {
    p.near.push_back(n);
    n += static_cast<long>(S.pts.size());
    p.far.push_back(f);
    f += static_cast<long>(S.proxies.size());
  }
  for (const tree::LowSets& l : low) {
    p.low.push_back(f);
    f += static_cast<long>(l.pts.size());
  }
  return p;
}
}  // namespace

std::vector<long> TreeBRSolver::range_terms() {
  const TestPools P = test_pools(sources_, low_);
  const int nt = static_cast<int>(sources_.size());
  // A host range's pool offset: the array its pointer lies in, from the pools' layout.
  const auto offset = [&](const BRSourceRange& r, bool far) -> long {
    for (int s = 0; s < nt; ++s) {
      const tree::SourceTree& S = sources_[s];
      if (!far && r.p == S.pts.data()) return P.near[s] + r.k0;
      if (far && r.p >= S.proxies.data() && r.p < S.proxies.data() + S.proxies.size())
        return P.far[s] + (r.p - S.proxies.data()) + r.k0;
      if (far && r.p >= low_[s].pts.data() && r.p < low_[s].pts.data() + low_[s].pts.size())
        return P.low[s] + (r.p - low_[s].pts.data()) + r.k0;
    }
    throw Error("tree solver test: a range outside every array");
  };
  std::vector<long> out;
  std::vector<BRSourceRange> ranges;
  long low = 0;
  for (int b = 0; b < batches(); ++b) {
    for (bool far : {false, true}) {
      if (far) far_ranges(b, ranges), low += low_terms(b);
      else near_ranges(b, ranges);
      out.push_back(static_cast<long>(ranges.size()));
      for (const BRSourceRange& r : ranges)
        out.insert(out.end(), {offset(r, far), r.stride, r.k1 - r.k0, r.mx, r.my, r.window ? 1L : 0L});
    }
  }
  out.push_back(low);
  return out;
}

std::vector<long> TreeBRSolver::range_terms_kernel(exec::Space space) {
  tree::ListsPass pass(space);
  std::vector<long> clusters, sets;
  lists_kernel(pass, &clusters, &sets);
  const TestPools P = test_pools(sources_, low_);
  const int nt = static_cast<int>(sources_.size());
  std::vector<tree::RangeTree> rt(nt);
  for (int s = 0; s < nt; ++s)
    rt[s] = {sources_[s].n, P.near[s], P.far[s], P.low[s], sources_[s].proxy_count.data(), low_[s].start.data(),
             low_[s].count.data()};
  const std::vector<long> batch = [&] {
    const std::vector<long> first = batch_first();
    std::vector<long> b;
    for (size_t i = 0; i + 1 < first.size(); ++i) b.insert(b.end(), {first[i], first[i + 1]});
    return b;
  }();
  pass.ranges(rt, clusters, sets, batch);
  const tree::HostLists h = pass.to_host(false, false);
  const int nb = batches();
  std::vector<long> nf(size_t(nb) + 1);
  exec::copy(nf.data(), exec::Space::Host, pass.near_first(), space, nf.size());
  std::vector<TreeSumRange> nr(static_cast<size_t>(pass.near_range_count())), fr(static_cast<size_t>(pass.count(1)));
  if (!nr.empty()) exec::copy(nr.data(), exec::Space::Host, pass.near_ranges(), space, nr.size());
  if (!fr.empty()) exec::copy(fr.data(), exec::Space::Host, pass.far_ranges(), space, fr.size());
  std::vector<long> out;
  for (int b = 0; b < nb; ++b)
    for (bool far : {false, true}) {
      const long i0 = far ? h.first[1][b] : nf[b], i1 = far ? h.first[1][b + 1] : nf[b + 1];
      out.push_back(i1 - i0);
      for (long i = i0; i < i1; ++i) {
        const TreeSumRange& r = far ? fr[size_t(i)] : nr[size_t(i)];
        out.insert(out.end(), {static_cast<long>(r.off), r.stride, r.count, r.mx, r.my, static_cast<long>(r.window)});
      }
    }
  out.push_back(pass.low_terms());
  return out;
}

}  // namespace beatnik::model
