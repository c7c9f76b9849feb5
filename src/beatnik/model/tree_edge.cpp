// Prefix proxy tables for the image window's edge and the sums through them (tree_edge.hpp); the
// pair loops are tree_edge_pairs.hpp's (portable here, AVX2 + FMA in tree_edge_avx2.cpp).
#include "beatnik/model/tree_edge.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <utility>
#include <vector>

#include "beatnik/base/env.hpp"
#include "beatnik/model/br_host_kernel.hpp"
#include "beatnik/model/br_targets_host.hpp"
#include "beatnik/model/tree_edge_pairs.hpp"
#include "beatnik/model/tree_interp.hpp"

namespace beatnik::model::tree {

long edge_block(int m) {
  static const long k = env::integer("BEATNIK_TREE_EDGE_BLOCK", 1, 32).value_or(2);
  return std::clamp<long>(m / k, 8, std::max<long>(8, 256 / k));
}

void build_edge_table(const search::Cluster& C, const double* pts, long stride, int axis, const int* dg,
                      const double* proxies, int m, EdgeTable& t, long block) {
  const long n = C.count();
  t.axis = axis;
  t.m = m;
  t.n = n;
  t.block = block > 0 ? block : edge_block(m);
  t.proxies = proxies;
  std::vector<long> order(n);
  std::iota(order.begin(), order.end(), C.begin);
  const double* key = pts + axis * stride;
  std::stable_sort(order.begin(), order.end(), [key](long a, long b) { return key[a] < key[b]; });
  t.src.resize(6 * n);
  for (int c = 0; c < 6; ++c)
    for (long k = 0; k < n; ++k) t.src[c * n + k] = pts[c * stride + order[k]];
  t.prefix.resize(3L * m * (n / t.block + 1));
  interpolate_prefix(C, dg, t.src.data(), n, t.block, t.prefix.data());
}

namespace {

// The first k in [lo, hi) where pred(k) is false (pred true on a prefix), else hi.
template <class P>
long first_false(long lo, long hi, P pred) {
  while (lo < hi) {
    const long mid = lo + (hi - lo) / 2;
    if (pred(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The pair loops: the run's host kernel's flavour (br_host_kernel_default: AVX-512F, else AVX2 +
// FMA, else the portable loop).
detail::EdgePairsFn pairs_fn() {
  static const detail::EdgePairsFn f = [] {
    switch (br_host_kernel_default()) {
      case BRHostKernel::Avx512: return detail::edge_pairs_avx512;
      case BRHostKernel::Avx2: return detail::edge_pairs_avx2;
      default: return detail::edge_pairs_portable;
    }
  }();
  return f;
}

// Sign · the velocity at (x, y, z) of the sorted sources [k0, k1), shifted by (ox, oy).
inline void direct(detail::EdgePairsFn pairs, const EdgeTable& t, long k0, long k1, double ox, double oy, double x,
                   double y, double z, double eps, double sign, double* v) {
  const long n = t.n;
  const double *xs = t.src.data(), *ys = xs + n, *zs = ys + n;
  double w[3] = {0.0, 0.0, 0.0};
  pairs(xs, ys, zs, zs + n, nullptr, n, k0, k1, ox, oy, x, y, z, eps, w);
  for (int c = 0; c < 3; ++c) v[c] += sign * w[c];
}

// The edge sums step a cut over at most this many keys per target (else a binary search).
constexpr long kSteppedSlab = 16;

// The sources summed directly beside a target's proxy strengths Q[jh] − Q[jl] (cuts lo, hi; a
// row every B sources), in this order: at hi, [jh·B, hi) added or [hi, jh·B) taken off; at lo,
// [jl·B, lo) taken off or [lo, jl·B) added.
struct DirectPart {
  long k0, k1;
  double sign;
};
inline std::array<DirectPart, 2> direct_parts(long lo, long hi, long jl, long jh, long B) {
  return {{{std::min(jh * B, hi), std::max(jh * B, hi), jh * B <= hi ? 1.0 : -1.0},
           {std::min(jl * B, lo), std::max(jl * B, lo), jl * B <= lo ? -1.0 : 1.0}}};
}

// out = a − b over n doubles (a group's strengths from two prefix rows), cloned to vectorise.
__attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
void difference(const double* a, const double* b, long n, double* out) {
#pragma omp simd
  for (long k = 0; k < n; ++k) out[k] = a[k] - b[k];
}

// Targets whose cuts lie nearest the same two prefix rows (jl < jh) take the same strengths
// Q[jh] − Q[jl]. Groups of at least kSharedRows of them are summed by the targets-in-lanes kernel
// (br_targets_host) together, with the strengths formed once, instead of one target at a time
// with a horizontal sum and the strengths formed per pair. Each target still gets its own
// pairs, in proxy order. Sets done[q] and pv[3q…3q+2] (the proxies' velocity) for the targets it
// summed; cuts: per target lo, hi, jl, jh. A group whose targets also share their cuts (lo, hi) —
// on a mesh the targets of a batch at one coordinate along the axis, typically 8 of a 64-target
// leaf — sums the sources between rows and cuts the same way, each part with its sign in the
// strengths, after the proxies: done[q] = 2 and pv holds the whole edge term (edge_sum's order:
// proxies, then the part at jh, then the part at jl). Per target, those loops with a horizontal
// sum each took about twice a pair's time in the kernel (the edge sums 4-5 % faster this way).
constexpr long kSharedRows = 2;
void shared_rows(const EdgeTable& t, int mx, int my, const double* tx, const double* ty, const double* tz, long nt,
                 const BRImages& img, double eps, const long* cuts, char* done, double* pv) {
  const long m = t.m;
  const auto rows = [cuts](long q) { return std::make_pair(cuts[4 * q + 2], cuts[4 * q + 3]); };
  // The targets with proxy pairs ordered by (jl, jh), ties by q: a counting sort, the batch's rows
  // spanning a few values only (a comparison sort of them took a twentieth of the edge sums).
  thread_local std::vector<long> order, count;
  long l0 = 0, l1 = -1, h0 = 0, h1 = -1;
  for (long q = 0; q < nt; ++q) {
    if (!(cuts[4 * q + 1] > cuts[4 * q] && cuts[4 * q + 3] > cuts[4 * q + 2])) continue;
    const auto [jl, jh] = rows(q);
    if (l1 < l0) l0 = l1 = jl, h0 = h1 = jh;
    l0 = std::min(l0, jl), l1 = std::max(l1, jl), h0 = std::min(h0, jh), h1 = std::max(h1, jh);
  }
  if (l1 < l0) return;
  const long nh = h1 - h0 + 1, nkeys = (l1 - l0 + 1) * nh;
  if (nkeys > 4 * nt + 64) {  // spread out (not seen in runs): a comparison sort, the same order
    order.clear();
    for (long q = 0; q < nt; ++q)
      if (cuts[4 * q + 1] > cuts[4 * q] && cuts[4 * q + 3] > cuts[4 * q + 2]) order.push_back(q);
    std::stable_sort(order.begin(), order.end(), [&](long a, long b) { return rows(a) < rows(b); });
  } else {
    const auto slot = [&](long q) { return (cuts[4 * q + 2] - l0) * nh + (cuts[4 * q + 3] - h0); };
    count.assign(nkeys + 1, 0);
    long total = 0;
    for (long q = 0; q < nt; ++q)
      if (cuts[4 * q + 1] > cuts[4 * q] && cuts[4 * q + 3] > cuts[4 * q + 2]) ++count[slot(q) + 1], ++total;
    for (long k = 0; k < nkeys; ++k) count[k + 1] += count[k];
    order.resize(total);
    for (long q = 0; q < nt; ++q)
      if (cuts[4 * q + 1] > cuts[4 * q] && cuts[4 * q + 3] > cuts[4 * q + 2]) order[count[slot(q)]++] = q;
  }
  static const bool avx512 = br_host_kernel_default() == BRHostKernel::Avx512;
  thread_local std::vector<double> w, g, e;  // the proxies with the group's strengths; its targets and
                                             // sums; a direct part's sources with signed strengths
  bool placed = false;                    // the proxies' positions in w (the same for every group)
  for (size_t a = 0; a < order.size();) {
    size_t b = a + 1;
    while (b < order.size() && rows(order[b]) == rows(order[a])) ++b;
    const long ng = static_cast<long>(b - a);
    if (ng >= kSharedRows) {
      const auto [jl, jh] = rows(order[a]);
      const double *Qh = &t.prefix[3 * m * jh], *Ql = &t.prefix[3 * m * jl];
      if (!placed) {
        w.resize(6 * m);
        std::copy(t.proxies, t.proxies + 3 * m, w.begin());
        placed = true;
      }
      difference(Qh, Ql, 3 * m, &w[3 * m]);
      g.assign(6 * ng, 0.0);
      for (long i = 0; i < ng; ++i) {
        const long q = order[a + i];
        g[i] = tx[q], g[ng + i] = ty[q], g[2 * ng + i] = tz[q];
      }
      // The group's sums over np points p ([x|y|z|qx|qy|qz], np apart) into g's rows 3…5.
      double* su = g.data() + 3 * ng;
      const auto group_sums = [&](const double* p, long np) {
        if (avx512) {
          detail::edge_targets_avx512(p, p + np, p + 2 * np, p + 3 * np, np, np, mx * img.period[0],
                                      my * img.period[1], g.data(), g.data() + ng, g.data() + 2 * ng, ng, eps, su,
                                      su + ng, su + 2 * ng);
        } else {
          std::fill(su, su + 3 * ng, 0.0);
          const BRSourceRange r{p, np, 0, np, mx, my, false};
          br_targets_host(g.data(), g.data() + ng, g.data() + 2 * ng, ng, &r, 1, img, eps, su, su + ng, su + 2 * ng);
        }
      };
      group_sums(w.data(), m);
      const long lo = cuts[4 * order[a]], hi = cuts[4 * order[a] + 1];
      bool cuts_shared = true;
      for (long i = 0; i < ng; ++i) {
        const long q = order[a + i];
        done[q] = 1;
        for (int c = 0; c < 3; ++c) pv[3 * q + c] = su[c * ng + i];
        cuts_shared = cuts_shared && cuts[4 * q] == lo && cuts[4 * q + 1] == hi;
      }
      if (cuts_shared) {
        const long n = t.n;
        for (const auto& [k0, k1, sign] : direct_parts(lo, hi, jl, jh, t.block)) {
          const long np = k1 - k0;
          if (np <= 0) continue;
          e.resize(6 * np);
          for (int c = 0; c < 6; ++c) {
            const double* from = t.src.data() + c * n + k0;
            double* to = e.data() + c * np;
            if (c < 3 || sign > 0) std::copy(from, from + np, to);
            else
              for (long k = 0; k < np; ++k) to[k] = -from[k];
          }
          group_sums(e.data(), np);
          for (long i = 0; i < ng; ++i)
            for (int c = 0; c < 3; ++c) pv[3 * order[a + i] + c] += su[c * ng + i];
        }
        for (long i = 0; i < ng; ++i) done[order[a + i]] = 2;
      }
    }
    a = b;
  }
}

}  // namespace

namespace detail {

// Compiled for AVX-512, AVX2 and baseline, as the tree's portable pair kernel (br_targets_host.cpp).
__attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
void edge_pairs_portable(const double* px, const double* py, const double* pz, const double* a, const double* b,
                         long stride, long k0, long k1, double ox, double oy, double x, double y, double z,
                         double eps, double* v) {
  double vx = 0.0, vy = 0.0, vz = 0.0;
  if (b) {
#pragma omp simd reduction(+ : vx, vy, vz)
    for (long k = k0; k < k1; ++k)
      br_pair(x, y, z, px[k] + ox, py[k] + oy, pz[k], a[k] - b[k], a[stride + k] - b[stride + k],
              a[2 * stride + k] - b[2 * stride + k], eps, vx, vy, vz);
  } else {
#pragma omp simd reduction(+ : vx, vy, vz)
    for (long k = k0; k < k1; ++k)
      br_pair(x, y, z, px[k] + ox, py[k] + oy, pz[k], a[k], a[stride + k], a[2 * stride + k], eps, vx, vy, vz);
  }
  v[0] += vx;
  v[1] += vy;
  v[2] += vz;
}

}  // namespace detail

void order_by_coordinate(const double* r, long n, std::vector<long>& order) {
  order.resize(n);
  std::iota(order.begin(), order.end(), 0L);
  std::stable_sort(order.begin(), order.end(), [r](long a, long b) { return r[a] < r[b]; });
}

void edge_sum(const EdgeTable& t, int mx, int my, const double* tx, const double* ty, const double* tz, long nt,
              const BRImages& img, double eps, double* ux, double* uy, double* uz, EdgeCounts& counts,
              const long* by_r) {
  const int d = t.axis, mm = d == 0 ? mx : my, m = t.m;
  const double L = img.period[d], h = img.centring_half(d);
  const double ox = mx * img.period[0], oy = my * img.period[1];
  const double* key = t.src.data() + d * t.n;
  const double *px = t.proxies, *py = px + m, *pz = py + m;
  const long B = t.block, rows = t.n / B;
  if (nt <= 0 || t.n <= 0) return;
  const detail::EdgePairsFn pairs = pairs_fn();
  // a₀ is non-increasing along the sorted sources: those before lo are beyond the window's upper
  // end (a₀ > m + K), those from hi on below its lower end (a₀ < m − K). a₀ is non-decreasing in
  // the target's coordinate r, so every target's lo and hi lie between those of the batch's
  // extreme r: each search runs over that slab only.
  const auto before_lo = [&](double r, long k) { return nearest_image(r - key[k], L, h) > mm + img.k; };
  const auto before_hi = [&](double r, long k) { return nearest_image(r - key[k], L, h) >= mm - img.k; };
  auto cut_lo = [&](double r, long a, long b) { return first_false(a, b, [&](long k) { return before_lo(r, k); }); };
  auto cut_hi = [&](double r, long a, long b) { return first_false(a, b, [&](long k) { return before_hi(r, k); }); };
  const double* tr = d == 0 ? tx : ty;
  thread_local std::vector<long> sorted;
  if (!by_r) {
    order_by_coordinate(tr, nt, sorted);
    by_r = sorted.data();
  }
  const double rmin = tr[by_r[0]], rmax = tr[by_r[nt - 1]];
  const long lo0 = cut_lo(rmin, 0, t.n), lo1 = cut_lo(rmax, lo0, t.n);
  const long hi0 = cut_hi(rmin, 0, t.n), hi1 = cut_hi(rmax, hi0, t.n);
  // Each target's cuts and the nearest prefix rows to them; the sources between a row and the cut
  // are summed directly. The cuts are non-decreasing in r, so with the targets in order of r each
  // is found by stepping on from the previous target's: O(nt + slab) tests of the predicate for
  // the batch, where a binary search per target took O(nt log slab) with a mispredicted branch at
  // about every other step (and a column's targets, which share r or nearly, repeated it).
  thread_local std::vector<long> cuts;  // per target: lo, hi, jl, jh
  thread_local std::vector<double> pv;  // per target: the proxies' velocity, where summed in a group
  thread_local std::vector<char> done;  // … and whether it was
  cuts.resize(4 * nt);
  pv.resize(3 * nt);
  done.assign(nt, 0);
  // (A slab far wider than the batch, not seen on meshes, takes a binary search from the last cut.)
  const bool step_lo = lo1 - lo0 <= kSteppedSlab * nt, step_hi = hi1 - hi0 <= kSteppedSlab * nt;
  for (long i = 0, lo = lo0, hi = hi0; i < nt; ++i) {
    const long q = by_r[i];
    const double r = tr[q];
    if (step_lo)
      while (lo < lo1 && before_lo(r, lo)) ++lo;
    else
      lo = cut_lo(r, lo, lo1);
    if (step_hi)
      while (hi < hi1 && before_hi(r, hi)) ++hi;
    else
      hi = cut_hi(r, hi, hi1);
    cuts[4 * q] = lo, cuts[4 * q + 1] = hi;
    cuts[4 * q + 2] = std::min((lo + B / 2) / B, rows), cuts[4 * q + 3] = std::min((hi + B / 2) / B, rows);
  }
  shared_rows(t, mx, my, tx, ty, tz, nt, img, eps, cuts.data(), done.data(), pv.data());
  for (long q = 0; q < nt; ++q) {
    const long lo = cuts[4 * q], hi = cuts[4 * q + 1], jl = cuts[4 * q + 2], jh = cuts[4 * q + 3];
    if (hi <= lo) continue;
    double v[3] = {0.0, 0.0, 0.0};
    const double x = tx[q], y = ty[q], z = tz[q];
    if (jh <= jl) {
      direct(pairs, t, lo, hi, ox, oy, x, y, z, eps, 1.0, v);
      counts.direct_pairs += hi - lo;
    } else {
      if (!done[q]) {
        const double *Qh = &t.prefix[3 * m * jh], *Ql = &t.prefix[3 * m * jl];
        pairs(px, py, pz, Qh, Ql, m, 0, m, ox, oy, x, y, z, eps, v);
      } else {
        for (int c = 0; c < 3; ++c) v[c] = pv[3 * q + c];
      }
      counts.proxy_pairs += m;
      if (done[q] != 2)  // (2: summed with its group already)
        for (const DirectPart& part : direct_parts(lo, hi, jl, jh, B))
          direct(pairs, t, part.k0, part.k1, ox, oy, x, y, z, eps, part.sign, v);
      counts.direct_pairs += std::abs(hi - jh * B) + std::abs(lo - jl * B);
    }
    ux[q] += v[0];
    uy[q] += v[1];
    uz[q] += v[2];
  }
}

}  // namespace beatnik::model::tree
