// The edge terms' tables and sums of -x cuda (model/tree_edge_device.hpp) against the host's
// (model/tree_edge.hpp: build_edge_table, edge_sum): on a wavy sheet whose coordinates repeat
// (rounded to a grid, with −0 and +0 among them, so the stable order of ties matters), for
// clusters from the root to a leaf, both axes and several degrees and blocks, the sorted sources
// must be the host's exactly and the prefix rows equal to 1e-12 of the table's largest; the
// sums over cut windows must equal edge_sum's to 1e-12 of max |u| with the same pair counts;
// tables built in small groups (a bound on the Lagrange values held) must be the same bits, and
// so must the sums of every variant of the device kernel, and the tables and sums queued in
// pieces (the solver's pipelined edge stage).
// Built twice: host (test_tree_edge_tables) and, in the CUDA build, device
// (test_tree_edge_tables_device, needs a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "beatnik/base/error.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/space.hpp"
#include "beatnik/model/tree_edge.hpp"
#include "beatnik/model/tree_edge_device.hpp"
#include "beatnik/model/tree_interp.hpp"
#include "beatnik/search/cluster_tree.hpp"
#include "support/test_support.hpp"
#include "unit/tree_test_points.hpp"

using namespace beatnik;
namespace mt = beatnik::model::tree;

namespace {

#if defined(TREE_EDGE_ON_DEVICE)
const exec::Space kSpace = exec::Space::Device;
#else
const exec::Space kSpace = exec::Space::Host;
#endif

// A copy of host data in kSpace (kept alive by the returned buffer).
exec::Buffer<double> in_space(const std::vector<double>& v) {
  exec::Buffer<double> b(kSpace, std::max<size_t>(v.size(), 1));
  exec::copy(b.data(), kSpace, v.data(), exec::Space::Host, v.size());
  return b;
}

}  // namespace

TEST(TreeEdgeTables, DeviceTablesAndSumsEqualTheHost) {
#if defined(TREE_EDGE_ON_DEVICE)
  ASSERT_TRUE(exec::device_count() > 0) << "the CUDA build's device tests need a visible GPU";
  exec::set_device(0);
#endif
  const long n = 4000;
  // On a grid of 0.05 in x and y: many equal coordinates; y = −0 for some, +0 for others.
  search::ClusterTree ct;
  const std::vector<double> pts = test::in_tree_order(ct, test::wavy_sheet(n, 11, 20.0), n, 40);  // tree order
  const auto& cl = ct.clusters();
  // Clusters from the root down to a leaf (the first child each time), and a second leaf.
  std::vector<int> picks;
  for (int c = 0;; c = cl[c].child[0]) {
    picks.push_back(c);
    if (cl[c].leaf()) break;
  }
  picks.push_back(ct.leaves().back());

  std::vector<model::EdgeTableSpec> specs;
  std::vector<mt::EdgeTable> host;
  std::vector<double> proxies;
  std::vector<long> prox_at;
  for (int c : picks)
    for (int p : {3, 8})
      for (int axis : {0, 1})
        for (long block : {0L, 5L}) {
          int dg[3];
          const int m = mt::grid_degrees(cl[c], p, 0.4, dg);
          prox_at.push_back(static_cast<long>(proxies.size()));
          proxies.resize(proxies.size() + 6 * size_t(m));
          mt::interpolate(cl[c], dg, pts.data(), n, cl[c].begin, cl[c].end, &proxies[prox_at.back()], m);
          model::EdgeTableSpec e;
          e.src = cl[c].begin;
          e.stride = n;
          e.n = cl[c].count();
          e.prox = prox_at.back();
          e.m = m;
          e.axis = axis;
          e.block = block > 0 ? block : mt::edge_block(m);
          for (int d = 0; d < 3; ++d) {
            e.dg[d] = dg[d];
            e.lo[d] = cl[c].lo[d];
            e.hi[d] = cl[c].hi[d];
          }
          specs.push_back(e);
          host.emplace_back();
        }
  for (size_t k = 0; k < specs.size(); ++k) {
    const model::EdgeTableSpec& e = specs[k];
    mt::build_edge_table(cl[picks[k / 8]], pts.data(), n, e.axis, e.dg, &proxies[e.prox], e.m, host[k], e.block);
  }
  const exec::Buffer<double> dpts = in_space(pts), dprox = in_space(proxies);
  model::TreeEdgeDevice dev(kSpace);
  dev.share_sorted = 1;  // (device: shared sorted copies; the host always copies)
  dev.build(specs, dpts.data(), dprox.data(), 8);
  for (size_t k = 0; k < specs.size(); ++k) {
    const std::vector<double> s = dev.sorted(static_cast<int>(k)), q = dev.prefix(static_cast<int>(k));
    EXPECT_EQ(s, host[k].src) << "table " << k << ": the sorted sources differ";
    ASSERT_EQ(q.size(), host[k].prefix.size()) << "table " << k;
    double d = 0, m = 0;
    for (size_t i = 0; i < q.size(); ++i) {
      d = std::max(d, std::abs(q[i] - host[k].prefix[i]));
      m = std::max(m, std::abs(host[k].prefix[i]));
    }
    EXPECT_LE(d, 1e-12 * m) << "table " << k << " (" << specs[k].n << " sources, axis " << specs[k].axis << ", "
                            << specs[k].m << " proxies, block " << specs[k].block << ")";
  }

  // With share_sorted the device's fused tables share the sorted copy of the same sources (the
  // same cluster and axis at another degree or block: four tables each here); each table its own
  // copy (share_sorted = 0; the default is 1) must give the same bits, with more bytes. The host
  // always copies.
#if defined(TREE_EDGE_ON_DEVICE)
  EXPECT_EQ(dev.shared_tables, static_cast<long>(specs.size() * 3 / 4)) << "three of each four tables should share";
#else
  EXPECT_EQ(dev.shared_tables, 0);
#endif
  model::TreeEdgeDevice own(kSpace);
  own.share_sorted = 0;
  own.build(specs, dpts.data(), dprox.data(), 8);
  EXPECT_EQ(own.shared_tables, 0);
  for (size_t k = 0; k < specs.size(); ++k) {
    EXPECT_EQ(own.sorted(static_cast<int>(k)), dev.sorted(static_cast<int>(k))) << "table " << k << ", own copies";
    EXPECT_EQ(own.prefix(static_cast<int>(k)), dev.prefix(static_cast<int>(k))) << "table " << k << ", own copies";
  }
  if (kSpace == exec::Space::Device) EXPECT_GT(own.bytes, dev.bytes);

  // Built in groups of tables (as big runs are, to bound the Lagrange values held), by the
  // Lagrange values' buffer and the block sums as two passes (the device's fused kernel is the
  // default there): the same bits.
  model::TreeEdgeDevice grouped(kSpace);
  grouped.max_lagrange_items = 700;
  grouped.table_variant = 0;
  grouped.build(specs, dpts.data(), dprox.data(), 8);
  for (size_t k = 0; k < specs.size(); ++k) {
    EXPECT_EQ(grouped.sorted(static_cast<int>(k)), dev.sorted(static_cast<int>(k))) << "table " << k;
    EXPECT_EQ(grouped.prefix(static_cast<int>(k)), dev.prefix(static_cast<int>(k))) << "table " << k;
  }

  // Sums: every leaf a batch; its terms cut by the window's edge (period 6 over points in [−3, 3]:
  // image ±2 along the table's axis is taken by the pairs at separation ≥ 3 only), in list order.
  model::BRImages img;
  img.k = 1;
  img.centred = true;
  img.period[0] = img.period[1] = 6.0;
  const double eps = 1e-4;
  const std::vector<int>& leaves = ct.leaves();
  const int nb = static_cast<int>(leaves.size());
  std::vector<long> first(nb + 1), start(nb + 1, 0);
  std::vector<model::EdgeTermDev> terms;
  std::vector<double> ref(3 * n, 0.0), got(3 * n, 0.0);
  long pp = 0, dp = 0, cut_terms = 0;
  for (int b = 0; b < nb; ++b) {
    const search::Cluster& B = cl[leaves[b]];
    first[b] = B.begin;
    mt::EdgeCounts counts;
    for (int i = 0; i < 3; ++i) {
      const int k = static_cast<int>((7 * b + 5 * i) % specs.size());
      const int side = (b + i) % 2 ? 2 : -2, other = (b + i) % 3 - 1;
      const int mx = specs[k].axis == 0 ? side : other, my = specs[k].axis == 0 ? other : side;
      terms.push_back({k, mx, my});
      const long before = counts.proxy_pairs + counts.direct_pairs;
      mt::edge_sum(host[k], mx, my, &pts[B.begin], &pts[n + B.begin], &pts[2 * n + B.begin], B.count(), img, eps,
                     &ref[B.begin], &ref[n + B.begin], &ref[2 * n + B.begin], counts);
      cut_terms += counts.proxy_pairs + counts.direct_pairs > before;
    }
    start[b + 1] = static_cast<long>(terms.size());
    pp += counts.proxy_pairs;
    dp += counts.direct_pairs;
  }
  first[nb] = n;
  dev.sum(dpts.data(), n, first, start, terms, img, eps, got.data());
  double d = 0, m = 0;
  for (long k = 0; k < 3 * n; ++k) {
    d = std::max(d, std::abs(got[k] - ref[k]));
    m = std::max(m, std::abs(ref[k]));
  }
  EXPECT_GT(cut_terms, nb / 4) << "too few terms take any source: the sums would test little";
  EXPECT_GT(pp, 0) << "no proxy pairs: the prefix rows would not be tested";
  EXPECT_GT(m, 0.0);
  EXPECT_LE(d, 1e-12 * m);
  EXPECT_EQ(dev.proxy_pairs, pp);
  EXPECT_EQ(dev.direct_pairs, dp);
  {
    std::vector<double> mine(3 * n, 0.0);
    own.sum(dpts.data(), n, first, start, terms, img, eps, mine.data());
    EXPECT_EQ(mine, got) << "the sums over tables with their own copies differ from the shared ones";
  }
  // Every variant of the device kernel (launch bounds, unrolling, the branch-free rsqrt, the warp
  // kernel with and without its staged rows): the same bits and counts.
  for (int v = 0; v < model::TreeEdgeDevice::kKernelVariants; ++v) {
    std::vector<double> again(3 * n, 0.0);
    dev.kernel_variant = v;
    dev.sum(dpts.data(), n, first, start, terms, img, eps, again.data());
    EXPECT_EQ(again, got) << "kernel variant " << v;
    EXPECT_EQ(dev.proxy_pairs, pp) << "kernel variant " << v;
    EXPECT_EQ(dev.direct_pairs, dp) << "kernel variant " << v;
  }
  dev.kernel_variant = model::TreeEdgeDevice::kKernelVariants;
  EXPECT_THROW(dev.sum(dpts.data(), n, first, start, terms, img, eps, got.data()), Error);
  // Batches of more than 64 targets (three leaves each: the warp kernel takes them 64 at a
  // time): every variant the bits of variant 0.
  {
    std::vector<long> f2{first[0]}, s2{0};
    for (int b = 0; b < nb; b += 3) {
      f2.push_back(first[std::min(b + 3, nb)]);
      s2.push_back(start[std::min(b + 3, nb)]);
    }
    // (the terms stay in list order: batch b/3 takes its three leaves' terms, for all its targets)
    ASSERT_GT(first[std::min(3, nb)] - first[0], 64) << "the merged batches should exceed 64 targets";
    std::vector<double> base(3 * n, 0.0);
    dev.kernel_variant = 0;
    dev.sum(dpts.data(), n, f2, s2, terms, img, eps, base.data());
    const long pp0 = dev.proxy_pairs, dp0 = dev.direct_pairs;
    EXPECT_GT(pp0, pp) << "the merged batches should take more proxy pairs";
    for (int v = 1; v < model::TreeEdgeDevice::kKernelVariants; ++v) {
      std::vector<double> again(3 * n, 0.0);
      dev.kernel_variant = v;
      dev.sum(dpts.data(), n, f2, s2, terms, img, eps, again.data());
      EXPECT_EQ(again, base) << "kernel variant " << v << ", merged batches";
      EXPECT_EQ(dev.proxy_pairs, pp0) << "kernel variant " << v << ", merged batches";
      EXPECT_EQ(dev.direct_pairs, dp0) << "kernel variant " << v << ", merged batches";
    }
  }
  dev.kernel_variant = -1;

  // In pieces, as the solver's pipelined edge stage queues them (and sorted as it sorts them):
  // the tables added in three pieces in another order (so numbered otherwise; the terms renumbered to match), the sums of
  // the batches in three pieces, each after the tables it reads: the one-shot bits and counts.
  // The same pieces with the terms left on the one-shot numbers must differ (the check can fail).
  const int nk = static_cast<int>(specs.size());
  std::vector<int> order(nk), number(nk);
  for (int k = 0; k < nk; ++k) order[k] = (k * 7 + 3) % nk;  // 7 and nk coprime: a permutation
  ASSERT_EQ(std::gcd(7, nk), 1);
  for (int k = 0; k < nk; ++k) number[order[k]] = k;
  const auto in_pieces = [&](bool renumber) {
    model::TreeEdgeDevice p(kSpace);
    p.radix_sort = true;  // as the solver's pieces (device: two radix sorts for the segmented one)
    p.share_sorted = 1;   // a table may share a copy sorted in an earlier piece
    p.begin(dpts.data(), dprox.data(), 8);
    p.begin_sums(dpts.data(), n, img, eps);
    const int cuts[4] = {0, nb / 3, 2 * nb / 3, nb};
    const int tcut[4] = {0, nk / 2, 3 * nk / 4, nk};
    for (int piece = 0; piece < 3; ++piece) {
      std::vector<model::EdgeTableSpec> some;
      for (int k = tcut[piece]; k < tcut[piece + 1]; ++k) some.push_back(specs[order[k]]);
      p.add_tables(some);
    }
    for (int piece = 0; piece < 3; ++piece) {  // (every table is added by now)
      const int b0 = cuts[piece], b1 = cuts[piece + 1];
      std::vector<long> f(first.begin() + b0, first.begin() + b1 + 1), st(b1 - b0 + 1, 0);
      std::vector<model::EdgeTermDev> t;
      for (int b = b0; b < b1; ++b) {
        for (long i = start[b]; i < start[b + 1]; ++i)
          t.push_back({renumber ? number[terms[i].table] : terms[i].table, terms[i].mx, terms[i].my});
        st[b - b0 + 1] = static_cast<long>(t.size());
      }
      p.add_sums(f, st, t);
    }
    p.wait();
    EXPECT_EQ(p.shared_tables, dev.shared_tables) << "a table shares a copy from an earlier piece too";
    EXPECT_EQ(p.table_pieces, 3);
    EXPECT_EQ(p.sum_pieces, 3);
    if (renumber) {
      EXPECT_EQ(p.proxy_pairs, pp);
      EXPECT_EQ(p.direct_pairs, dp);
      for (int k = 0; k < nk; ++k) EXPECT_EQ(p.sorted(number[k]), dev.sorted(k)) << "table " << k;
    }
    std::vector<double> u(3 * n), out(3 * n, 0.0);
    exec::copy(u.data(), exec::Space::Host, p.velocity(), kSpace, u.size());
    for (long k = 0; k < 3 * n; ++k) out[k] += u[k];  // as sum() adds them
    return out;
  };
  EXPECT_EQ(in_pieces(true), got) << "the tables and sums in pieces differ from the one-shot's";
  EXPECT_NE(in_pieces(false), got) << "the terms' table numbers did not matter: the check cannot fail";
  std::printf("[ compared ] %zu tables, %zu terms: max rel diff %.3e, proxy pairs %ld, direct pairs %ld\n",
              specs.size(), terms.size(), m > 0 ? d / m : d, pp, dp);
}
