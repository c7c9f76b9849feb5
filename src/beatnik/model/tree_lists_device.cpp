// The single traversal's interaction lists by kernels written once (tree_lists_device.hpp).
#include "beatnik/model/tree_lists_device.hpp"

#include "beatnik/base/error.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/exec/scratch.hpp"

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
template <class T>
void upload(exec::Buffer<T>& b, exec::Space s, const T* src, long n) {
  exec::grow(b, s, size_t(n));
  if (n > 0) exec::copy(b.data(), s, src, exec::Space::Host, size_t(n));
}
}  // namespace

ListsPass::ListsPass(exec::Space space) : space_(space), scan_(space) {}

void ListsPass::run(const ListsInput& host, const std::vector<long>& clusters, const std::vector<long>& sets) {
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
  upload(targets_, space_, host.targets, host.nb);
  in_ = host;
  in_.trees = tree_table_.data();
  in_.targets = targets_.data();
  const long n = in_.items();
  exec::grow(counts_, space_, size_t(3 * n));
  exec::grow(at_, space_, size_t(3 * (n + 1)));
  exec::grow(bad_, space_, size_t(n));
  list_counts(space_, in_, counts_.data(), bad_.data());
  {  // any item the host would have thrown on: one flag back (the counts' sum of bad, by a scan)
    std::vector<int> bad(static_cast<size_t>(n));
    if (n > 0) exec::copy(bad.data(), exec::Space::Host, bad_.data(), space_, size_t(n));
    for (int x : bad)
      if (x) throw Error("tree solver: a LET part lacks the sources of a cluster it needs");
  }
  for (int k = 0; k < 3; ++k) {
    total_[k] = scan_.run(counts_.data() + k * n, at_.data() + k * (n + 1), n);
    exec::grow(terms_[k], space_, size_t(total_[k]));
  }
  list_fill(space_, in_, at_.data(), terms_[0].data(), terms_[1].data(), terms_[2].data());
  // Each batch's bounds: the offsets of its first item (batch b's items start at b·nt·images).
  const int nb = in_.nb;
  exec::grow(first_, space_, size_t(3 * (nb + 1)));
  const long per = nb > 0 ? n / nb : 0;
  const long* at = at_.data();
  long* first = first_.data();
  exec::parallel_for(space_, 3L * (nb + 1), [=] BEATNIK_HOST_DEVICE(long i) {
    const long k = i / (nb + 1), b = i % (nb + 1);
    first[i] = at[k * (n + 1) + b * per];
  });
}

HostLists ListsPass::to_host() const {
  HostLists h;
  const int nb = in_.nb;
  for (int k = 0; k < 3; ++k) {
    h.first[k].resize(size_t(nb + 1));
    exec::copy(h.first[k].data(), exec::Space::Host, first_.data() + k * (nb + 1), space_, size_t(nb + 1));
    h.terms[k].resize(size_t(total_[k]));
    if (total_[k] > 0) exec::copy(h.terms[k].data(), exec::Space::Host, terms_[k].data(), space_, size_t(total_[k]));
  }
  return h;
}

}  // namespace beatnik::model::tree
