#pragma once
// The dual traversal's downward pass through merged grids (-x cuda; docs/tree-log.md "The downward
// pass through merged grids").
//
// Every target cluster with cluster–cluster terms has grids (its far field's values at its
// Chebyshev points, one grid per target degree). The direct pass evaluates, at every target, the
// grids of all its ancestors: O(N·depth·m). A grid's values are those of a polynomial, so a grid
// on a descendant's box whose degree is at least that grid's on every side reproduces it exactly
// (to round-off). The plan merges: walking down the tree, a cluster with grids of its own and
// more points than its merged grid would have gets one merged grid holding the nearest merged
// ancestor's polynomial and every grid met since (its degrees the largest of theirs on each
// side). A target then evaluates its nearest merged ancestor and the few grids below it: the
// smaller clusters', which are not merged because they have fewer points than grid points.
//
// The plan is host work on the cluster tree only; the device executes it
// (TreeSumsDevice::queue_down). Without merges (max_side < 0) a target's chain is the direct
// pass's: its ancestors' grids root first, each cluster's in their order.
#include <array>
#include <vector>

#include "beatnik/search/cluster_tree.hpp"

namespace beatnik::model::tree {

struct DownPlan {
  // Merged grids, numbered after the own grids (merged grid i is grid ng + i in `src` and
  // `chain`): each one's cluster, side degrees and level (1 + its merged source's, 0 without).
  std::vector<int> cluster, level;
  std::vector<std::array<int, 3>> dg;
  std::vector<int> src_start{0}, src;      // merged grid i's sources: src[src_start[i] .. src_start[i + 1])
  std::vector<int> order, level_start{0};  // merged grids by level: order[level_start[l] ..]
  std::vector<int> chain_start{0}, chain;  // batch b's grids: chain[chain_start[b] ..]
};

// clusters: the target tree (root 0; binary); first/count: cluster c's own grids are
// first[c] .. first[c] + count[c] − 1 (count 0: none), of side degrees dg[g]; leaves[b]: batch
// b's leaf (b < nb). A leaf's own grids are not in any chain (the dual traversal gives leaves
// none). Merged grids only where every side degree is ≤ max_side (their device kernel's shared
// memory); max_side < 0: no merges.
DownPlan plan_down(const std::vector<search::Cluster>& clusters, const std::vector<int>& first,
                   const std::vector<int>& count, const std::vector<std::array<int, 3>>& dg,
                   const std::vector<int>& leaves, int nb, int max_side);

}  // namespace beatnik::model::tree
