#include "beatnik/model/tree_let.hpp"

#include <algorithm>
#include <cmath>

#include "beatnik/base/error.hpp"

namespace beatnik::model::tree {
namespace {

constexpr int kHeader = static_cast<int>(kLetHeader);  // clusters, particles, proxy doubles
constexpr int kNodeWidth = 11;  // lo[3], hi[3], begin, end (−1: not full), child[2] (−1: not opened), proxies

// Sources needed before tree position k: the runs (sorted, disjoint) with their prefix sums.
long before(const std::vector<std::pair<long, long>>& runs, const std::vector<long>& pre, long k) {
  const auto it = std::upper_bound(runs.begin(), runs.end(), k,
                                   [](long x, const std::pair<long, long>& r) { return x < r.first; });
  if (it == runs.begin()) return 0;
  const size_t i = size_t(it - runs.begin()) - 1;  // the last run starting at or before k
  return pre[i] + std::min(k, runs[i].second) - runs[i].first;
}

}  // namespace

Rules make_rules(const BRImages& images, double theta, bool edge, bool dual) {
  Rules r;
  r.images = images;
  r.theta = theta;
  r.edge = edge;
  r.dual = dual;
  for (int d = 0; d < 2; ++d) {
    const int reach = images.period[d] > 0.0 ? images.k + (images.centred ? 1 : 0) : 0;
    r.lo[d] = -reach;
    r.hi[d] = reach;
  }
  return r;
}

search::Cluster box_from_record(const double* rec) {
  search::Cluster c;
  for (int d = 0; d < 3; ++d) {
    c.lo[d] = rec[d];
    c.hi[d] = rec[3 + d];
  }
  c.end = static_cast<long>(rec[6]);
  return c;
}

std::vector<int> target_box_records(const SourceTree& t, double* out) {
  std::fill(out, out + kLetBoxes * kBoxWidth, 0.0);
  std::vector<int> box(t.clusters.size(), -1);
  if (t.n == 0) return box;
  int next = 0;
  // Depth first from the root: a cluster at the boxes' depth (or a leaf above it) is a box, and
  // its subtree lies in it.
  std::vector<std::pair<int, int>> stack{{0, 0}};  // cluster, depth
  while (!stack.empty()) {
    const auto [c, depth] = stack.back();
    stack.pop_back();
    const search::Cluster& C = t.clusters[c];
    if (depth == kLetBoxDepth || C.leaf()) {
      double* rec = out + size_t(next) * kBoxWidth;
      for (int d = 0; d < 3; ++d) {
        rec[d] = C.lo[d];
        rec[3 + d] = C.hi[d];
      }
      rec[6] = static_cast<double>(C.count());
      std::vector<int> sub{c};
      while (!sub.empty()) {
        const int k = sub.back();
        sub.pop_back();
        box[k] = next;
        if (!t.clusters[k].leaf())
          for (int ch : t.clusters[k].child) sub.push_back(ch);
      }
      ++next;
      continue;
    }
    stack.push_back({C.child[1], depth + 1});  // the first child on top: boxes in depth-first order
    stack.push_back({C.child[0], depth + 1});
  }
  return box;
}

std::vector<search::Cluster> target_boxes(const double* records) {
  std::vector<search::Cluster> boxes;
  for (int k = 0; k < kLetBoxes; ++k) {
    const search::Cluster b = box_from_record(records + size_t(k) * kBoxWidth);
    if (b.count() > 0) boxes.push_back(b);
  }
  return boxes;
}

void LetDecisions::reset(int clusters) {
  opened.assign(clusters, 0);
  proxy.assign(clusters, 0);
  sources.clear();
}

void LetDecisions::decide(const Visit& v, const search::Cluster& C, bool has_proxies,
                          const std::vector<search::Cluster>& targets, const Rules& r, std::vector<Visit>& next) {
  const int c = v.cluster;
  const search::Cluster& target = targets[v.box];
  if (!v.full) {
    int cut = 0;
    const Cover cv = cover(target, C, v.mx, v.my, r.images, &cut);
    if (cv == Cover::None) return;
    if (cv == Cover::Partial) {
      // Cut by the window's edge in one dimension and separated from T: whole, for the receiver's
      // edge terms (its batches inside T see at most this cut, and separation from T).
      if (r.edge && edge_axis(cut) >= 0 && separated(target, C, v.mx, v.my, r, true)) {
        if (has_proxies) proxy[c] = 1;
        return sources.push_back({C.begin, C.end});
      }
      if (C.leaf()) return sources.push_back({C.begin, C.end});
      opened[c] = 1;
      for (int k : C.child) next.push_back({k, v.mx, v.my, false, v.box});
      return;
    }
  }
  if (separated(target, C, v.mx, v.my, r)) {
    if (has_proxies) proxy[c] = 1;
    else sources.push_back({C.begin, C.end});
    return;
  }
  // Not separated from the whole box T, but a target batch inside T may be: its proxies travel
  // too, or the receiver would sum every source below it directly (9x the direct pairs of
  // one rank at 256² on 2 x 2 ranks before this).
  if (has_proxies) proxy[c] = 1;
  if (C.leaf()) return sources.push_back({C.begin, C.end});
  opened[c] = 1;
  for (int k : C.child) next.push_back({k, v.mx, v.my, true, v.box});
}

std::vector<Visit> root_visits(const Rules& r, int boxes) {
  std::vector<Visit> v;
  for (int b = 0; b < boxes; ++b)
    for (int mx = r.lo[0]; mx <= r.hi[0]; ++mx)
      for (int my = r.lo[1]; my <= r.hi[1]; ++my) v.push_back({0, mx, my, false, b});
  return v;
}

long LetBlockPlan::size() const {
  return kHeader + long(kNodeWidth) * long(sent.size()) + 6 * particles + proxy_doubles;
}

LetBlockPlan plan_let_block(const LetDecisions& d, const std::vector<search::Cluster>& clusters,
                            const std::vector<int>& proxy_count) {
  LetBlockPlan p;
  // The root, then the children of every opened cluster in index order (a parent's index is
  // below its children's, so the loop meets every opened cluster after it was sent).
  const int nc = static_cast<int>(d.opened.size());
  std::vector<char> sent(nc, 0);
  sent[0] = 1;
  p.sent.push_back(0);
  for (int c = 0; c < nc; ++c)
    if (sent[c] && d.opened[c])
      for (int k : clusters[c].child) {
        sent[k] = 1;
        p.sent.push_back(k);
      }
  for (int c : p.sent)
    if (d.proxy[c]) p.proxy_doubles += 6L * proxy_count[c];
  std::vector<std::pair<long, long>> r = d.sources;
  std::sort(r.begin(), r.end());
  for (const auto& x : r) {
    if (!p.runs.empty() && x.first <= p.runs.back().second)
      p.runs.back().second = std::max(p.runs.back().second, x.second);
    else
      p.runs.push_back(x);
  }
  for (const auto& x : p.runs) p.particles += x.second - x.first;
  return p;
}

void write_let_nodes(const LetBlockPlan& p, const LetDecisions& d, const std::vector<search::Cluster>& clusters,
                     const std::vector<int>& proxy_count, double* h) {
  const int nn = static_cast<int>(p.sent.size());
  h[0] = nn;
  h[1] = static_cast<double>(p.particles);
  h[2] = static_cast<double>(p.proxy_doubles);
  std::vector<long> pre(p.runs.size() + 1, 0);
  for (size_t i = 0; i < p.runs.size(); ++i) pre[i + 1] = pre[i] + p.runs[i].second - p.runs[i].first;
  std::vector<int> index(d.opened.size(), -1);  // owner's cluster -> block node
  for (int q = 0; q < nn; ++q) index[p.sent[q]] = q;
  double* node = h + kHeader;
  for (int q = 0; q < nn; ++q) {
    const int c = p.sent[q];
    const search::Cluster& C = clusters[c];
    double* o = node + long(kNodeWidth) * q;
    for (int k = 0; k < 3; ++k) {
      o[k] = C.lo[k];
      o[3 + k] = C.hi[k];
    }
    const long b = before(p.runs, pre, C.begin), e = before(p.runs, pre, C.end);
    const bool full = e - b == C.count();
    o[6] = full ? static_cast<double>(b) : -1.0;
    o[7] = full ? static_cast<double>(e) : -static_cast<double>(C.count());  // not full: −(its particles)
    o[8] = d.opened[c] ? index[C.child[0]] : -1.0;
    o[9] = d.opened[c] ? index[C.child[1]] : -1.0;
    o[10] = d.proxy[c] ? proxy_count[c] : 0.0;
  }
}

LetBlock plan_let(const SourceTree& t, const std::vector<search::Cluster>& targets, const Rules& r) {
  LetBlock k;
  if (t.n == 0 || targets.empty()) return k;
  const int nc = static_cast<int>(t.clusters.size());
  k.d.reset(nc);
  // The decisions are sets, so the walks from the root visits (a target box and an image each)
  // run in parallel, each thread deciding into its own sets, merged after: the block does not
  // depend on the thread count. One destination's walk on one thread held the pack at 2 ranks.
  const std::vector<Visit> roots = root_visits(r, static_cast<int>(targets.size()));
  const long nroots = static_cast<long>(roots.size());
#pragma omp parallel if (nroots > 1)
  {
    LetDecisions mine;
    mine.reset(nc);
    std::vector<Visit> stack;
#pragma omp for schedule(dynamic, 1) nowait
    for (long q = 0; q < nroots; ++q) {
      stack.assign(1, roots[q]);
      while (!stack.empty()) {
        const Visit v = stack.back();
        stack.pop_back();
        mine.decide(v, t.clusters[v.cluster], t.proxies_of(v.cluster), targets, r, stack);
      }
    }
#pragma omp critical(plan_let_merge)
    {
      for (int c = 0; c < nc; ++c) {
        k.d.opened[c] |= mine.opened[c];
        k.d.proxy[c] |= mine.proxy[c];
      }
      k.d.sources.insert(k.d.sources.end(), mine.sources.begin(), mine.sources.end());
    }
  }
  k.plan = plan_let_block(k.d, t.clusters, t.proxy_count);
  k.size = k.plan.size();
  return k;
}

void add_copy(const double* src, double* dst, long n, std::vector<LetCopy>& copies) {
  for (long o = 0; o < n; o += kLetPiece) copies.push_back({src + o, dst + o, std::min(kLetPiece, n - o)});
}

void copy_pieces(const std::vector<LetCopy>& copies) {
  const long n = static_cast<long>(copies.size());
#pragma omp parallel for schedule(static)
  for (long q = 0; q < n; ++q) std::copy(copies[q].src, copies[q].src + copies[q].n, copies[q].dst);
}

void write_let_nodes(const SourceTree& t, const LetBlock& k, double* h, std::vector<LetCopy>& copies) {
  if (k.size == 0) return;
  const LetBlockPlan& p = k.plan;
  write_let_nodes(p, k.d, t.clusters, t.proxy_count, h);
  double* parts = h + kHeader + long(kNodeWidth) * long(p.sent.size());
  double* prox = parts + 6 * p.particles;
  for (int c = 0; c < 6; ++c)
    for (const auto& x : p.runs) {
      add_copy(&t.pts[c * t.n + x.first], parts, x.second - x.first, copies);
      parts += x.second - x.first;
    }
  for (int c : p.sent)
    if (k.d.proxy[c]) {
      add_copy(&t.proxies[t.proxy_start[c]], prox, 6L * t.proxy_count[c], copies);
      prox += 6L * t.proxy_count[c];
    }
}

void write_let(const SourceTree& t, const LetBlock& k, double* h) {
  std::vector<LetCopy> copies;
  write_let_nodes(t, k, h, copies);
  for (const LetCopy& c : copies) std::copy(c.src, c.src + c.n, c.dst);
}

long pack_let(const SourceTree& t, const std::vector<search::Cluster>& targets, const Rules& r,
              std::vector<double>& out) {
  const LetBlock k = plan_let(t, targets, r);
  const size_t start = out.size();
  out.resize(start + k.size);
  write_let(t, k, out.data() + start);
  return k.size;
}

long let_host_doubles(const double* b) { return kHeader + long(kNodeWidth) * static_cast<long>(b[0]); }

std::pair<long, long> let_arrays(const double* b) {
  const long parts = let_host_doubles(b);
  return {parts, parts + 6 * static_cast<long>(b[1])};
}

SourceTree unpack_let(const double* b, long size) {
  SourceTree t;
  unpack_let(b, size, t);
  return t;
}

void unpack_let(const double* b, long size, SourceTree& t, bool arrays) {
  t.remote = true;
  if (size < kHeader) throw Error("LET: a block shorter than its header");
  const int nn = static_cast<int>(b[0]);
  t.n = static_cast<long>(b[1]);
  const long nprox = static_cast<long>(b[2]);
  if (size != kHeader + long(kNodeWidth) * nn + 6 * t.n + nprox) throw Error("LET: a block of the wrong size");
  const double* node = b + kHeader;
  const double* parts = node + long(kNodeWidth) * nn;
  const double* prox = parts + 6 * t.n;
  t.clusters.resize(nn);
  t.full.resize(nn);
  t.proxy_start.assign(nn, -1);
  t.proxy_count.assign(nn, 0);
  t.owned.assign(nn, 0);
  if (arrays) {
    t.proxies.assign(prox, prox + nprox);
    t.pts.assign(parts, parts + 6 * t.n);
  } else {
    t.proxies.resize(nprox);
    t.pts.resize(6 * t.n);
  }
  long off = 0;
  for (int c = 0; c < nn; ++c) {
    const double* o = node + long(kNodeWidth) * c;
    search::Cluster& C = t.clusters[c];
    for (int d = 0; d < 3; ++d) {
      C.lo[d] = o[d];
      C.hi[d] = o[3 + d];
    }
    t.full[c] = o[6] >= 0.0;
    C.begin = t.full[c] ? static_cast<long>(o[6]) : 0;
    C.end = t.full[c] ? static_cast<long>(o[7]) : 0;
    t.owned[c] = t.full[c] ? C.count() : static_cast<long>(-o[7]);
    C.child[0] = static_cast<int>(o[8]);
    C.child[1] = static_cast<int>(o[9]);
    const int m = static_cast<int>(o[10]);
    if (m > 0) {
      t.proxy_start[c] = off;
      t.proxy_count[c] = m;
      off += 6L * m;
    }
  }
  if (off != nprox) throw Error("LET: proxy counts do not add up");
}

}  // namespace beatnik::model::tree
