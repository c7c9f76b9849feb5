#include "beatnik/model/tree_br_solver.hpp"

#include <algorithm>
#include <cmath>

#include "beatnik/base/error.hpp"
#include "beatnik/model/br_block.hpp"
#include "beatnik/model/br_kernel.hpp"
#include "beatnik/model/br_particles.hpp"

namespace beatnik::model {
namespace {

// The nearest image of separation r as an integer (−1, 0, 1; image_centre / L).
int nearest(double r, double L, double half) {
  const double c = image_centre(r, L, half);
  return c > 0.0 ? 1 : (c < 0.0 ? -1 : 0);
}

enum class Cover { None, Partial, Full };

// Which pairs of a batch (box lo_b..hi_b) and a cluster (lo_c..hi_c) take image m along one
// dimension: every pair, some or none (pair (t, s) takes m when |m − a₀(t − s)| ≤ K).
Cover cover(double lo_b, double hi_b, double lo_c, double hi_c, int m, const BRImages& img, int d) {
  if (img.period[d] <= 0.0) return Cover::Full;  // a single image, m = 0
  const double L = img.period[d], h = img.centring_half(d);
  const int a_lo = nearest(lo_b - hi_c, L, h), a_hi = nearest(hi_b - lo_c, L, h);
  const int k = img.k;
  if (m - k <= a_lo && a_hi <= m + k) return Cover::Full;
  if (a_hi < m - k || a_lo > m + k) return Cover::None;
  return Cover::Partial;
}

// Interpolation degree along a side of width w of a box whose longest side is wmax: p on the
// longest side, fewer on a thin side, so that (w/R)^{p_d} ≈ (wmax/R)^p at R = wmax/θ; 0 (one
// point) on a flat side.
int side_degree(int p, double theta, double w, double wmax) {
  if (!(w > 0.0) || !(wmax > 0.0)) return 0;
  if (w >= wmax || !(theta > 0.0 && theta < 1.0)) return p;
  const double ratio = std::log(theta) / std::log(theta * w / wmax);
  return std::clamp(static_cast<int>(std::ceil(p * ratio)), 0, p);
}

// Chebyshev points of the second kind on [lo, hi] (degree n: n + 1 points) and their
// barycentric weights.
void chebyshev(double lo, double hi, int n, double* s, double* w) {
  const double c = 0.5 * (lo + hi), r = 0.5 * (hi - lo);
  if (n == 0) {
    s[0] = c;
    w[0] = 1.0;
    return;
  }
  for (int j = 0; j <= n; ++j) {
    s[j] = c + r * std::cos(M_PI * j / n);
    w[j] = ((j % 2) ? -1.0 : 1.0) * ((j == 0 || j == n) ? 0.5 : 1.0);
  }
}

// Lagrange basis values L_j(x), j = 0..n, by the barycentric formula.
void lagrange(double x, int n, const double* s, const double* w, double* out) {
  for (int j = 0; j <= n; ++j)
    if (x == s[j]) {
      for (int i = 0; i <= n; ++i) out[i] = i == j ? 1.0 : 0.0;
      return;
    }
  double den = 0.0;
  for (int j = 0; j <= n; ++j) {
    out[j] = w[j] / (x - s[j]);
    den += out[j];
  }
  for (int j = 0; j <= n; ++j) out[j] /= den;
}

constexpr int kMaxDegree = kTreeMaxDegree;

}  // namespace

TreeParameters tree_parameters(double tolerance) {
  if (tolerance >= 1e-3) return {0.5, 4};
  if (tolerance >= 1e-6) return {0.5, 10};
  if (tolerance >= 1e-9) return {0.4, 12};
  return {0.3, 16};
}

TreeBRSolver::TreeBRSolver(const mesh::SurfaceMesh& mesh, exec::Space space, const BRSettings& settings,
                           double epsilon, comm::CommStats*, Timers* timers)
    : mesh_(mesh), settings_(settings), eps_(epsilon), timers_(timers) {
  if (space != exec::Space::Host) throw NotAvailable("-S tree is not available yet on the device (-x cuda)");
  if (mesh.grid().size() > 1)
    throw NotAvailable("-S tree runs on one rank only for now (the locally essential tree exchange is not available yet)");
  if (settings.tree_degree < 0 || settings.tree_degree > kMaxDegree)
    throw InputError("--tree-degree must lie in 0.." + std::to_string(kMaxDegree));
  const auto& geo = mesh.geometry();
  images_.k = settings.images;
  images_.centred = settings.centred;
  for (int d = 0; d < 2; ++d) images_.period[d] = geo.periodic[d] ? geo.period[d] : 0.0;
  n_ = mesh.layout().owned_count();
  pts_.resize(6 * n_);
  sorted_.resize(6 * n_);
}

std::vector<TreeLoad> TreeBRSolver::take_loads() {
  std::vector<TreeLoad> out;
  out.swap(loads_);
  return out;
}

size_t TreeBRSolver::buffer_bytes() const {
  size_t b = (pts_.size() + sorted_.size() + proxies_.size() + acc_near_.size() + acc_far_.size()) * sizeof(double);
  b += proxy_start_.size() * sizeof(long) + proxy_count_.size() * sizeof(int);
  for (const auto* l : {&near_, &far_})
    for (const auto& v : *l) b += v.size() * sizeof(Term);
  return b;
}

void TreeBRSolver::velocity(const mesh::Field& state, const mesh::Field& omega, const mesh::Field& out) {
  load_ = TreeLoad{};
  load_.particles = n_;
  {
    Timers::Scope t(timers_, "br.tree.build");
    pack_br_particles(mesh_, settings_, exec::Space::Host, state, omega, pts_.data());
    build();
  }
  {
    Timers::Scope t(timers_, "br.tree.upward");
    upward();
  }
  {
    Timers::Scope t(timers_, "br.tree.compute");
    {
      Timers::Scope l(timers_, "br.tree.compute.lists");
      lists();
    }
    {
      Timers::Scope l(timers_, "br.tree.compute.near");
      near();
    }
    {
      Timers::Scope l(timers_, "br.tree.compute.far");
      far();
    }
  }
  const mesh::FieldView o = out.view();
  const int nj = mesh_.layout().nj;
  const std::vector<long>& order = tree_.order();
  const long n = n_;
#pragma omp parallel for
  for (long q = 0; q < n; ++q) {
    const long k = order[q];
    const int i = static_cast<int>(k / nj), j = static_cast<int>(k % nj);
    for (int c = 0; c < 3; ++c) o(c, i, j) = acc_near_[c * n + q] + acc_far_[c * n + q];
  }
  loads_.push_back(load_);
  ++totals_.calls;
  totals_.direct_pairs += load_.direct_pairs;
  totals_.cluster_terms += load_.cluster_terms;
  totals_.proxy_pairs += load_.proxy_pairs;
}

// The tree over the positions, and the particles in tree order.
void TreeBRSolver::build() {
  const long n = n_;
  tree_.build(pts_.data(), pts_.data() + n, pts_.data() + 2 * n, n, settings_.tree_leaf);
  const std::vector<long>& order = tree_.order();
#pragma omp parallel for
  for (long q = 0; q < n; ++q)
    for (int c = 0; c < 6; ++c) sorted_[c * n + q] = pts_[c * n + order[q]];
  load_.clusters = static_cast<long>(tree_.clusters().size());
}

// Proxy sources of every cluster with more sources than proxies, straight from its sources.
void TreeBRSolver::upward() {
  const auto& cl = tree_.clusters();
  const int nc = static_cast<int>(cl.size());
  const int p = settings_.tree_degree;
  const double theta = settings_.tree_theta;
  proxy_start_.assign(nc, -1);
  proxy_count_.assign(nc, 0);
  long total = 0;
  std::vector<int> deg(3 * size_t(nc));
  for (int c = 0; c < nc; ++c) {
    double wmax = 0.0;
    for (int d = 0; d < 3; ++d) wmax = std::max(wmax, cl[c].hi[d] - cl[c].lo[d]);
    int m = 1;
    for (int d = 0; d < 3; ++d) {
      deg[3 * c + d] = side_degree(p, theta, cl[c].hi[d] - cl[c].lo[d], wmax);
      m *= deg[3 * c + d] + 1;
    }
    if (theta > 0.0 && cl[c].count() > m) {
      proxy_start_[c] = total;
      proxy_count_[c] = m;
      total += 6L * m;
    }
  }
  proxies_.assign(total, 0.0);
  const long n = n_;
  const double* xs = sorted_.data();
#pragma omp parallel for schedule(dynamic, 1)
  for (int c = 0; c < nc; ++c) {
    if (proxy_start_[c] < 0) continue;
    const int m = proxy_count_[c];
    const int* dg = &deg[3 * c];
    double s[3][kMaxDegree + 1], w[3][kMaxDegree + 1], L[3][kMaxDegree + 1];
    for (int d = 0; d < 3; ++d) chebyshev(cl[c].lo[d], cl[c].hi[d], dg[d], s[d], w[d]);
    double* px = &proxies_[proxy_start_[c]];
    const int n1 = dg[1] + 1, n2 = dg[2] + 1;
    for (int a = 0; a <= dg[0]; ++a)
      for (int b = 0; b <= dg[1]; ++b)
        for (int e = 0; e <= dg[2]; ++e) {
          const int idx = (a * n1 + b) * n2 + e;
          px[idx] = s[0][a];
          px[m + idx] = s[1][b];
          px[2 * m + idx] = s[2][e];
        }
    double* q = px + 3 * m;
    for (long k = cl[c].begin; k < cl[c].end; ++k) {
      for (int d = 0; d < 3; ++d) lagrange(xs[d * n + k], dg[d], s[d], w[d], L[d]);
      const double qk[3] = {xs[3 * n + k], xs[4 * n + k], xs[5 * n + k]};
      for (int a = 0; a <= dg[0]; ++a)
        for (int b = 0; b <= dg[1]; ++b) {
          const double lab = L[0][a] * L[1][b];
          for (int e = 0; e <= dg[2]; ++e) {
            const double f = lab * L[2][e];
            const int idx = (a * n1 + b) * n2 + e;
            for (int r = 0; r < 3; ++r) q[r * m + idx] += f * qk[r];
          }
        }
    }
  }
}

// The interaction lists of every batch: each image the batch's pairs can take, down the tree.
void TreeBRSolver::lists() {
  const std::vector<int>& leaves = tree_.leaves();
  const int nb = static_cast<int>(leaves.size());
  near_.resize(nb);
  far_.resize(nb);
  int lo[2], hi[2];
  for (int d = 0; d < 2; ++d) {
    const int reach = images_.period[d] > 0.0 ? images_.k + (images_.centred ? 1 : 0) : 0;
    lo[d] = -reach;
    hi[d] = reach;
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (int b = 0; b < nb; ++b) {
    near_[b].clear();
    far_[b].clear();
    for (int mx = lo[0]; mx <= hi[0]; ++mx)
      for (int my = lo[1]; my <= hi[1]; ++my) visit(leaves[b], 0, mx, my, false, near_[b], far_[b]);
  }
}

void TreeBRSolver::visit(int batch, int cluster, int mx, int my, bool full, std::vector<Term>& near,
                         std::vector<Term>& far) const {
  const auto& cl = tree_.clusters();
  const search::Cluster &B = cl[batch], &C = cl[cluster];
  if (!full) {
    const Cover cx = cover(B.lo[0], B.hi[0], C.lo[0], C.hi[0], mx, images_, 0);
    const Cover cy = cover(B.lo[1], B.hi[1], C.lo[1], C.hi[1], my, images_, 1);
    if (cx == Cover::None || cy == Cover::None) return;
    if (cx == Cover::Partial || cy == Cover::Partial) {
      if (C.leaf()) {
        near.push_back({cluster, mx, my, true});
      } else {
        for (int c : C.child) visit(batch, c, mx, my, false, near, far);
      }
      return;
    }
  }
  // Every pair takes this image: the separation test on the shifted cluster.
  const double ox = mx * images_.period[0], oy = my * images_.period[1];
  const double dx = B.centre(0) - C.centre(0) - ox, dy = B.centre(1) - C.centre(1) - oy, dz = B.centre(2) - C.centre(2);
  const double R = std::sqrt(dx * dx + dy * dy + dz * dz);
  if (B.radius() + C.radius() < settings_.tree_theta * R) {
    if (proxy_start_[cluster] >= 0) far.push_back({cluster, mx, my, false});
    else near.push_back({cluster, mx, my, false});
  } else if (C.leaf()) {
    near.push_back({cluster, mx, my, false});
  } else {
    for (int c : C.child) visit(batch, c, mx, my, true, near, far);
  }
}

// Direct sums: every target of a batch against the sources of its near clusters.
void TreeBRSolver::near() {
  const long n = n_;
  acc_near_.assign(3 * n, 0.0);
  const double *xs = sorted_.data(), *ys = xs + n, *zs = ys + n, *qx = zs + n, *qy = qx + n, *qz = qy + n;
  const auto& cl = tree_.clusters();
  const std::vector<int>& leaves = tree_.leaves();
  const int nb = static_cast<int>(leaves.size());
  const BRImages img = images_;
  const double L0 = img.period[0], L1 = img.period[1], h0 = img.centring_half(0), h1 = img.centring_half(1);
  const int K = img.k;
  const double eps = eps_;
  long pairs = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : pairs)
  for (int b = 0; b < nb; ++b) {
    const search::Cluster& B = cl[leaves[b]];
    for (long t = B.begin; t < B.end; ++t) {
      double u[3] = {0.0, 0.0, 0.0};
      for (const Term& e : near_[b]) {
        const search::Cluster& C = cl[e.cluster];
        const double ox = e.mx * L0, oy = e.my * L1;
        if (!e.partial) {
          br_tile_host(xs[t], ys[t], zs[t], xs, ys, zs, qx, qy, qz, C.begin, C.end, ox, oy, 0.0, 0.0, 0.0, 0.0,
                       eps, u);
          pairs += C.count();
          continue;
        }
        // The window's edge: only the pairs whose nearest image is within K of m.
        for (long s = C.begin; s < C.end; ++s) {
          if (L0 > 0.0 && std::abs(e.mx - nearest(xs[t] - xs[s], L0, h0)) > K) continue;
          if (L1 > 0.0 && std::abs(e.my - nearest(ys[t] - ys[s], L1, h1)) > K) continue;
          br_pair(xs[t], ys[t], zs[t], xs[s] + ox, ys[s] + oy, zs[s], qx[s], qy[s], qz[s], eps, u[0], u[1], u[2]);
          ++pairs;
        }
      }
      for (int c = 0; c < 3; ++c) acc_near_[c * n + t] = u[c];
    }
  }
  load_.direct_pairs = pairs;
}

// Far field: every target of a batch against the proxies of its far clusters.
void TreeBRSolver::far() {
  const long n = n_;
  acc_far_.assign(3 * n, 0.0);
  const double *xs = sorted_.data(), *ys = xs + n, *zs = ys + n;
  const auto& cl = tree_.clusters();
  const std::vector<int>& leaves = tree_.leaves();
  const int nb = static_cast<int>(leaves.size());
  const double L0 = images_.period[0], L1 = images_.period[1];
  const double eps = eps_;
  long terms = 0, pairs = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : terms, pairs)
  for (int b = 0; b < nb; ++b) {
    const search::Cluster& B = cl[leaves[b]];
    for (long t = B.begin; t < B.end; ++t) {
      double u[3] = {0.0, 0.0, 0.0};
      for (const Term& e : far_[b]) {
        const int m = proxy_count_[e.cluster];
        const double* px = &proxies_[proxy_start_[e.cluster]];
        br_tile_host(xs[t], ys[t], zs[t], px, px + m, px + 2 * m, px + 3 * m, px + 4 * m, px + 5 * m, 0, m,
                     e.mx * L0, e.my * L1, 0.0, 0.0, 0.0, 0.0, eps, u);
        pairs += m;
      }
      terms += static_cast<long>(far_[b].size());
      for (int c = 0; c < 3; ++c) acc_far_[c * n + t] = u[c];
    }
  }
  load_.cluster_terms = terms;
  load_.proxy_pairs = pairs;
}

}  // namespace beatnik::model
