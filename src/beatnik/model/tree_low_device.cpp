// The lower-degree sets' strengths, one pass per chain position (tree_low_device.hpp). Compiled
// by nvcc in the CUDA build (the lambdas run as device kernels there), by the host compiler
// otherwise.
#include "beatnik/model/tree_low_device.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>

#include "beatnik/base/timers.hpp"
#include "beatnik/exec/device_clock.hpp"
#include "beatnik/exec/last_at_most.hpp"
#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/exec/scratch.hpp"
#include "beatnik/model/tree_interp.hpp"
#include "beatnik/model/tree_upward.hpp"

namespace beatnik::model {
namespace {

// BEATNIK_TREE_OVERLAP=0 (the solver's A/B, tree_upward.hpp) also makes this file's host setup
// on one thread, as it was.
bool parallel_setup() { return tree_overlap(); }

constexpr int kW = tree::kTreeMaxDegree + 1;

// c + r·t rounded twice, as the host computes it (no fused multiply-add on the device), so that
// the points equal the host's bitwise and a grid point that is also a node of the coarser grid
// takes lagrange's exact branch on both.
BEATNIK_HOST_DEVICE inline double add_product(double c, double r, double t) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(c, __dmul_rn(r, t));
#else
  return c + r * t;
#endif
}

// Point j of the degree-n Chebyshev points of the second kind on [lo, hi] (tree::chebyshev;
// C: its cosines).
BEATNIK_HOST_DEVICE inline double node(double lo, double hi, int n, int j, const double* C) {
  const double c = 0.5 * (lo + hi);
  if (n == 0) return c;
  return add_product(c, 0.5 * (hi - lo), C[n * kW + j]);
}

// Rows of the basis table per dimension: the grid's points, or one per point source.
BEATNIK_HOST_DEVICE inline int rows(const TreeLowPass::Set& q, int d) { return q.grid ? q.P[d] + 1 : q.n; }

// Where dimension d's basis rows start in a set's table (the rows of the dimensions before it
// first, each of D + 1 values).
BEATNIK_HOST_DEVICE inline long basis_start(const TreeLowPass::Set& q, int d) {
  long off = q.tab;
  for (int k = 0; k < d; ++k) off += long(rows(q, k)) * (q.D[k] + 1);
  return off;
}

// The separable steps' items of a set (0 for point sources): (P0+1)(P1+1)(D2+1), then
// (P0+1)(D1+1)(D2+1).
BEATNIK_HOST_DEVICE inline long step1_items(const TreeLowPass::Set& q) {
  return q.grid ? long(q.P[0] + 1) * (q.P[1] + 1) * (q.D[2] + 1) : 0;
}
BEATNIK_HOST_DEVICE inline long step2_items(const TreeLowPass::Set& q) {
  return q.grid ? long(q.P[0] + 1) * (q.D[1] + 1) * (q.D[2] + 1) : 0;
}

// L_j(x) of the degree-n points on [lo, hi] for every j ≤ n at once, written to out[0..n]:
// tree::lagrange's formula and order (the exact-node test, then w_i / (x − x_i) summed in i
// order into the denominator, each term divided by it).
BEATNIK_HOST_DEVICE inline void basis_row(double x, double lo, double hi, int n, const double* C, double* out) {
  for (int i = 0; i <= n; ++i)
    if (x == node(lo, hi, n, i, C)) {
      for (int j = 0; j <= n; ++j) out[j] = i == j ? 1.0 : 0.0;
      return;
    }
  double den = 0.0;
  for (int i = 0; i <= n; ++i) {  // the terms kept in out (a local array would live in local memory)
    const double w = ((i % 2) ? -1.0 : 1.0) * ((i == 0 || i == n) ? 0.5 : 1.0);
    out[i] = w / (x - node(lo, hi, n, i, C));
    den += out[i];
  }
  for (int j = 0; j <= n; ++j) out[j] /= den;
}

}  // namespace

TreeLowPass::TreeLowPass(exec::Space space)
    : space_(space), sets_(space, 0), cos_(space, 0), table_(space, 0), step1_(space, 0), step2_(space, 0) {}

void TreeLowPass::run(const std::vector<Tree>& trees, int p, double theta, const double* near, double* far,
                      bool wait) {
  const exec::Space S = space_;
  if (S == exec::Space::Host) wait = true;
  // The last run's passes done (its descriptors' upload read host_, which this run writes; the
  // solver's calls have waited for them already).
  finish();
  double t = wall_seconds();
  // The sets by chain position j: every (tree, cluster) with more than j sets, in (tree,
  // cluster) order. The clusters of every tree in one range, cut into pieces: each piece
  // counts its clusters per position, the counts' prefix gives each piece its place in every
  // position, and the pieces write their sets in parallel (the same order as one loop).
  const bool par = parallel_setup();
  const int nt = static_cast<int>(trees.size());
  std::vector<long> tfirst(nt + 1, 0);  // tree s's clusters: [tfirst[s], tfirst[s+1])
  for (int s = 0; s < nt; ++s)
    tfirst[s + 1] = tfirst[s] + std::max<long>(static_cast<long>(trees[s].l->first.size()), 1) - 1;
  const long ncl = tfirst[nt];
  const int npieces = static_cast<int>(std::min<long>(std::max<long>(ncl / 64, 1), 4L * exec::host_threads()));
  constexpr int kPos = tree::kTreeMaxDegree + 1;  // positions: at most p − 1 sets a cluster
  std::vector<long> cnt(size_t(npieces) * kPos, 0);
  auto piece = [&](int q) { return std::pair<long, long>(ncl * q / npieces, ncl * (q + 1) / npieces); };
  auto tree_of = [&](long g) {  // the tree holding cluster index g
    return static_cast<int>(std::upper_bound(tfirst.begin(), tfirst.end(), g) - tfirst.begin()) - 1;
  };
  auto sets_of = [&](long g, int& s, int& c) {
    s = tree_of(g);
    c = static_cast<int>(g - tfirst[s]);
    const std::vector<int>& f = trees[s].l->first;
    return f[c + 1] - f[c];
  };
#pragma omp parallel for schedule(static) if (par)
  for (int q = 0; q < npieces; ++q) {
    const auto [g0, g1] = piece(q);
    long* n = &cnt[size_t(q) * kPos];
    for (long g = g0; g < g1; ++g) {
      int s, c;
      const int k = sets_of(g, s, c);
      for (int j = 0; j < k; ++j) ++n[j];
    }
  }
  int npos = 0;
  for (int j = 0; j < kPos; ++j)
    for (int q = 0; q < npieces; ++q)
      if (cnt[size_t(q) * kPos + j] > 0) npos = std::max(npos, j + 1);
  std::vector<long> level(npos + 1, 0);  // first set of each position
  std::vector<long> at(size_t(npieces) * kPos, 0);  // each piece's first set in each position
  for (int j = 0; j < npos; ++j) {
    long a = level[j];
    for (int q = 0; q < npieces; ++q) {
      at[size_t(q) * kPos + j] = a;
      a += cnt[size_t(q) * kPos + j];
    }
    level[j + 1] = a;
  }
  sets = level.back();
  if (sets == 0) {
    setup_s = upload_s = kernel_s = 0;
    return;
  }
  static_assert(std::is_trivially_copyable_v<Set>, "the sets live in raw page-locked memory");
  // Grown by a quarter again: pinning is slow, and the count changes a little from call to call.
  if (host_.size() < sets * sizeof(Set)) host_.reserve((sets + sets / 4) * sizeof(Set));
  Set* host = reinterpret_cast<Set*>(host_.data());
#pragma omp parallel for schedule(static) if (par)
  for (int pc = 0; pc < npieces; ++pc) {
    const auto [g0, g1] = piece(pc);
    long* w = &at[size_t(pc) * kPos];
    for (long g = g0; g < g1; ++g) {
      int s, c;
      const int nk = sets_of(g, s, c);
      const Tree& T = trees[s];
      const tree::SourceTree& st = *T.t;
      const tree::LowSets& l = *T.l;
      const search::Cluster& C = st.clusters[c];
      for (int j = 0; j < nk; ++j) {
        const int k = l.first[c] + j;
        Set& q = host[w[j]++];
        int P[3] = {0, 0, 0};
        const tree::LowFrom from = tree::low_from(st, l, c, k, p, theta, P);
        for (int d = 0; d < 3; ++d) {
          q.lo[d] = C.lo[d];
          q.hi[d] = C.hi[d];
          q.D[d] = static_cast<signed char>(l.degrees[3 * k + d]);
          q.P[d] = static_cast<signed char>(P[d]);
        }
        q.out = T.low + l.start[k];
        q.m = l.count[k];
        q.in_near = 0;
        switch (from) {
          case tree::LowFrom::PreviousSet:
            q.grid = 1, q.src = T.low + l.start[k - 1], q.stride = q.n = l.count[k - 1];
            break;
          case tree::LowFrom::Proxies:
          case tree::LowFrom::ProxyPoints:
            q.grid = from == tree::LowFrom::Proxies;
            q.src = T.far + st.proxy_start[c], q.stride = q.n = st.proxy_count[c];
            break;
          case tree::LowFrom::Sources:
            q.grid = 0, q.in_near = 1, q.src = T.near + C.begin, q.stride = st.n, q.n = static_cast<int>(C.count());
            break;
        }
      }
    }
  }
  // Per position: each set's first item, first basis row and table offset, running sums over
  // the position's sets (per piece in parallel, then the pieces' totals added).
  std::vector<long> nrows(npos), nstep1(npos), nstep2(npos);  // per position: basis rows, steps' items
  long table = 0, step1 = 0, step2 = 0;  // the largest position's table and steps, doubles
  for (int j = 0; j < npos; ++j) {
    const long n = level[j + 1] - level[j];
    Set* L = host + level[j];
    const int np = static_cast<int>(std::min<long>(std::max<long>(n / 64, 1), 4L * exec::host_threads()));
    std::vector<std::array<long, 5>> sum(np + 1, {0, 0, 0, 0, 0});  // items, rows, table, steps' items per piece
#pragma omp parallel for schedule(static) if (par)
    for (int q = 0; q < np; ++q) {
      std::array<long, 5> c{0, 0, 0, 0, 0};
      for (long i = n * q / np; i < n * (q + 1) / np; ++i) {
        const Set& x = L[i];
        c[0] += x.m;
        for (int d = 0; d < 3; ++d) {
          c[1] += rows(x, d);
          c[2] += long(rows(x, d)) * (x.D[d] + 1);
        }
        c[3] += step1_items(x);
        c[4] += step2_items(x);
      }
      sum[q + 1] = c;
    }
    for (int q = 0; q < np; ++q)
      for (int e = 0; e < 5; ++e) sum[q + 1][e] += sum[q][e];
#pragma omp parallel for schedule(static) if (par)
    for (int q = 0; q < np; ++q) {
      std::array<long, 5> c = sum[q];
      for (long i = n * q / np; i < n * (q + 1) / np; ++i) {
        Set& x = L[i];
        x.item = c[0];
        x.item_a = c[1];
        x.tab = c[2];
        x.item1 = c[3];
        x.item2 = c[4];
        c[0] += x.m;
        for (int d = 0; d < 3; ++d) {
          c[1] += rows(x, d);
          c[2] += long(rows(x, d)) * (x.D[d] + 1);
        }
        c[3] += step1_items(x);
        c[4] += step2_items(x);
      }
    }
    nrows[j] = sum[np][1];
    table = std::max(table, sum[np][2]);
    nstep1[j] = sum[np][3];
    nstep2[j] = sum[np][4];
    step1 = std::max(step1, 3 * nstep1[j]);
    step2 = std::max(step2, 3 * nstep2[j]);
  }
  const double ts = wall_seconds();
  setup_s = ts - t;
  t = ts;
  // The sets and, once, the cosines of the host's Chebyshev points.
  const Set* SS = host;
  if (S != exec::Space::Host) {
    exec::grow(sets_, S, sets);
    // Not waiting: queued behind the work before it (host_ is page-locked and not written again
    // before the next run, which finishes this one first).
    if (wait) exec::copy(sets_.data(), S, host, exec::Space::Host, sets);
    else exec::copy_async(sets_.data(), S, host, exec::Space::Host, sets);
    SS = sets_.data();
  }
  if (cos_.size() == 0) {
    std::vector<double> c(kW * kW, 0.0);
    for (int n = 1; n < kW; ++n)
      for (int j = 0; j <= n; ++j) c[n * kW + j] = std::cos(M_PI * j / n);
    cos_ = exec::Buffer<double>(S, c.size());
    exec::copy(cos_.data(), S, c.data(), exec::Space::Host, c.size());
  }
  const double* C = cos_.data();
  exec::grow(table_, S, std::max(table, 1L));  // (before the events: a larger table waits for the device)
  exec::grow(step1_, S, std::max(step1, 1L));
  exec::grow(step2_, S, std::max(step2, 1L));
  if (wait) {
    exec::fence(S);
  } else {
    if (!clock_) clock_ = exec::make_cuda_event_clock();
    clock_->recycle();
    ev0_ = clock_->record();
  }
  const double t1 = wall_seconds();
  upload_s = t1 - t;
  double* tab = table_.data();
  double* s1 = step1_.data();
  double* s2 = step2_.data();
  for (int j = 0; j < npos; ++j) {
    const int n = static_cast<int>(level[j + 1] - level[j]);
    const Set* L = SS + level[j];
    // (a) The basis tables: per set and dimension d, row y holds L_0 … L_{D_d} of the set's
    // degree-D_d basis at the source grid's point y (grid) or at source y's coordinate d
    // (points). Each row is shared by every output proxy of the set: the item per proxy
    // below reads it instead of recomputing it (m times the basis evaluations before).
    exec::parallel_for(S, nrows[j], [=] BEATNIK_HOST_DEVICE(long i) {
      const TreeLowPass::Set& q = L[exec::last_at_most(L, 0, n, i, &TreeLowPass::Set::item_a)];
      int r = static_cast<int>(i - q.item_a), d = 0;
      long off = q.tab;
      while (r >= rows(q, d)) {
        r -= rows(q, d);
        off += long(rows(q, d)) * (q.D[d] + 1);
        ++d;
      }
      const double* src = (q.in_near ? near : far) + q.src;
      const double x = q.grid ? node(q.lo[d], q.hi[d], q.P[d], r, C) : src[d * q.stride + r];
      basis_row(x, q.lo[d], q.hi[d], q.D[d], C, tab + off + long(r) * (q.D[d] + 1));
    });
    // (b1) Grid sources, the first step: q̂ contracted over e against the set's e' basis, per
    // (a, b, e').
    if (nstep1[j] > 0)
      exec::parallel_for(S, nstep1[j], [=] BEATNIK_HOST_DEVICE(long i) {
        const TreeLowPass::Set& q = L[exec::last_at_most(L, 0, n, i, &TreeLowPass::Set::item1)];
        const int p1 = q.P[1] + 1, p2 = q.P[2] + 1, w2 = q.D[2] + 1;
        const long cnt = step1_items(q);
        const int idx = static_cast<int>(i - q.item1), a = idx / (p1 * w2), b = (idx / w2) % p1, e2 = idx % w2;
        const double* T2 = tab + basis_start(q, 2) + e2;
        const double* src = (q.in_near ? near : far) + q.src + (long(a) * p1 + b) * p2;
        const long st = q.stride;
        double v0 = 0.0, v1 = 0.0, v2 = 0.0;
        for (int e = 0; e < p2; ++e) {
          const double f = T2[e * w2];
          v0 += f * src[3 * st + e];
          v1 += f * src[4 * st + e];
          v2 += f * src[5 * st + e];
        }
        double* o = s1 + 3 * q.item1 + idx;
        o[0] = v0;
        o[cnt] = v1;
        o[2 * cnt] = v2;
      });
    // (b2) The second step: over b against the set's b' basis, per (a, b', e').
    if (nstep2[j] > 0)
      exec::parallel_for(S, nstep2[j], [=] BEATNIK_HOST_DEVICE(long i) {
        const TreeLowPass::Set& q = L[exec::last_at_most(L, 0, n, i, &TreeLowPass::Set::item2)];
        const int p1 = q.P[1] + 1, w1 = q.D[1] + 1, w2 = q.D[2] + 1;
        const long cnt1 = step1_items(q), cnt = step2_items(q);
        const int idx = static_cast<int>(i - q.item2), a = idx / (w1 * w2), b2 = (idx / w2) % w1, e2 = idx % w2;
        const double* T1 = tab + basis_start(q, 1) + b2;
        const double* in = s1 + 3 * q.item1 + long(a) * p1 * w2 + e2;
        double v0 = 0.0, v1 = 0.0, v2 = 0.0;
        for (int b = 0; b < p1; ++b) {
          const double f = T1[b * w1];
          v0 += f * in[b * w2];
          v1 += f * in[cnt1 + b * w2];
          v2 += f * in[2 * cnt1 + b * w2];
        }
        double* o = s2 + 3 * q.item2 + idx;
        o[0] = v0;
        o[cnt] = v1;
        o[2 * cnt] = v2;
      });
    // (b) An item per output proxy: its point and its strengths (grid sources: the last step,
    // over a; point sources: the triple product summed in source order, as the host).
    const Set& last = host[level[j] + n - 1];
    exec::parallel_for(S, last.item + last.m, [=] BEATNIK_HOST_DEVICE(long i) {
      const TreeLowPass::Set& q = L[exec::last_at_most(L, 0, n, i, &TreeLowPass::Set::item)];
      const int m = q.m, idx = static_cast<int>(i - q.item), n1 = q.D[1] + 1, n2 = q.D[2] + 1;
      const int ix[3] = {idx / (n1 * n2), (idx / n2) % n1, idx % n2};
      double* o = far + q.out;
      for (int d = 0; d < 3; ++d) o[d * m + idx] = node(q.lo[d], q.hi[d], q.D[d], ix[d], C);
      const int w0 = q.D[0] + 1, w1 = n1, w2 = n2;
      const double* T0 = tab + basis_start(q, 0) + ix[0];
      double v0 = 0.0, v1 = 0.0, v2 = 0.0;
      if (q.grid) {
        const long cnt2 = step2_items(q), plane = long(w1) * w2;
        const double* in = s2 + 3 * q.item2 + long(ix[1]) * w2 + ix[2];
        for (int a = 0; a <= q.P[0]; ++a) {
          const double f = T0[a * w0];
          v0 += f * in[a * plane];
          v1 += f * in[cnt2 + a * plane];
          v2 += f * in[2 * cnt2 + a * plane];
        }
      } else {
        const double* src = (q.in_near ? near : far) + q.src;
        const long st = q.stride;
        const double* T1 = tab + basis_start(q, 1) + ix[1];
        const double* T2 = tab + basis_start(q, 2) + ix[2];
        for (long k = 0; k < q.n; ++k) {
          const double f = T0[k * w0] * T1[k * w1] * T2[k * w2];
          v0 += f * src[3 * st + k];
          v1 += f * src[4 * st + k];
          v2 += f * src[5 * st + k];
        }
      }
      o[3 * m + idx] = v0;
      o[4 * m + idx] = v1;
      o[5 * m + idx] = v2;
    });
  }
  if (!wait) {  // the passes' events; finish() reads them
    ev1_ = clock_->record();
    pending_ = true;
    kernel_s = 0;
    return;
  }
  exec::fence(S);
  kernel_s = wall_seconds() - t1;
}

void TreeLowPass::finish() {
  if (!pending_) return;
  pending_ = false;
  kernel_s = clock_->seconds_between(ev0_, ev1_);
}

}  // namespace beatnik::model
