// The lower-degree sets' pass written for host and device (model/tree_low_device.hpp) against the
// host solver's low_strengths (tree_low.hpp), to 1e-12 of the largest strength: two trees in one
// run, as a rank's own tree and a LET part. The first has degree-p proxies on the clusters with
// more sources than proxies (sets coarsened from the proxies, from the previous set, and from
// the sources of the small clusters); the second has proxies on another grid (degree p + 1:
// the proxies taken as point sources) and clusters without their sources (no sets unless they
// have proxies). Built twice: host (test_tree_low) and, in the CUDA build, device
// (test_tree_low_device, needs a GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/space.hpp"
#include "beatnik/model/tree_br_solver.hpp"
#include "beatnik/model/tree_interp.hpp"
#include "beatnik/model/tree_low.hpp"
#include "beatnik/model/tree_low_device.hpp"
#include "support/test_support.hpp"
#include "unit/tree_test_points.hpp"

using namespace beatnik;

namespace {

#if defined(TREE_LOW_ON_DEVICE)
const exec::Space kSpace = exec::Space::Device;
#else
const exec::Space kSpace = exec::Space::Host;
#endif

// A tree over n sources on a wavy sheet with degree-`q` proxies (grid for degree q, valid at
// theta) where a cluster has more sources than them, computed on the host.
model::tree::SourceTree wavy_tree(long n, int leaf, int q, double theta, unsigned seed) {
  const std::vector<double> pts = test::wavy_sheet(n, seed);
  search::ClusterTree tree;
  model::tree::SourceTree t;
  model::build_source_tree(tree, pts.data(), n, leaf, t);
  const std::vector<int> deg = model::layout_proxies(t, q, theta);
  for (size_t c = 0; c < t.clusters.size(); ++c)
    if (t.proxies_of(int(c)))
      model::tree::interpolate(t.clusters[c], &deg[3 * c], t.pts.data(), t.n, t.clusters[c].begin, t.clusters[c].end,
                               &t.proxies[t.proxy_start[c]], t.proxy_count[c]);
  return t;
}

}  // namespace

TEST(TreeLow, PassEqualsTheHostSets) {
#if defined(TREE_LOW_ON_DEVICE)
  ASSERT_TRUE(exec::device_count() > 0) << "the CUDA build's device tests need a visible GPU";
  exec::set_device(0);
#endif
  const int p = 8;
  const double theta = 0.4;
  std::vector<model::tree::SourceTree> t{wavy_tree(6000, 40, p, theta, 7), wavy_tree(4000, 30, p + 1, theta, 11)};
  for (size_t c = 0; c < t[1].full.size(); c += 3) t[1].full[c] = 0;  // a LET part's opened clusters
  std::vector<model::tree::LowSets> want(2), got(2);
  long from[4] = {0, 0, 0, 0};
  for (int s = 0; s < 2; ++s) {
    model::tree::low_layout(t[s], p, theta, want[s]);
    model::tree::low_strengths(t[s], p, theta, want[s]);
    model::tree::low_layout(t[s], p, theta, got[s]);
    const int nc = static_cast<int>(t[s].clusters.size());
    for (int c = 0; c < nc; ++c)
      for (int k = want[s].first[c]; k < want[s].first[c + 1]; ++k) {
        int P[3];
        ++from[int(model::tree::low_from(t[s], want[s], c, k, p, theta, P))];
      }
  }
  // Every way of making a set is exercised.
  for (int f = 0; f < 4; ++f) EXPECT_GT(from[f], 0) << "no set made the way " << f;
  // Pools as the solver lays them out: sources of both trees; proxies of both, then the sets.
  std::vector<double> near, far;
  std::vector<model::TreeLowPass::Tree> trees(2);
  for (int s = 0; s < 2; ++s) {
    trees[s].t = &t[s];
    trees[s].l = &got[s];
    trees[s].near = static_cast<long>(near.size());
    near.insert(near.end(), t[s].pts.begin(), t[s].pts.end());
    trees[s].far = static_cast<long>(far.size());
    far.insert(far.end(), t[s].proxies.begin(), t[s].proxies.end());
  }
  for (int s = 0; s < 2; ++s) {
    trees[s].low = static_cast<long>(far.size());
    far.resize(far.size() + got[s].pts.size(), std::nan(""));
  }
  model::TreeLowPass pass(kSpace);
  exec::Buffer<double> dn(kSpace, near.size()), df(kSpace, far.size());
  for (int rep = 0; rep < 2; ++rep) {  // twice: the second run reuses its buffers
    exec::copy(dn.data(), kSpace, near.data(), exec::Space::Host, near.size());
    exec::copy(df.data(), kSpace, far.data(), exec::Space::Host, far.size());
    pass.run(trees, p, theta, dn.data(), df.data());
  }
  EXPECT_EQ(pass.sets, long(want[0].count.size() + want[1].count.size()));
  std::vector<double> out(far.size());
  exec::copy(out.data(), exec::Space::Host, df.data(), kSpace, far.size());
  double err = 0.0, scale = 0.0, perr = 0.0;
  for (int s = 0; s < 2; ++s) {
    const model::tree::LowSets& l = want[s];
    for (size_t k = 0; k < l.count.size(); ++k) {
      const long m = l.count[k];
      const double* w = &l.pts[l.start[k]];
      const double* g = &out[trees[s].low + l.start[k]];
      for (long i = 0; i < 3 * m; ++i) perr = std::max(perr, std::abs(g[i] - w[i]) / (1.0 + std::abs(w[i])));
      for (long i = 3 * m; i < 6 * m; ++i) {
        ASSERT_TRUE(std::isfinite(g[i])) << "set " << k << " of tree " << s << " not written";
        err = std::max(err, std::abs(g[i] - w[i]));
        scale = std::max(scale, std::abs(w[i]));
      }
    }
  }
  EXPECT_GT(scale, 0.0);
  EXPECT_LT(perr, 1e-15) << "the sets' points differ from the host's";
  EXPECT_LT(err, 1e-12 * scale) << "max error " << err << " of max " << scale;
  // A run that does not wait (the solver's overlapped call, docs/tree-log.md "The call's phases
  // overlapped"): its descriptors' upload and passes queued behind the pools' refill (queued
  // too), the sets read back after it returns: the waiting run's bits; its time from its events.
  exec::copy_async(df.data(), kSpace, far.data(), exec::Space::Host, far.size());
  pass.run(trees, p, theta, dn.data(), df.data(), false);
  std::vector<double> again(far.size());
  exec::copy(again.data(), exec::Space::Host, df.data(), kSpace, far.size());
  for (size_t i = 0; i < far.size(); ++i)
    if (!(std::isnan(out[i]) && std::isnan(again[i]))) ASSERT_EQ(again[i], out[i]) << "pool value " << i;
  if (kSpace != exec::Space::Host) EXPECT_TRUE(pass.pending());
  pass.finish();
  EXPECT_FALSE(pass.pending());
  if (kSpace != exec::Space::Host) EXPECT_GT(pass.kernel_s, 0.0);
}
