// The tree solver's dual traversal (--tree-traversal dual; docs/tree.md "Cluster–cluster
// terms", and "The dual traversal on the device" for -x cuda's runs: compute_device): this rank's target clusters B (its own tree, whose leaves are the
// batches) descend together with the source trees, per image. A source cluster C taken by every
// pair of an internal B and well separated from B becomes a cluster–cluster term: its far field
// is summed once at B's Chebyshev points (cc_sums) and interpolated to B's targets after the
// traversal (down). Where that does not pay — B with no more targets than target points, or B's
// leaves would take C for fewer pairs — C goes down to B's leaves; where the pair is not
// separated or a window straddles it, the larger of B and C is split; at a leaf B the particle–cluster
// walk (visit) takes over with the same rules as the single traversal (near, far, edge terms,
// lower-degree sets). dual_node / examine / leaf_visit are the fast form of those decisions (docs/
// tree-log.md "The dual lists, faster"); dual_node_reference / examine_reference (dual_reference,
// BEATNIK_TREE_DUAL_LISTS=reference) the straightforward one, kept as the lists' reference: the
// same terms in the same order (test DualFastListsEqualTheReference).
#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <utility>

#include "beatnik/base/env.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/model/br_targets_host.hpp"
#include "beatnik/model/tree_br_solver.hpp"
#include "beatnik/model/tree_down.hpp"
#include "beatnik/model/tree_dual.hpp"
#include "beatnik/model/tree_interp.hpp"
#include "beatnik/model/tree_low.hpp"
#include "beatnik/model/tree_lagrange.hpp"

namespace beatnik::model {
namespace {

// A target grid of degree d < p is taken at kTargetMargin·ρ < θ^{p/d}: its error adds to the
// source side's (TOL 1e-9, 256², 4 ranks: 3.3e-10 without the margin, 2.2e-10 with it, 1.5e-10
// single; the margin on the acceptance itself (ρ < θ / 1.5) left almost no terms).
constexpr double kTargetMargin = 1.5;

}  // namespace

// The lists of every batch and every internal target cluster's cluster–cluster terms: from the
// roots, every source tree at every image; each target cluster hands its children the pairs it
// could not settle, in a fixed order (the lists do not depend on the thread count).
// collect: the leaves keep their pairs in pend_ (dual_terms_kernel) instead of walking them.
void TreeBRSolver::dual_lists(bool collect) {
  if (!computes(gate_)) return gate_->stand_in("br.tree.compute.lists");
  dual_begin();
  if (batches() == 0) return;
  pend_.resize(batches());
  dual_collect_ = collect;
  const std::vector<Pending> roots = dual_roots();
#pragma omp parallel
#pragma omp single
  {
    if (dual_reference) dual_node_reference(0, roots, 0);
    else dual_node(0, roots);
  }
  dual_collect_ = false;
}

std::vector<long> TreeBRSolver::dual_terms() const {
  std::vector<long> out;
  auto add = [&](const std::vector<Term>& v) {
    out.push_back(static_cast<long>(v.size()));
    for (const Term& e : v)
      out.insert(out.end(), {e.tree, e.cluster, e.mx, e.my, e.partial, e.low, e.axis, e.target_degree});
  };
  for (int b = 0; b < batches(); ++b) {
    add(near_[b]);
    add(far_[b]);
    add(edge_[b]);
  }
  for (const auto& v : cc_) add(v);
  return out;
}

std::vector<TreeBRSolver::Pending> TreeBRSolver::dual_roots() const {
  std::vector<Pending> roots;
  for (int s = 0; s < static_cast<int>(sources_.size()); ++s)
    for (int mx = rules_.lo[0]; mx <= rules_.hi[0]; ++mx)
      for (int my = rules_.lo[1]; my <= rules_.hi[1]; ++my) roots.push_back({s, 0, mx, my, false});
  return roots;
}

// The traversal's tables: lists sized, cc_ cleared, each cluster's batch and parent, the target
// grids' θ per degree, the balls.
void TreeBRSolver::dual_begin() {
  const auto& cl = sources_[0].clusters;
  const int nc = static_cast<int>(cl.size()), nb = batches();
  const std::vector<int>& leaves = tree_.leaves();
  near_.resize(nb);
  far_.resize(nb);
  edge_.resize(nb);
  cc_.resize(nc);
  leaf_of_.assign(nc, -1);
  parent_.assign(nc, -1);
  // In parallel: with -x cuda this is on the host's path to the first sums (1.2 ms serially at
  // 1024² on one H200's host). Each index written by one iteration only.
#pragma omp parallel
  {
#pragma omp for schedule(static) nowait
    for (int c = 0; c < nc; ++c) {
      cc_[c].clear();
      if (!cl[c].leaf())
        for (int k : cl[c].child) parent_[k] = c;
    }
#pragma omp for schedule(static)
    for (int b = 0; b < nb; ++b) leaf_of_[leaves[b]] = b;
  }
  const int p = settings_.tree_degree;
  grid_theta_.assign(p + 1, 0.0);
  for (int d = 1; d <= p; ++d) grid_theta_[d] = std::pow(settings_.tree_theta, double(p) / d);
  if (nb > 0) balls();
  // may_take_cc's slack: 1e-9 of the largest coordinate a centre's difference can involve.
  double scale = 1.0;
  for (const tree::SourceTree& S : sources_) {
    const auto& cs = S.clusters;
    const int n = static_cast<int>(cs.size());
#pragma omp parallel for schedule(static) reduction(max : scale)
    for (int c = 0; c < n; ++c)
      for (int a = 0; a < 3; ++a) scale = std::max({scale, std::abs(cs[c].lo[a]), std::abs(cs[c].hi[a])});
  }
  for (int a = 0; a < 2; ++a)
    scale += std::max(std::abs(rules_.lo[a]), std::abs(rules_.hi[a])) * rules_.images.period[a];
  slack_ = 1e-9 * 2.0 * scale;
  // Each cluster's smallest radius in its subtree (itself included; 0 where not reached). Where
  // every child comes after its parent (the trees built here), one backward sweep gives the same
  // minima as the walk from the root (it also fills the unreached clusters, which are never read).
  rmin_.resize(sources_.size());
  for (size_t s = 0; s < sources_.size(); ++s) {
    const auto& cs = sources_[s].clusters;
    const int n = static_cast<int>(cs.size());
    rmin_[s].assign(n, 0.0);
    if (cs.empty() || nb == 0) continue;
    bool ordered = true;
#pragma omp parallel for schedule(static) reduction(&& : ordered)
    for (int c = 0; c < n; ++c)
      if (!cs[c].leaf()) ordered = ordered && cs[c].child[0] > c && cs[c].child[1] > c;
    std::vector<double>& rm = rmin_[s];
    const std::vector<tree::Ball>& bl = balls_[s];
    if (ordered) {
      for (int c = n - 1; c >= 0; --c)
        rm[c] = cs[c].leaf() ? bl[c].r : std::min({bl[c].r, rm[cs[c].child[0]], rm[cs[c].child[1]]});
      continue;
    }
    auto fill = [&](auto&& self, int c) -> double {
      double r = bl[c].r;
      if (!cs[c].leaf())
        for (int k : cs[c].child) r = std::min(r, self(self, k));
      return rm[c] = r;
    };
    fill(fill, 0);
  }
}

// What examine reads of target cluster b for every pair it is handed, computed once: its ball,
// count, a leaf's radius, the target box's ball, and its grid's size per degree (on first use:
// grid_degrees is a few logarithms per side). The reference recomputed them per pair.
struct TreeBRSolver::DualTarget {
  int b;
  const search::Cluster* B;
  tree::Ball ball;
  long count;
  double r_leaf;           // ≈ a leaf's radius below b (examine's cost model)
  const tree::Ball* box;   // the target box holding b (null: above the boxes' depth)
  int m[kTreeMaxDegree + 1];  // grid points at degree d (−1: not computed yet)
  int top = -1;  // the highest degree d whose grid has fewer points than B targets (0: none; −1: not computed yet)
};

TreeBRSolver::DualTarget TreeBRSolver::dual_target(int b) const {
  const search::Cluster& B = sources_[0].clusters[b];
  DualTarget t;
  t.b = b;
  t.B = &B;
  t.ball = balls_[0][b];
  t.count = B.count();
  t.r_leaf = t.ball.r * std::sqrt(std::min(1.0, 0.75 * settings_.tree_leaf / double(B.count())));
  t.box = box_of_[b] >= 0 ? &box_balls_[box_of_[b]] : nullptr;
  std::fill(std::begin(t.m), std::end(t.m), -1);
  return t;
}

// Whether C's subtree at image (mx, my) may hold a cluster–cluster term of target t (false: none
// can, so examine's exploration of C's children would be discarded: C goes down whole, as it
// would after the exploration). A term at a C' of the subtree needs C' separated from B,
// r_B + r_C' < θ·|Δcentre'|, and B's grid at degree d(ρ') to have fewer points than B targets,
// so d(ρ') ≤ t.top, which examine's loop reaches (top < p) only if kTargetMargin·ρ' <
// grid_theta_[top] (d(ρ) never falls as ρ grows). Every C' has its centre in C's box, so
// |Δcentre'| ≤ |Δcentre| + r_C (here with slack_ for the rounding of the centres' differences:
// absolute, 1e-9 of the coordinates, far above it), and r_C' ≥ rmin_ (the subtree's smallest
// radius). Rounding is monotone, so the rounded r_B + r_C', θ·|Δcentre'| and ρ' are bounded by
// the same expressions on those bounds: where either test fails on them, no C' takes a term.
bool TreeBRSolver::may_take_cc(DualTarget& t, int tree, int cluster, const tree::Ball& cb, double dist) const {
  const double far = (dist + cb.r + slack_) * (1.0 + 1e-12);  // ≥ every C' 's |Δcentre'|
  const double r = t.ball.r + rmin_[tree][cluster];           // ≤ every C' 's r_B + r_C'
  if (r >= rules_.theta * far) return false;                  // none separated from B
  const int p = settings_.tree_degree;
  if (t.top < 0) {
    t.top = 0;
    for (int d = p; d >= 1; --d)
      if (t.count > grid_points(t, d)) {
        t.top = d;
        break;
      }
  }
  if (t.top == 0) return false;
  if (t.top >= p) return true;
  return !(kTargetMargin * (r / far) >= grid_theta_[t.top]);
}

int TreeBRSolver::grid_points(DualTarget& t, int d) const {
  if (t.m[d] < 0) {
    int dg[3];
    t.m[d] = tree::grid_degrees(*t.B, d, grid_theta_[d], dg);
  }
  return t.m[d];
}

namespace {

// cheapest_low's choice at ratio rho (computed by the caller exactly as cheapest_low would).
inline int low_at(const tree::LowSets& l, int c, double rho) {
  int best = -1;
  for (int k = l.first[c]; k < l.first[c + 1]; ++k)  // fewer proxies as k grows
    if (rho < l.theta[k]) best = k;
  return best;
}

}  // namespace

// A leaf target cluster b: its batch's lists from the (cluster, image) pairs handed down, by
// leaf_visit (fast) or by visit (the reference traversal): the same terms.
void TreeBRSolver::dual_leaf(int b, const std::vector<Pending>& in, bool fast) {
  const int k = leaf_of_[b];
  if (dual_collect_) {  // walked by the lists' kernels (dual_leaves_queue, dual_terms_kernel)
    pend_[k] = in;
    return;
  }
  near_[k].clear();
  far_[k].clear();
  edge_[k].clear();
  Lists out{near_[k], far_[k], edge_[k]};
  const Target tg = target(b);
  for (const Pending& c : in) {
    if (fast) leaf_visit(tg, c.tree, c.cluster, c.mx, c.my, c.full, out);
    else visit(tg, c.tree, c.cluster, c.mx, c.my, c.full, out);
  }
}

// Target cluster b with the (cluster, image) pairs its parent handed down: a leaf walks them as
// a batch (leaf_visit: visit's walk); an internal cluster settles what it can and hands the rest
// to both children (OpenMP tasks: each writes only its own subtree's lists).
void TreeBRSolver::dual_node(int b, const std::vector<Pending>& in) {
  const search::Cluster& B = sources_[0].clusters[b];
  if (B.leaf()) return dual_leaf(b, in, true);
  DualTarget t = dual_target(b);
  std::vector<Pending> down;
  down.reserve(2 * in.size());
  for (const Pending& c : in) examine(t, c, down);
  // A child is a task of its own while its subtree holds at least kTaskLeaves leaves' worth of
  // targets; smaller subtrees are walked inside their parent's task.
  // (The device's runs start below the top, so a depth rule made every node there a task: its
  // lists took 5 % longer at 1024², 13 % at 2048² on one H200's 16 threads.)
  const long task_min = kTaskLeaves * long(settings_.tree_leaf);
  for (int child : B.child) {
    const bool task = sources_[0].clusters[child].count() >= task_min;
#pragma omp task default(shared) firstprivate(child) if (task)
    dual_node(child, down);
  }
#pragma omp taskwait
}

// One (source cluster, image) for internal target cluster t.b (examine_reference's decisions, the
// same doubles: the distance of the pair's centres computed once and the ratios from it as
// tree::separated and cheapest_low form them). The LET's rule is kept: a remote C
// separated from the target box T that holds B (tree_let.hpp; a B above the boxes' depth holds
// several and has none) may not have been opened by its owner (it looks like a leaf here), so
// it is never split — it goes down to B's leaves, which take it through its proxies as the
// single traversal does; a C opened by its owner has its children here.
void TreeBRSolver::examine(DualTarget& t, const Pending& c, std::vector<Pending>& down) {
  const tree::SourceTree& S = sources_[c.tree];
  const search::Cluster& C = S.clusters[c.cluster];
  const tree::Ball& cb = balls_[c.tree][c.cluster];
  const tree::Ball& bb = t.ball;
  // The larger is the one with more particles (against the larger box: 3 % fewer pairs at 256²,
  // the direct pairs those of the single traversal).
  const bool split_c = !C.leaf() && S.particles(c.cluster) > t.count;
  // The larger of the two: C's children here, or C to B's children. Where C's children settle
  // nothing here (no cluster–cluster term below C), C goes down whole: a leaf of B may take it
  // in one term where its children would cost two (or their sources).
  const double r = bb.r + cb.r;
  double dist = -1.0;  // |Δcentre|, once computed
  auto distance = [&] {
    if (dist < 0.0) dist = tree::distance(bb, cb, c.mx, c.my, rules_.images);
    return dist;
  };
  auto split = [&](bool full) {
    if (split_c && may_take_cc(t, c.tree, c.cluster, cb, distance())) {
      std::vector<Term>& cc = cc_[t.b];
      const size_t d0 = down.size(), t0 = cc.size();
      for (int k : C.child) examine(t, {c.tree, k, c.mx, c.my, full}, down);
      if (cc.size() > t0) return;
      down.resize(d0);
    }
    down.push_back({c.tree, c.cluster, c.mx, c.my, full});
  };
  if (!c.full) {
    int cut = 0;
    const tree::Cover cv = tree::cover(*t.B, C, c.mx, c.my, rules_.images, &cut);
    if (cv == tree::Cover::None) return;
    if (cv == tree::Cover::Partial) {
      // The window's edge. A C that B's leaves could take as an edge term (one dimension cut,
      // all its sources here, separated at the edge terms' θ) stays whole: B is split, so that
      // B's children that it covers fully take it as a cluster–cluster term and the leaves it
      // cuts as an edge term; split into its children it would cost direct pairs at the edge.
      const bool edge_term = rules_.edge && tree::edge_axis(cut) >= 0 && S.full[c.cluster] &&
                             r < (rules_.theta / rules_.edge_margin) * distance();
      if (edge_term) return down.push_back({c.tree, c.cluster, c.mx, c.my, false});
      return split(false);
    }
  }
  distance();
  if (r < rules_.theta * dist) {  // separated from B
    // The target grid: the lowest degree d valid at kTargetMargin·ρ (the lower-degree sets' rule
    // ρ < θ^{p/d}, here on the target side; d = p up to ρ < θ); it pays when B has more targets.
    const double rho = r / dist;
    int d = settings_.tree_degree;
    while (d > 1 && kTargetMargin * rho < grid_theta_[d - 1]) --d;
    const int m = grid_points(t, d);
    if (t.count <= m) return down.push_back({c.tree, c.cluster, c.mx, c.my, true});  // B's leaves take it
    // The cheapest set valid at B's ratio (as visit), else C's sources when they are all here
    // (fewer than its proxies would be: cluster–particle), else C's children.
    const tree::LowSets& l = low_[c.tree];
    const int low = low_at(l, c.cluster, rho);
    const int set = low >= 0 || S.proxies_of(c.cluster) ? low : (S.full[c.cluster] ? kSources : -3);
    if (set != -3) {
      // Only where it pays against B's leaves taking C: they see it at a smaller ratio (a leaf's
      // radius ≈ r_B·√(¾·leaf / |B|) on a surface), where a cheaper set may serve (at TOL 1e-9
      // the term on every B with more targets than grid points cost 18 % more pairs at 256²).
      auto size = [&](int k) {
        return double(k >= 0 ? l.count[k] : (k == kSources ? C.count() : S.proxy_count[c.cluster]));
      };
      const double margin = (t.r_leaf + cb.r) / r;
      const int leaf_low = low_at(l, c.cluster, margin * r / dist);
      const double leaves = double(t.count) * size(leaf_low >= 0 ? leaf_low : set);
      if (double(m) * size(set) < leaves)
        return cc_[t.b].push_back({c.tree, c.cluster, c.mx, c.my, false, set, -1, d});
      return down.push_back({c.tree, c.cluster, c.mx, c.my, true});
    }
    if (!C.leaf()) {
      for (int k : C.child) examine(t, {c.tree, k, c.mx, c.my, true}, down);
      return;
    }
    return down.push_back({c.tree, c.cluster, c.mx, c.my, true});
  }
  if (tree::box_rule(rules_, S.remote, C.leaf()) && t.box && tree::separated(*t.box, cb, c.mx, c.my, rules_))
    return down.push_back({c.tree, c.cluster, c.mx, c.my, true});  // B's leaves take it
  split(true);
}

// visit's walk for a leaf of the dual traversal (visit and decide, the same terms in the same
// order): the distance of the batch's and the cluster's centres computed once per cluster, the
// ratios from it as tree::separated and cheapest_low form them.
void TreeBRSolver::leaf_visit(const Target& tg, int s, int cluster, int mx, int my, bool full, Lists& out) const {
  const tree::SourceTree& S = sources_[s];
  const search::Cluster& C = S.clusters[cluster];
  const tree::Ball& c = balls_[s][cluster];
  const double r = tg.b.r + c.r;
  auto direct = [&](bool partial) {
    if (!S.full[cluster]) throw Error("tree solver: a LET part lacks the sources of a cluster it needs");
    out.near.push_back({s, cluster, mx, my, partial});
  };
  bool full_next = true;
  if (!full) {
    int cut = 0;
    const tree::Cover cv = tree::cover(tree::span(tg.B, C, rules_.images), mx, my, rules_.images, &cut);
    if (cv == tree::Cover::None) return;
    if (cv == tree::Cover::Partial) {
      // decide's edge term: separated at θ / kEdgeMargin from the batch (or, remote, from its
      // target box), the cheapest set valid at kEdgeMargin·ρ.
      const int axis = tree::edge_axis(cut);
      if (rules_.edge && axis >= 0 && S.full[cluster]) {
        const double dist = tree::distance(tg.b, c, mx, my, rules_.images);
        const double th = rules_.theta / rules_.edge_margin;
        const bool box = tree::box_rule(rules_, S.remote, C.leaf());
        if (r < th * dist || (box && tree::separated(tg.t, c, mx, my, rules_, true))) {
          const int low = low_at(low_[s], cluster, rules_.edge_margin * r / dist);
          if (low >= 0 || S.proxies_of(cluster)) {
            out.edge.push_back({s, cluster, mx, my, false, low, axis});
            return;
          }
        }
      }
      if (C.leaf()) return direct(true);
      full_next = false;
      for (int k : C.child) leaf_visit(tg, s, k, mx, my, full_next, out);
      return;
    }
  }
  // Every pair takes this image.
  const double dist = tree::distance(tg.b, c, mx, my, rules_.images);
  const bool box = tree::box_rule(rules_, S.remote, C.leaf());
  if (r < rules_.theta * dist || (box && tree::separated(tg.t, c, mx, my, rules_))) {
    // The cheapest proxy set valid at this batch's ratio ρ: degree p (ρ < θ), or a lower degree.
    const int low = low_at(low_[s], cluster, r / dist);
    if (low >= 0 || S.proxies_of(cluster)) {
      out.far.push_back({s, cluster, mx, my, false, low});
      return;
    }
    if (S.full[cluster] && C.leaf()) return direct(false);
    // No set fits: the children may (a smaller ρ), else their sources are summed directly.
  } else if (C.leaf()) {
    return direct(false);
  }
  for (int k : C.child) leaf_visit(tg, s, k, mx, my, true, out);
}

// The reference traversal (dual_reference; dual_node and examine before they were made fast,
// unchanged): every pair re-decided from scratch at every level.
// Target cluster b with the (cluster, image) pairs its parent handed down: a leaf walks them as
// a batch (visit); an internal cluster settles what it can and hands the rest to both children
// (OpenMP tasks: each writes only its own subtree's lists).
void TreeBRSolver::dual_node_reference(int b, const std::vector<Pending>& in, int depth) {
  const search::Cluster& B = sources_[0].clusters[b];
  if (B.leaf()) return dual_leaf(b, in, false);
  std::vector<Pending> down;
  for (const Pending& c : in) examine_reference(b, c, down);
  for (int child : B.child) {
#pragma omp task default(shared) firstprivate(child, depth) if (depth < 12)
    dual_node_reference(child, down, depth + 1);
  }
#pragma omp taskwait
}

// One (source cluster, image) for internal target cluster b. The LET's rule is kept: a remote C
// separated from the target box T that holds B (tree_let.hpp; a B above the boxes' depth holds
// several and has none) may not have been opened by its owner (it looks like a leaf here), so
// it is never split — it goes down to B's leaves, which take it through its proxies as the
// single traversal does; a C opened by its owner has its children here.
void TreeBRSolver::examine_reference(int b, const Pending& c, std::vector<Pending>& down) {
  const search::Cluster& B = sources_[0].clusters[b];
  const tree::SourceTree& S = sources_[c.tree];
  const search::Cluster& C = S.clusters[c.cluster];
  const tree::Ball &bb = balls_[0][b], &cb = balls_[c.tree][c.cluster];
  // The larger is the one with more particles (against the larger box: 3 % fewer pairs at 256²,
  // the direct pairs those of the single traversal).
  const bool split_c = !C.leaf() && S.particles(c.cluster) > B.count();
  // The larger of the two: C's children here, or C to B's children. Where C's children settle
  // nothing here (no cluster–cluster term below C), C goes down whole: a leaf of B may take it
  // in one term where its children would cost two (or their sources).
  auto split = [&](bool full) {
    if (split_c) {
      const size_t d0 = down.size(), t0 = cc_[b].size();
      for (int k : C.child) examine_reference(b, {c.tree, k, c.mx, c.my, full}, down);
      if (cc_[b].size() > t0) return;
      down.resize(d0);
    }
    down.push_back({c.tree, c.cluster, c.mx, c.my, full});
  };
  if (!c.full) {
    int cut = 0;
    const tree::Cover cv = tree::cover(B, C, c.mx, c.my, rules_.images, &cut);
    if (cv == tree::Cover::None) return;
    if (cv == tree::Cover::Partial) {
      // The window's edge. A C that B's leaves could take as an edge term (one dimension cut,
      // all its sources here, separated at the edge terms' θ) stays whole: B is split, so that
      // B's children that it covers fully take it as a cluster–cluster term and the leaves it
      // cuts as an edge term; split into its children it would cost direct pairs at the edge.
      const bool edge_term = rules_.edge && tree::edge_axis(cut) >= 0 && S.full[c.cluster] &&
                             tree::separated(bb, cb, c.mx, c.my, rules_, true);
      if (edge_term) return down.push_back({c.tree, c.cluster, c.mx, c.my, false});
      return split(false);
    }
  }
  const bool sep_b = tree::separated(bb, cb, c.mx, c.my, rules_);
  const bool sep_t = tree::box_rule(rules_, S.remote, C.leaf()) && box_of_[b] >= 0 &&
                     tree::separated(box_balls_[box_of_[b]], cb, c.mx, c.my, rules_);
  // The target grid: the lowest degree d valid at kTargetMargin·ρ (the lower-degree sets' rule
  // ρ < θ^{p/d}, here on the target side; d = p up to ρ < θ); it pays when B has more targets.
  int d = settings_.tree_degree, dg[3];
  if (sep_b) {
    const double rho = (bb.r + cb.r) / tree::distance(bb, cb, c.mx, c.my, rules_.images);
    while (d > 1 && kTargetMargin * rho < grid_theta_[d - 1]) --d;
  }
  const int m = sep_b ? tree::grid_degrees(B, d, grid_theta_[d], dg) : 0;
  if (sep_b && B.count() > m) {
    // The cheapest set valid at B's ratio (as visit), else C's sources when they are all here
    // (fewer than its proxies would be: cluster–particle), else C's children.
    const int low = cheapest_low(bb, c.tree, c.cluster, c.mx, c.my);
    const int set = low >= 0 || S.proxies_of(c.cluster) ? low : (S.full[c.cluster] ? kSources : -3);
    if (set != -3) {
      // Only where it pays against B's leaves taking C: they see it at a smaller ratio (a leaf's
      // radius ≈ r_B·√(¾·leaf / |B|) on a surface), where a cheaper set may serve (at TOL 1e-9
      // the term on every B with more targets than grid points cost 18 % more pairs at 256²).
      auto size = [&](int k) {
        return double(k >= 0 ? low_[c.tree].count[k] : (k == kSources ? C.count() : S.proxy_count[c.cluster]));
      };
      const double r_leaf = bb.r * std::sqrt(std::min(1.0, 0.75 * settings_.tree_leaf / double(B.count())));
      const int leaf_low = cheapest_low(bb, c.tree, c.cluster, c.mx, c.my, (r_leaf + cb.r) / (bb.r + cb.r));
      const double leaves = double(B.count()) * size(leaf_low >= 0 ? leaf_low : set);
      if (double(m) * size(set) < leaves) return cc_[b].push_back({c.tree, c.cluster, c.mx, c.my, false, set, -1, d});
      return down.push_back({c.tree, c.cluster, c.mx, c.my, true});
    }
    if (!C.leaf()) {
      for (int k : C.child) examine_reference(b, {c.tree, k, c.mx, c.my, true}, down);
      return;
    }
    return down.push_back({c.tree, c.cluster, c.mx, c.my, true});
  }
  if (sep_b || sep_t) return down.push_back({c.tree, c.cluster, c.mx, c.my, true});  // B's leaves take it
  split(true);
}

// Cluster c's target grids, one per degree its cluster–cluster terms use, by falling degree
// (start left 0: the caller places them).
void TreeBRSolver::cluster_grids(int c, std::vector<TargetGrid>& out) const {
  const search::Cluster& B = sources_[0].clusters[c];
  for (int d = settings_.tree_degree; d >= 0; --d)
    for (const Term& e : cc_[c])
      if (e.target_degree == d) {
        TargetGrid g{c, d, 0, {0, 0, 0}, 0};
        g.m = tree::grid_degrees(B, d, grid_theta_[d], g.dg);
        out.push_back(g);
        break;
      }
}

// The cluster–cluster terms: each target cluster's grids (one per target degree its terms use)
// against the ranges of their terms (the far field's pair kernel, in list order), into grid_u_.
void TreeBRSolver::cc_sums() {
  const auto& cl = sources_[0].clusters;
  const int nc = static_cast<int>(cc_.size());
  grids_.clear();
  grid_first_.assign(nc + 1, 0);
  long total = 0;
  for (int c = 0; c < nc; ++c) {
    grid_first_[c] = static_cast<int>(grids_.size());
    cluster_grids(c, grids_);
    for (size_t k = grid_first_[c]; k < grids_.size(); ++k) {
      grids_[k].start = total;
      total += 3L * grids_[k].m;
    }
  }
  grid_first_[nc] = static_cast<int>(grids_.size());
  grid_u_.assign(total, 0.0);
  const int ng = static_cast<int>(grids_.size());
  long pairs = 0, terms = 0;
#pragma omp parallel reduction(+ : pairs, terms)
  {
    std::vector<BRSourceRange> ranges;
    std::vector<double> pts;
#pragma omp for schedule(dynamic, 1)
    for (int i = 0; i < ng; ++i) {
      const TargetGrid& g = grids_[i];
      const int m = g.m;
      pts.resize(3 * size_t(m));
      tree::target_points(cl[g.cluster], g.dg, pts.data(), pts.data() + m, pts.data() + 2 * m);
      ranges.clear();
      for (const Term& e : cc_[g.cluster]) {
        if (e.target_degree != g.degree) continue;
        ranges.push_back(term_range(e));
        ++terms;
      }
      double* u = &grid_u_[g.start];
      pairs += br_targets_host(pts.data(), pts.data() + m, pts.data() + 2 * m, m, ranges.data(),
                               static_cast<int>(ranges.size()), rules_.images, eps_, u, u + m, u + 2 * m);
    }
  }
  load_.cc_terms = terms;
  load_.cc_pairs = pairs;
}

// The downward pass: every target gets, into the far field, its ancestors' point velocities
// interpolated at its position, root first, each cluster's grids by falling degree (straight to
// the targets, not through the children's grids: one interpolation error per term, and a fixed
// order of the additions per target).
void TreeBRSolver::down() {
  if (!computes(gate_)) return gate_->stand_in("br.tree.compute.down");
  const tree::SourceTree& T = sources_[0];
  const long n = T.n;
  const double *x = T.pts.data(), *y = x + n, *z = y + n;
  double *ux = acc_far_.data(), *uy = ux + n, *uz = uy + n;
  const auto& cl = T.clusters;
  const std::vector<int>& leaves = tree_.leaves();
  const int nb = batches();
  long pairs = 0;
#pragma omp parallel reduction(+ : pairs)
  {
    std::vector<int> chain;
#pragma omp for schedule(dynamic, 8)
    for (int b = 0; b < nb; ++b) {
      chain.clear();
      for (int a = parent_[leaves[b]]; a >= 0; a = parent_[a])
        if (grid_first_[a] < grid_first_[a + 1]) chain.push_back(a);
      const search::Cluster& B = cl[leaves[b]];
      const long t = B.begin;
      for (auto it = chain.rbegin(); it != chain.rend(); ++it)
        for (int k = grid_first_[*it]; k < grid_first_[*it + 1]; ++k) {
          const TargetGrid& g = grids_[k];
          tree::interpolate_down(cl[g.cluster], g.dg, &grid_u_[g.start], g.m, x + t, y + t, z + t, B.count(), ux + t,
                                 uy + t, uz + t);
          pairs += B.count() * g.m;
        }
    }
  }
  load_.down_pairs = pairs;
}

// -x cuda (compute_device): the dual traversal in runs. The target tree's levels above subtrees
// of at most cut.at(b0) batches (b0: the subtree's first batch) are examined here, serially (a few dozen clusters: their terms go to
// cc_, dual_top_ lists them); the subtrees below, in tree order, are the parts the runs take.
// examine() depends only on the (target, source) pair, so the lists are dual_lists()'.
void TreeBRSolver::dual_device_begin(RunCut cut, std::vector<DualPart>& parts) {
  dual_begin();
  dual_top_.clear();
  parts.clear();
  const int nc = static_cast<int>(sources_[0].clusters.size());
  dev_gfirst_.assign(nc, -1);
  dev_gcount_.assign(nc, 0);
  dev_grids_.clear();
  dev_sw_.clear();
  load_.cc_terms = 0;
  if (batches() == 0) return;
  tree_mark("dualbegin");
  const std::vector<Pending> roots = dual_roots();
#pragma omp parallel
#pragma omp single
  dual_top(0, roots, cut, parts);
  // The top's internal clusters, in tree order (cut.at never falls with b0, so a cluster
  // dual_top splits has every ancestor split too).
  const auto& cl = sources_[0].clusters;
  for (int c = 0; c < nc; ++c)
    if (!cl[c].leaf()) {
      const int b0 = first_batch(cl[c].begin), b1 = first_batch(cl[c].end);
      if (b1 - b0 > cut.at(b0)) dual_top_.push_back(c);
    }
}

int TreeBRSolver::first_batch(long begin) const {
  const auto& cl = sources_[0].clusters;
  const std::vector<int>& leaves = tree_.leaves();
  return static_cast<int>(std::partition_point(leaves.begin(), leaves.begin() + batches(),
                                               [&](int l) { return cl[l].begin < begin; }) -
                          leaves.begin());
}

// The top levels: each internal cluster's children as OpenMP tasks (each writes only its own
// subtree's cc_), their parts then concatenated in tree order.
void TreeBRSolver::dual_top(int b, const std::vector<Pending>& in, RunCut cut, std::vector<DualPart>& parts) {
  const search::Cluster& B = sources_[0].clusters[b];
  const int b0 = first_batch(B.begin), b1 = first_batch(B.end);
  if (B.leaf() || b1 - b0 <= cut.at(b0)) {
    parts.push_back({b, b0, b1, in});
    return;
  }
  DualTarget t = dual_target(b);
  std::vector<Pending> down;
  for (const Pending& c : in) examine(t, c, down);
  constexpr int nk = static_cast<int>(std::size(search::Cluster{}.child));
  std::vector<std::vector<DualPart>> sub(nk);
  for (int k = 0; k < nk; ++k) {
#pragma omp task default(shared) firstprivate(k)
    dual_top(B.child[k], down, cut, sub[k]);
  }
#pragma omp taskwait
  for (auto& v : sub)
    for (auto& q : v) parts.push_back(std::move(q));
}

// Parts [k0, k1): their subtrees' lists (OpenMP tasks, as dual_lists).
void TreeBRSolver::dual_device_run(std::vector<DualPart>& parts, size_t k0, size_t k1) {
#pragma omp parallel
#pragma omp single
  for (size_t k = k0; k < k1; ++k) {
#pragma omp task default(shared) firstprivate(k)
    dual_node(parts[k].root, parts[k].in);
  }
}

// b's internal clusters with cluster–cluster terms (b included), depth first.
void TreeBRSolver::dual_internal(int b, std::vector<int>& out) const {
  const search::Cluster& B = sources_[0].clusters[b];
  if (B.leaf()) return;
  if (!cc_[b].empty()) out.push_back(b);
  for (int k : B.child) dual_internal(k, out);
}

namespace {

// A device grid's Chebyshev nodes and weights (TreeSumsDevice::DownGrid::sw's layout): their
// count, and the values on C's box for side degrees dg written to o.
long grid_nodes_size(const int* dg) { return 2L * (dg[0] + dg[1] + dg[2] + 3); }
void grid_nodes(const search::Cluster& C, const int* dg, double* o) {
  constexpr int K = kTreeMaxDegree + 1;
  for (int k = 0; k < 3; ++k) {
    double s[K], w[K];
    tree::chebyshev(C.lo[k], C.hi[k], dg[k], s, w);
    o = std::copy_n(s, dg[k] + 1, o);
    o = std::copy_n(w, dg[k] + 1, o);
  }
}

}  // namespace

// The grids of `clusters` (each cluster's by falling degree, as cc_sums) and their terms' ranges,
// queued on the device (TreeSumsDevice::launch_grids): C's sources from the near pool, proxies
// and lower-degree sets from the far pool. Each grid's points, nodes and weights are the host's
// (tree::target_points, chebyshev).
void TreeBRSolver::cc_device(const std::vector<int>& clusters) {
  const auto& cl = sources_[0].clusters;
  std::vector<TargetGrid> grids;  // start: the grid's first point among the M
  long M = 0;
  for (int c : clusters) {
    const size_t k0 = grids.size();
    cluster_grids(c, grids);
    for (size_t k = k0; k < grids.size(); ++k) {
      grids[k].start = M;
      M += grids[k].m;
    }
  }
  const int ng = static_cast<int>(grids.size());
  if (ng == 0) return;
  // The points straight into the launch's page-locked staging, in parallel. (A vector of them
  // copied there serially, and fresh range lists per grid: 12.6–14.1 ms a call at 1024² on one
  // H200's host, 5.9–6.4 so; 50 and 13 at 2048²: docs/tree-log.md "The grids' points in place".)
  double* pts = device_->stage_grid_points(M);
  std::vector<long> bounds(2 * size_t(ng));
  std::vector<std::vector<BRSourceRange>>&near = cc_near_, &far = cc_far_;
  if (near.size() < size_t(ng)) near.resize(ng), far.resize(ng);
  long terms = 0;
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : terms)
  for (int i = 0; i < ng; ++i) {
    const TargetGrid& g = grids[i];
    bounds[2 * i] = g.start;
    bounds[2 * i + 1] = g.start + g.m;
    tree::target_points(cl[g.cluster], g.dg, &pts[g.start], &pts[M + g.start], &pts[2 * M + g.start]);
    near[i].clear();
    far[i].clear();
    for (const Term& e : cc_[g.cluster]) {
      if (e.target_degree != g.degree) continue;
      (e.low == kSources ? near[i] : far[i]).push_back(term_range(e));
      ++terms;
    }
  }
  load_.cc_terms += terms;
  const long at = device_->launch_grids(M, bounds, near, far);
  // The downward pass's tables: each grid's place and its nodes and weights (in parallel).
  const size_t g0 = dev_grids_.size();
  std::vector<long> sw(ng + 1, static_cast<long>(dev_sw_.size()));
  for (int i = 0; i < ng; ++i) {
    const TargetGrid& g = grids[i];
    if (dev_gcount_[g.cluster]++ == 0) dev_gfirst_[g.cluster] = static_cast<int>(g0 + i);
    sw[i + 1] = sw[i] + grid_nodes_size(g.dg);
  }
  dev_grids_.resize(g0 + ng);
  dev_sw_.resize(sw[ng]);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < ng; ++i) {
    const TargetGrid& g = grids[i];
    dev_grids_[g0 + i] = {at + g.start, static_cast<int>(M), g.m, {g.dg[0], g.dg[1], g.dg[2]}, sw[i], 0};
    grid_nodes(cl[g.cluster], g.dg, &dev_sw_[sw[i]]);
  }
}

// Every batch's chain of grids queued for the device's downward pass, through merged grids
// (tree_down.hpp; BEATNIK_TREE_DOWN=direct: its ancestors' grids root first, each cluster's by
// falling degree: down()'s order). The products counted are the direct pass's (the host's count,
// whichever way the device goes).
void TreeBRSolver::down_device(const std::vector<long>& batch) {
  const auto& cl = sources_[0].clusters;
  const std::vector<int>& leaves = tree_.leaves();
  const int nb = batches();
  long pairs = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : pairs)
  for (int b = 0; b < nb; ++b)
    for (int a = parent_[leaves[b]]; a >= 0; a = parent_[a])
      for (int k = dev_gfirst_[a]; k >= 0 && k < dev_gfirst_[a] + dev_gcount_[a]; ++k)
        pairs += cl[leaves[b]].count() * static_cast<long>(dev_grids_[k].m);
  load_.down_pairs = pairs;
  std::vector<std::array<int, 3>> dg(dev_grids_.size());
  for (size_t k = 0; k < dg.size(); ++k) dg[k] = {dev_grids_[k].dg[0], dev_grids_[k].dg[1], dev_grids_[k].dg[2]};
  static const bool merge = env::choice("BEATNIK_TREE_DOWN", {"merged", "direct"}).value_or("merged") == "merged";
  tree::DownPlan plan = tree::plan_down(cl, dev_gfirst_, dev_gcount_, dg, leaves, nb,
                                        merge ? TreeSumsDevice::kMergeMaxSide : -1);
  load_.down_merged = static_cast<long>(plan.cluster.size());
  // The merged grids: their places, nodes and weights after the own grids'.
  TreeSumsDevice::DownMerges mg;
  mg.first = static_cast<int>(dev_grids_.size());
  const int nm = static_cast<int>(plan.cluster.size());
  for (int i = 0; i < nm; ++i) {
    const std::array<int, 3>& d = plan.dg[i];
    const int m = (d[0] + 1) * (d[1] + 1) * (d[2] + 1);
    dev_grids_.push_back({mg.points, 0, m, {d[0], d[1], d[2]}, static_cast<long>(dev_sw_.size()), 1});
    mg.points += m;
    dev_sw_.resize(dev_sw_.size() + grid_nodes_size(d.data()));
    mg.max_side = std::max({mg.max_side, d[0], d[1], d[2]});
  }
#pragma omp parallel for schedule(static)
  for (int i = 0; i < nm; ++i) {
    TreeSumsDevice::DownGrid& G = dev_grids_[mg.first + i];
    G.stride = static_cast<int>(mg.points);
    grid_nodes(cl[plan.cluster[i]], G.dg, &dev_sw_[G.sw]);
  }
  mg.src_start = std::move(plan.src_start);
  mg.src = std::move(plan.src);
  mg.order = std::move(plan.order);
  mg.level_start = std::move(plan.level_start);
  // dev_grids_ and dev_sw_ come back with the last call's storage (cleared by the next call's begin).
  device_->queue_down(batch, std::move(plan.chain_start), std::move(plan.chain), dev_grids_, dev_sw_, std::move(mg));
}

}  // namespace beatnik::model
