// The downward pass's plan (model/tree_down.hpp): grids with arbitrary values on a real cluster
// tree, evaluated at every target through the plan's merged grids and chains, against the
// direct pass (every ancestor's grid at every target). Both evaluations are written here with
// the Lagrange basis in product form, independent of the solver's barycentric formula; the
// merged grids' values are their sources' polynomials evaluated at their points, not
// separably as the device does. The device's execution of the plan is checked against the host
// solver's direct pass in test_br_tree_device.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "beatnik/model/tree_down.hpp"
#include "beatnik/model/tree_interp.hpp"
#include "beatnik/search/cluster_tree.hpp"
#include "unit/tree_product_basis.hpp"
#include "unit/tree_test_points.hpp"

using namespace beatnik;

namespace {

// A grid: its cluster's box, side degrees and values at its points ((i·n1 + j)·n2 + e).
struct Grid {
  const search::Cluster* box;
  std::array<int, 3> dg;
  std::vector<double> v;
};

double eval(const Grid& g, const double* p) {
  const int n1 = g.dg[1] + 1, n2 = g.dg[2] + 1;
  double s = 0.0;
  for (int i = 0; i <= g.dg[0]; ++i)
    for (int j = 0; j <= g.dg[1]; ++j)
      for (int e = 0; e <= g.dg[2]; ++e)
        s += test::product_basis(p[0], g.dg[0], g.box->lo[0], g.box->hi[0], i) *
             test::product_basis(p[1], g.dg[1], g.box->lo[1], g.box->hi[1], j) *
             test::product_basis(p[2], g.dg[2], g.box->lo[2], g.box->hi[2], e) * g.v[(i * n1 + j) * n2 + e];
  return s;
}

struct Case {
  search::ClusterTree tree;
  std::vector<double> pts;  // tree order, [x|y|z|…], n each
  long n;
  std::vector<int> first, count;
  std::vector<std::array<int, 3>> dg;
  std::vector<Grid> grids;
};

// n points on the wavy sheet, leaves of 32; internal clusters get 0, 1 or 2 grids (the solver's
// degrees for p and for p − 2: a cluster's grids by falling degree) with values in [−1, 1].
void make_case(Case& c, long n, int p) {
  c.n = n;
  c.pts = test::in_tree_order(c.tree, test::wavy_sheet(n, 5), n, 32);
  const auto& cl = c.tree.clusters();
  c.first.assign(cl.size(), -1);
  c.count.assign(cl.size(), 0);
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (size_t k = 0; k < cl.size(); ++k) {
    if (cl[k].leaf()) continue;
    const int r = static_cast<int>(rng() % 4);  // 0, 1: none; 2: one grid; 3: two
    if (r < 2) continue;
    c.first[k] = static_cast<int>(c.grids.size());
    for (int q = 0; q < r - 1; ++q) {
      int d[3];
      model::tree::grid_degrees(cl[k], p - 2 * q, 0.4, d);
      Grid g{&cl[k], {d[0], d[1], d[2]}, {}};
      g.v.resize(size_t(d[0] + 1) * (d[1] + 1) * (d[2] + 1));
      for (double& x : g.v) x = u(rng);
      c.grids.push_back(g);
      c.dg.push_back(g.dg);
      ++c.count[k];
    }
  }
}

// The direct pass at batch b's targets: every ancestor's grids (the leaf's excluded).
std::vector<double> direct(const Case& c, std::vector<int>& parent) {
  const auto& cl = c.tree.clusters();
  parent.assign(cl.size(), -1);
  for (size_t k = 0; k < cl.size(); ++k)
    if (!cl[k].leaf())
      for (int ch : cl[k].child) parent[ch] = static_cast<int>(k);
  std::vector<double> out(c.n, 0.0);
  for (int leaf : c.tree.leaves())
    for (long t = cl[leaf].begin; t < cl[leaf].end; ++t) {
      const double p[3] = {c.pts[t], c.pts[c.n + t], c.pts[2 * c.n + t]};
      for (int a = parent[leaf]; a >= 0; a = parent[a])
        for (int g = c.first[a]; c.count[a] > 0 && g < c.first[a] + c.count[a]; ++g) out[t] += eval(c.grids[g], p);
    }
  return out;
}

// The plan's evaluation: merged grids level by level, then each batch's chain.
std::vector<double> planned(const Case& c, const model::tree::DownPlan& plan) {
  const auto& cl = c.tree.clusters();
  std::vector<Grid> all = c.grids;
  const int ng = static_cast<int>(c.grids.size());
  for (size_t i = 0; i < plan.cluster.size(); ++i)
    all.push_back({&cl[plan.cluster[i]], plan.dg[i],
                   std::vector<double>(size_t(plan.dg[i][0] + 1) * (plan.dg[i][1] + 1) * (plan.dg[i][2] + 1), 0.0)});
  for (int id : plan.order) {
    Grid& A = all[ng + id];
    const int n1 = A.dg[1] + 1, n2 = A.dg[2] + 1;
    for (int q = plan.src_start[id]; q < plan.src_start[id + 1]; ++q) {
      EXPECT_LT(plan.src[q] < ng ? -1 : plan.level[plan.src[q] - ng], plan.level[id]) << "a source after its grid";
      for (int i = 0; i <= A.dg[0]; ++i)
        for (int j = 0; j <= A.dg[1]; ++j)
          for (int e = 0; e <= A.dg[2]; ++e) {
            const double p[3] = {test::cheb_node(A.box->lo[0], A.box->hi[0], A.dg[0], i),
                                 test::cheb_node(A.box->lo[1], A.box->hi[1], A.dg[1], j),
                                 test::cheb_node(A.box->lo[2], A.box->hi[2], A.dg[2], e)};
            A.v[(i * n1 + j) * n2 + e] += eval(all[plan.src[q]], p);
          }
    }
  }
  std::vector<double> out(c.n, 0.0);
  const std::vector<int>& leaves = c.tree.leaves();
  for (size_t b = 0; b < leaves.size(); ++b)
    for (long t = cl[leaves[b]].begin; t < cl[leaves[b]].end; ++t) {
      const double p[3] = {c.pts[t], c.pts[c.n + t], c.pts[2 * c.n + t]};
      for (int k = plan.chain_start[b]; k < plan.chain_start[b + 1]; ++k) out[t] += eval(all[plan.chain[k]], p);
    }
  return out;
}

double max_rel(const std::vector<double>& a, const std::vector<double>& ref) {
  double d = 0.0, m = 0.0;
  for (size_t k = 0; k < a.size(); ++k) {
    d = std::max(d, std::abs(a[k] - ref[k]));
    m = std::max(m, std::abs(ref[k]));
  }
  return d / m;
}

}  // namespace

TEST(TreeDown, MergedGridsReproduceTheDirectPass) {
  Case c;
  make_case(c, 6000, 4);
  std::vector<int> parent;
  const std::vector<double> want = direct(c, parent);
  const int nb = static_cast<int>(c.tree.leaves().size());
  const auto& cl = c.tree.clusters();
  const model::tree::DownPlan plan =
      model::tree::plan_down(cl, c.first, c.count, c.dg, c.tree.leaves(), nb, model::tree::kTreeMaxDegree);
  ASSERT_EQ(plan.chain_start.size(), size_t(nb) + 1);
  ASSERT_GT(plan.cluster.size(), 2u) << "no merged grids: the test would miss them";
  ASSERT_GT(plan.level_start.size(), 2u) << "one level of merged grids: the test would miss merged sources";
  // Every merged grid has more targets than points and at least each source's degrees.
  for (size_t i = 0; i < plan.cluster.size(); ++i) {
    const auto& d = plan.dg[i];
    EXPECT_GT(cl[plan.cluster[i]].count(), long(d[0] + 1) * (d[1] + 1) * (d[2] + 1));
    for (int q = plan.src_start[i]; q < plan.src_start[i + 1]; ++q) {
      const int s = plan.src[q];
      const auto& sd = s < int(c.dg.size()) ? c.dg[s] : plan.dg[s - c.dg.size()];
      for (int k = 0; k < 3; ++k) EXPECT_GE(d[k], sd[k]);
    }
  }
  const std::vector<double> got = planned(c, plan);
  const double err = max_rel(got, want);
  // Shorter chains than the direct pass's.
  long direct_len = 0;
  for (int leaf : c.tree.leaves())
    for (int a = parent[leaf]; a >= 0; a = parent[a]) direct_len += c.count[a];
  std::printf("[ plan ] %zu merged grids in %zu levels; chains %zu grids against %ld direct; max rel diff %.3e\n",
              plan.cluster.size(), plan.level_start.size() - 1, plan.chain.size(), direct_len, err);
  EXPECT_LT(static_cast<long>(plan.chain.size()), direct_len);
  EXPECT_LE(err, 1e-12);
}

TEST(TreeDown, WithoutMergesTheChainsAreTheDirectPass) {
  Case c;
  make_case(c, 3000, 4);
  std::vector<int> parent;
  direct(c, parent);
  const auto& leaves = c.tree.leaves();
  const int nb = static_cast<int>(leaves.size());
  const model::tree::DownPlan plan = model::tree::plan_down(c.tree.clusters(), c.first, c.count, c.dg, leaves, nb, -1);
  EXPECT_TRUE(plan.cluster.empty());
  for (int b = 0; b < nb; ++b) {
    std::vector<int> want, anc;
    for (int a = parent[leaves[b]]; a >= 0; a = parent[a]) anc.push_back(a);
    for (auto it = anc.rbegin(); it != anc.rend(); ++it)
      for (int g = c.first[*it]; c.count[*it] > 0 && g < c.first[*it] + c.count[*it]; ++g) want.push_back(g);
    const std::vector<int> got(plan.chain.begin() + plan.chain_start[b], plan.chain.begin() + plan.chain_start[b + 1]);
    ASSERT_EQ(got, want) << "batch " << b;
  }
}
