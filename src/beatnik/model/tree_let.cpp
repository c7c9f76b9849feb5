#include "beatnik/model/tree_let.hpp"

#include <cmath>

#include "beatnik/base/error.hpp"

namespace beatnik::model::tree {
namespace {

constexpr int kHeader = 3;     // clusters, particles, proxy doubles
constexpr int kNodeWidth = 11;  // lo[3], hi[3], begin, end (−1: not full), child[2] (−1: not opened), proxies

// The owner's walk for one target box: which clusters are opened, which travel with proxies,
// which sources travel.
struct Walk {
  const SourceTree& t;
  const search::Cluster& target;
  const Rules& r;
  std::vector<char> opened, proxy, need;

  void particles(const search::Cluster& c) {
    for (long k = c.begin; k < c.end; ++k) need[k] = 1;
  }
  void visit(int c, int mx, int my, bool full_cover) {
    const search::Cluster& C = t.clusters[c];
    if (!full_cover) {
      const Cover cv = cover(target, C, mx, my, r.images);
      if (cv == Cover::None) return;
      if (cv == Cover::Partial) {
        if (C.leaf()) return particles(C);
        opened[c] = 1;
        for (int k : C.child) visit(k, mx, my, false);
        return;
      }
    }
    if (separated(target, C, mx, my, r)) {
      if (t.proxies_of(c)) proxy[c] = 1;
      else particles(C);
      return;
    }
    // Not separated from the whole box T, but a target batch inside T may be: its proxies travel
    // too, or the receiver would sum every source below it directly (9x the direct pairs of
    // one rank at 256² on 2 x 2 ranks before this).
    if (t.proxies_of(c)) proxy[c] = 1;
    if (C.leaf()) return particles(C);
    opened[c] = 1;
    for (int k : C.child) visit(k, mx, my, true);
  }
};

}  // namespace

Rules make_rules(const BRImages& images, double theta) {
  Rules r;
  r.images = images;
  r.theta = theta;
  for (int d = 0; d < 2; ++d) {
    const int reach = images.period[d] > 0.0 ? images.k + (images.centred ? 1 : 0) : 0;
    r.lo[d] = -reach;
    r.hi[d] = reach;
  }
  return r;
}

int nearest(double x, const BRImages& img, int d) {
  const double c = image_centre(x, img.period[d], img.centring_half(d));
  return c > 0.0 ? 1 : (c < 0.0 ? -1 : 0);
}

// Per dimension: pair (t, s) takes image m when |m − a₀(t − s)| ≤ K, and a₀ is monotone in
// t − s, so the two extreme separations decide.
Cover cover(const search::Cluster& b, const search::Cluster& c, int mx, int my, const BRImages& img) {
  const int m[2] = {mx, my};
  bool partial = false;
  for (int d = 0; d < 2; ++d) {
    if (img.period[d] <= 0.0) continue;  // a single image, m = 0
    const int a_lo = nearest(b.lo[d] - c.hi[d], img, d), a_hi = nearest(b.hi[d] - c.lo[d], img, d);
    if (a_hi < m[d] - img.k || a_lo > m[d] + img.k) return Cover::None;
    if (!(m[d] - img.k <= a_lo && a_hi <= m[d] + img.k)) partial = true;
  }
  return partial ? Cover::Partial : Cover::Full;
}

bool separated(const search::Cluster& b, const search::Cluster& c, int mx, int my, const Rules& r) {
  const double ox = mx * r.images.period[0], oy = my * r.images.period[1];
  const double dx = b.centre(0) - c.centre(0) - ox, dy = b.centre(1) - c.centre(1) - oy, dz = b.centre(2) - c.centre(2);
  const double R = std::sqrt(dx * dx + dy * dy + dz * dz);
  return b.radius() + c.radius() < r.theta * R;
}

void box_record(const SourceTree& t, double* out) {
  const search::Cluster& root = t.clusters.at(0);
  for (int d = 0; d < 3; ++d) {
    out[d] = root.lo[d];
    out[3 + d] = root.hi[d];
  }
  out[6] = static_cast<double>(t.n);
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

long pack_let(const SourceTree& t, const search::Cluster& target, const Rules& r, std::vector<double>& out) {
  const int nc = static_cast<int>(t.clusters.size());
  if (t.n == 0 || target.count() == 0) return 0;
  Walk w{t, target, r, std::vector<char>(nc, 0), std::vector<char>(nc, 0), std::vector<char>(t.n, 0)};
  for (int mx = r.lo[0]; mx <= r.hi[0]; ++mx)
    for (int my = r.lo[1]; my <= r.hi[1]; ++my) w.visit(0, mx, my, false);
  // The clusters sent: the root and the children of every opened cluster (index order keeps
  // parents before children).
  std::vector<int> index(nc, -1);
  int nn = 0;
  index[0] = nn++;
  for (int c = 0; c < nc; ++c)
    if (index[c] >= 0 && w.opened[c])
      for (int k : t.clusters[c].child) index[k] = nn++;
  std::vector<long> pre(t.n + 1, 0);
  for (long k = 0; k < t.n; ++k) pre[k + 1] = pre[k] + w.need[k];
  const long np = pre[t.n];
  long nprox = 0;
  for (int c = 0; c < nc; ++c)
    if (index[c] >= 0 && w.proxy[c]) nprox += 6L * t.proxy_count[c];
  const size_t start = out.size();
  const long size = kHeader + long(kNodeWidth) * nn + 6 * np + nprox;
  out.resize(start + size);
  double* h = out.data() + start;
  h[0] = nn;
  h[1] = static_cast<double>(np);
  h[2] = static_cast<double>(nprox);
  double* node = h + kHeader;
  double* parts = node + long(kNodeWidth) * nn;
  double* prox = parts + 6 * np;
  std::vector<int> sent(nn);  // new index -> cluster: proxies go in the receiver's node order
  for (int c = 0; c < nc; ++c)
    if (index[c] >= 0) sent[index[c]] = c;
  for (int c : sent) {
    const search::Cluster& C = t.clusters[c];
    double* o = node + long(kNodeWidth) * index[c];
    for (int d = 0; d < 3; ++d) {
      o[d] = C.lo[d];
      o[3 + d] = C.hi[d];
    }
    const bool full = pre[C.end] - pre[C.begin] == C.count();
    o[6] = full ? static_cast<double>(pre[C.begin]) : -1.0;
    o[7] = full ? static_cast<double>(pre[C.end]) : -1.0;
    o[8] = w.opened[c] ? index[C.child[0]] : -1.0;
    o[9] = w.opened[c] ? index[C.child[1]] : -1.0;
    o[10] = w.proxy[c] ? t.proxy_count[c] : 0.0;
    if (w.proxy[c]) {
      const double* p = &t.proxies[t.proxy_start[c]];
      for (long k = 0; k < 6L * t.proxy_count[c]; ++k) *prox++ = p[k];
    }
  }
  for (long k = 0; k < t.n; ++k) {
    if (!w.need[k]) continue;
    const long q = pre[k];
    for (int c = 0; c < 6; ++c) parts[c * np + q] = t.pts[c * t.n + k];
  }
  return size;
}

SourceTree unpack_let(const double* b, long size) {
  SourceTree t;
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
  t.proxies.assign(prox, prox + nprox);
  t.pts.assign(parts, parts + 6 * t.n);
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
  return t;
}

}  // namespace beatnik::model::tree
