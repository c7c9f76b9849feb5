// Lower-degree proxy sets: layout and host strengths (tree_low.hpp).
#include "beatnik/model/tree_low.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "beatnik/base/env.hpp"
#include "beatnik/model/tree_interp.hpp"

namespace beatnik::model::tree {

// Degree d < p is as accurate at ratio ρ = (r_B + r_C)/|Δ| < θ^{p/d} (ρ^d ≤ θ^p) as degree p
// at θ, with (d+1)² instead of (p+1)² proxies per layer. Each set has at most ¾ the proxies of
// the previous one (the degree-p set, or the cluster's sources).
// In parallel: each cluster's chosen degrees as a bit mask, then the sets in cluster order.
void low_layout(const SourceTree& t, int p, double theta, LowSets& l) {
  const auto& cl = t.clusters;
  const int nc = static_cast<int>(cl.size());
  std::vector<double> th(std::max(p, 1), 0.0), lth(std::max(p, 1), 0.0);  // θ^{p/d} and its log
  for (int d = p - 1; d >= 1; --d) th[d] = std::pow(theta, double(p) / d);
  for (int d = p - 1; d >= 1; --d) lth[d] = grid_log_theta(th[d]);
  std::vector<unsigned> chosen(nc, 0u);  // bit d: the set of degree d (p ≤ kTreeMaxDegree < 32)
  // The side degrees of the first pass, read back by the second for the chosen sets (per
  // cluster, by degree): each costs logarithms, most of the layout's time. Kept from call to
  // call (the second pass reads only what the first wrote).
  const int P = std::max(p, 1);
  thread_local std::vector<std::array<int, 3>> dgs;
  if (dgs.size() < size_t(nc) * P) dgs.resize(size_t(nc) * P);
  std::array<int, 3>* const D = dgs.data();  // (the calling thread's: the loops' threads have their own dgs)
  // BEATNIK_TREE_LOW_RATIO (percent; measurement knob): the most a set may have of the previous.
  static const long ratio = env::integer("BEATNIK_TREE_LOW_RATIO", 10, 100).value_or(75);
  l.first.assign(nc + 1, 0);
#pragma omp parallel for schedule(dynamic, 256)
  for (int c = 0; c < nc; ++c) {
    const bool prox = t.proxies_of(c);
    if (!(theta > 0.0 && theta < 1.0) || !(prox || t.full[c])) continue;
    long budget = prox ? t.proxy_count[c] : cl[c].count();
    int n = 0;
    for (int d = p - 1; d >= 1; --d) {
      int* dg = D[size_t(c) * P + d].data();
      const int m = grid_degrees(cl[c], d, th[d], lth[d], dg);
      if (100L * m > ratio * budget) continue;
      chosen[c] |= 1u << d;
      budget = m;
      ++n;
    }
    l.first[c + 1] = n;
  }
  for (int c = 0; c < nc; ++c) l.first[c + 1] += l.first[c];
  const int ns = l.first[nc];
  l.start.resize(ns);
  l.count.resize(ns);
  l.theta.resize(ns);
  l.degrees.resize(3 * size_t(ns));
#pragma omp parallel for schedule(dynamic, 256)
  for (int c = 0; c < nc; ++c) {
    int k = l.first[c];
    for (int d = p - 1; d >= 1; --d)
      if (chosen[c] >> d & 1u) {
        const std::array<int, 3>& dg = D[size_t(c) * P + d];
        std::copy(dg.begin(), dg.end(), &l.degrees[3 * size_t(k)]);
        l.count[k] = (dg[0] + 1) * (dg[1] + 1) * (dg[2] + 1);
        l.theta[k] = th[d];
        ++k;
      }
  }
  long total = 0;
  for (int k = 0; k < ns; ++k) {
    l.start[k] = total;
    total += 6L * l.count[k];
  }
  l.pts.clear();
  l.pts.resize(total);  // not initialised (NoInit)
}

// Degree-d interpolation reproduces degree-d polynomials exactly, so a set coarsened from a
// finer grid equals the set from the sources up to round-off, with far fewer operations.
LowFrom low_from(const SourceTree& t, const LowSets& l, int c, int k, int p, double theta, int* P) {
  const int* D = &l.degrees[3 * k];
  if (k > l.first[c]) {
    const int* prev = &l.degrees[3 * (k - 1)];
    if (D[0] <= prev[0] && D[1] <= prev[1] && D[2] <= prev[2]) {
      std::copy_n(prev, 3, P);
      return LowFrom::PreviousSet;
    }
  }
  if (!t.proxies_of(c)) return LowFrom::Sources;
  if (grid_degrees(t.clusters[c], p, theta, P) == t.proxy_count[c] && D[0] <= P[0] && D[1] <= P[1] && D[2] <= P[2])
    return LowFrom::Proxies;
  return LowFrom::ProxyPoints;
}

void low_strengths(const SourceTree& t, int p, double theta, LowSets& l) {
  const auto& cl = t.clusters;
  const int nc = static_cast<int>(cl.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (int c = 0; c < nc; ++c)
    for (int k = l.first[c]; k < l.first[c + 1]; ++k) {
      double* out = &l.pts[l.start[k]];
      const int* D = &l.degrees[3 * k];
      int P[3];
      switch (low_from(t, l, c, k, p, theta, P)) {
        case LowFrom::PreviousSet:
          coarsen(cl[c], P, D, &l.pts[l.start[k - 1]], l.count[k - 1], out, l.count[k]);
          break;
        case LowFrom::Proxies:
          coarsen(cl[c], P, D, &t.proxies[t.proxy_start[c]], t.proxy_count[c], out, l.count[k]);
          break;
        case LowFrom::ProxyPoints: {
          const int m = t.proxy_count[c];
          interpolate(cl[c], D, &t.proxies[t.proxy_start[c]], m, 0, m, out, l.count[k]);
          break;
        }
        case LowFrom::Sources:
          interpolate(cl[c], D, t.pts.data(), t.n, cl[c].begin, cl[c].end, out, l.count[k]);
          break;
      }
    }
}

}  // namespace beatnik::model::tree
