// The single traversal's interaction lists by kernels written once (tree_lists_device.hpp).
#include "beatnik/model/tree_lists_device.hpp"

#include "beatnik/base/error.hpp"
#include "beatnik/exec/parallel_for.hpp"

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

// One item's walk: batch b, source tree s, image (mx, my), pre-order from the root with child 0
// first, each visit TreeBRSolver::decide's. sink(kind, term): kind 0 near, 1 far, 2 edge.
// Returns false where the host would throw (or the stack overflows).
template <class Sink>
BEATNIK_HOST_DEVICE inline bool walk_item(const ListsInput& in, long item, Sink& sink) {
  const Rules& r = in.rules;
  const int ni = images_of(r), ny = r.hi[1] - r.lo[1] + 1;
  const int i = static_cast<int>(item % ni);
  const int s = static_cast<int>((item / ni) % in.nt);
  const int b = static_cast<int>(item / (long(ni) * in.nt));
  const int mx = r.lo[0] + i / ny, my = r.lo[1] + i % ny;
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
  stack[top] = 0;
  stack_full[top++] = false;
  while (top > 0) {
    --top;
    const int cluster = stack[top];
    const bool full = stack_full[top];
    const search::Cluster& C = S.clusters[cluster];
    const Ball& c = S.balls[cluster];
    const bool leaf = C.child[0] < 0;
    auto separated_ = [&](bool edge) {
      return separated(tg.b, c, mx, my, r, edge) || (S.remote && separated(tg.t, c, mx, my, r, edge));
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
          const int low = list_cheapest_low(S, tg.b, cluster, mx, my, kEdgeMargin, r);
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

}  // namespace

long ListsInput::items() const { return long(nb) * nt * images_of(rules); }

void list_counts(exec::Space space, const ListsInput& in, long* counts, int* bad) {
  const ListsInput w = in;
  exec::parallel_for(space, in.items(), [=] BEATNIK_HOST_DEVICE(long item) {
    long n[3] = {0, 0, 0};
    auto sink = [&](int kind, const ListTerm&) { ++n[kind]; };
    bad[item] = walk_item(w, item, sink) ? 0 : 1;
    for (int k = 0; k < 3; ++k) counts[3 * item + k] = n[k];
  });
}

void list_fill(exec::Space space, const ListsInput& in, const long* at, ListTerm* near, ListTerm* far,
               ListTerm* edge) {
  const ListsInput w = in;
  exec::parallel_for(space, in.items(), [=] BEATNIK_HOST_DEVICE(long item) {
    long k[3] = {at[3 * item], at[3 * item + 1], at[3 * item + 2]};
    ListTerm* out[3] = {near, far, edge};
    auto sink = [&](int kind, const ListTerm& e) { out[kind][k[kind]++] = e; };
    walk_item(w, item, sink);
  });
}

HostLists lists_on_host(const ListsInput& in) {
  const long n = in.items();
  std::vector<long> counts(3 * n), at(3 * n);
  std::vector<int> bad(n);
  list_counts(exec::Space::Host, in, counts.data(), bad.data());
  for (long i = 0; i < n; ++i)
    if (bad[i]) throw Error("tree solver: a LET part lacks the sources of a cluster it needs");
  HostLists h;
  const long per_batch = in.nb > 0 ? n / in.nb : 0;
  long total[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k) h.first[k].assign(in.nb + 1, 0);
  for (long i = 0; i < n; ++i)  // the exclusive scan, per kind
    for (int k = 0; k < 3; ++k) {
      if (i % per_batch == 0) h.first[k][i / per_batch] = total[k];
      at[3 * i + k] = total[k];
      total[k] += counts[3 * i + k];
    }
  for (int k = 0; k < 3; ++k) {
    h.first[k][in.nb] = total[k];
    h.terms[k].resize(total[k]);
  }
  list_fill(exec::Space::Host, in, at.data(), h.terms[0].data(), h.terms[1].data(), h.terms[2].data());
  return h;
}

}  // namespace beatnik::model::tree
