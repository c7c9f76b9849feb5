// The downward pass's plan (tree_down.hpp): one walk down the target tree.
#include "beatnik/model/tree_down.hpp"

#include <algorithm>
#include <numeric>

#include "beatnik/base/error.hpp"

namespace beatnik::model::tree {

namespace {

struct Walk {
  const std::vector<search::Cluster>& cl;
  const std::vector<int>& first;
  const std::vector<int>& count;
  const std::vector<std::array<int, 3>>& dg;
  std::vector<int> batch_of;  // leaf cluster -> batch, or −1
  int ng, max_side;
  DownPlan plan;

  // c with `merged` (the nearest merged ancestor's grid, or −1), `pending` (the grids met since,
  // root first) and `deg` (the largest side degrees of both).
  void visit(int c, int merged, int merged_level, std::array<int, 3> deg, std::vector<int>& pending) {
    const search::Cluster& C = cl[c];
    if (C.leaf()) {
      // The walk meets the leaves in tree order, so batch b's chain comes b-th.
      const int b = batch_of[c];
      if (b < 0) return;
      if (b + 1 != static_cast<int>(plan.chain_start.size())) throw Error("tree downward plan: batches out of tree order");
      if (merged >= 0) plan.chain.push_back(merged);
      plan.chain.insert(plan.chain.end(), pending.begin(), pending.end());
      plan.chain_start.push_back(static_cast<int>(plan.chain.size()));
      return;
    }
    const size_t mark = pending.size();
    for (int g = first[c]; count[c] > 0 && g < first[c] + count[c]; ++g) {
      pending.push_back(g);
      for (int d = 0; d < 3; ++d) deg[d] = std::max(deg[d], dg[g][d]);
    }
    const long points = long(deg[0] + 1) * (deg[1] + 1) * (deg[2] + 1);
    const bool fits = std::max({deg[0], deg[1], deg[2]}) <= max_side;
    if (count[c] > 0 && fits && C.count() > points) {
      // A merged grid for c: its sources the merged ancestor's grid and the pending ones.
      const int id = ng + static_cast<int>(plan.cluster.size());
      plan.cluster.push_back(c);
      plan.level.push_back(merged_level + 1);
      plan.dg.push_back(deg);
      if (merged >= 0) plan.src.push_back(merged);
      plan.src.insert(plan.src.end(), pending.begin(), pending.end());
      plan.src_start.push_back(static_cast<int>(plan.src.size()));
      std::vector<int> none;
      for (int k : C.child) visit(k, id, merged_level + 1, deg, none);
    } else {
      for (int k : C.child) visit(k, merged, merged_level, deg, pending);
    }
    pending.resize(mark);
  }
};

}  // namespace

DownPlan plan_down(const std::vector<search::Cluster>& clusters, const std::vector<int>& first,
                   const std::vector<int>& count, const std::vector<std::array<int, 3>>& dg,
                   const std::vector<int>& leaves, int nb, int max_side) {
  Walk w{clusters, first, count, dg, std::vector<int>(clusters.size(), -1), static_cast<int>(dg.size()), max_side,
         DownPlan{}};
  for (int b = 0; b < nb; ++b) w.batch_of[leaves[b]] = b;
  if (!clusters.empty()) {
    std::vector<int> pending;
    w.visit(0, -1, -1, {0, 0, 0}, pending);
  }
  DownPlan& p = w.plan;
  if (static_cast<int>(p.chain_start.size()) != std::max(nb, 0) + 1)
    throw Error("tree downward plan: a batch's leaf not in the tree");
  // Merged grids by level (stable: tree order within a level).
  p.order.resize(p.cluster.size());
  std::iota(p.order.begin(), p.order.end(), 0);
  std::stable_sort(p.order.begin(), p.order.end(), [&](int a, int b) { return p.level[a] < p.level[b]; });
  for (size_t k = 0; k < p.order.size(); ++k)
    if (k + 1 == p.order.size() || p.level[p.order[k + 1]] != p.level[p.order[k]])
      p.level_start.push_back(static_cast<int>(k + 1));
  return p;
}

}  // namespace beatnik::model::tree
