#pragma once
// The single traversal's interaction lists written once for host and device (exec::parallel_for;
// docs/tree.md "The lists on the device: design"): the same terms in the same order as
// TreeBRSolver::lists (walk/visit → decide, cheapest_low), so that the sums give the same bits.
//
// An item per (batch, source tree, image), in that order (images mx-major as lists' loops): the
// host's lists of a batch are, per source tree, the image-by-image concatenation of one
// pre-order walk (child 0 first) per image — exactly the items' outputs laid end to end. Each
// item walks its image with an explicit stack. Two passes: count (near, far, edge terms per
// item), an exclusive scan of the counts, fill (each item writes its terms at its offsets).
//
// Status (branch devlists, not merged): run on the host (exec::Space::Host) and compared term
// for term with the host's lists (tests/physics/test_br_tree.cpp, ListsKernelEqualsTheHost);
// the device run, its uploads and the sums reading these lists are not written yet.
#include <vector>

#include "beatnik/exec/space.hpp"
#include "beatnik/model/tree_let.hpp"

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
struct ListsInput {
  const ListTree* trees;  // nt, in the walk's space
  int nt = 0;
  const ListTarget* targets;  // nb batches, in the walk's space
  int nb = 0;
  Rules rules;
  long items() const;  // nb · nt · images
};
// The count pass: counts[3·item + {0,1,2}] = its near, far and edge terms; bad[item] = 1 when the
// walk met a cluster it needs the sources of that its LET part lacks (the host throws), or its
// stack overflowed. Both arrays in `space`, items() entries (×3).
void list_counts(exec::Space space, const ListsInput& in, long* counts, int* bad);
// The fill pass: at[3·item + k] is where item's terms of kind k start in out[k] (the exclusive
// scan of counts per kind); out: near, far and edge terms, in `space`.
void list_fill(exec::Space space, const ListsInput& in, const long* at, ListTerm* near, ListTerm* far,
               ListTerm* edge);

// Both passes on the host for every batch: the terms of batch b of kind k at
// terms[k][first[k][b], first[k][b+1]).
struct HostLists {
  std::vector<long> first[3];
  std::vector<ListTerm> terms[3];
};
HostLists lists_on_host(const ListsInput& in);

}  // namespace beatnik::model::tree
