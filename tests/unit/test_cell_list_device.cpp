// The cutoff solver's local building blocks with their data on the GPU (CUDA build only;
// needs a GPU): counting sort, cell list and cutoff Birkhoff–Rott sum against the host
// versions, which test_cell_list.cpp holds against std::stable_sort and brute force. The sort
// and the cell list must agree exactly (same keys, stable order), the sums to round-off, the
// pair counts exactly. Compiled by nvcc.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "beatnik/exec/counting_sort.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/model/br_cutoff_block.hpp"
#include "beatnik/search/cell_list.hpp"
#include "support/test_support.hpp"
#include "unit/cell_list_cases.hpp"

using namespace beatnik;

namespace {

const exec::Space kHost = exec::Space::Host, kDev = exec::Space::Device;

template <class T>
exec::Buffer<T> to_device(const std::vector<T>& v) {
  exec::Buffer<T> b(kDev, v.size());
  exec::copy(b.data(), kDev, v.data(), kHost, v.size());
  return b;
}
template <class T>
std::vector<T> to_host(const T* p, std::size_t n) {
  std::vector<T> v(n);
  exec::copy(v.data(), kHost, p, kDev, n);
  return v;
}

bool use_gpu() {
  if (exec::device_count() < 1) return false;
  exec::set_device(0);
  return true;
}

std::vector<int> random_keys(long n, int nkeys, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, nkeys - 1);
  std::vector<int> k(n);
  for (auto& v : k) v = d(rng);
  return k;
}

}  // namespace

TEST(CountingSortDevice, MatchesHost) {
  ASSERT_TRUE(use_gpu()) << "the CUDA build's device tests need a visible GPU";
  exec::CountingSort h(kHost), d(kDev);
  const std::vector<std::pair<long, int>> cases{{10000, 37}, {5000, 1 << 20}, {1000, 1}, {0, 1}, {0, 7},
                                                {300, 5}, {200000, 50}};
  unsigned seed = 1;
  for (auto [n, nkeys] : cases) {
    SCOPED_TRACE(testing::Message() << "n " << n << ", nkeys " << nkeys);
    const std::vector<int> keys = random_keys(n, nkeys, seed++);
    const exec::Buffer<int> dk = to_device(keys);
    h.sort(keys.data(), n, nkeys);
    d.sort(dk.data(), n, nkeys);
    EXPECT_EQ(to_host(d.order(), n), std::vector<long>(h.order(), h.order() + n));
    EXPECT_EQ(to_host(d.offsets(), nkeys + 1), h.host_offsets());
    EXPECT_EQ(d.host_offsets(), h.host_offsets());
  }
}

TEST(CellListDevice, MatchesHost) {
  ASSERT_TRUE(use_gpu()) << "the CUDA build's device tests need a visible GPU";
  const double radius = 0.125;
  search::CellList h(kHost), d(kDev);
  for (const auto& P : test::point_sets(radius)) {
    SCOPED_TRACE(P.name);
    const long n = P.size(), max_cells = P.name == "big box" ? 1000 : 1 << 22;
    const exec::Buffer<double> x = to_device(P.x), y = to_device(P.y), z = to_device(P.z);
    h.build(P.x.data(), P.y.data(), P.z.data(), n, radius, max_cells);
    d.build(x.data(), y.data(), z.data(), n, radius, max_cells);
    const search::CellGrid &gh = h.grid(), &gd = d.grid();
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(gd.n[k], gh.n[k]);
      EXPECT_EQ(gd.lo[k], gh.lo[k]);
      EXPECT_EQ(gd.inv[k], gh.inv[k]);
    }
    EXPECT_EQ(to_host(d.order(), n), std::vector<long>(h.order(), h.order() + n));
    EXPECT_EQ(to_host(d.cell_start(), gh.count() + 1),
              std::vector<long>(h.cell_start(), h.cell_start() + gh.count() + 1));
  }
}

TEST(BRCutoffDevice, MatchesHost) {
  ASSERT_TRUE(use_gpu()) << "the CUDA build's device tests need a visible GPU";
  const double c = 0.25;
  const test::Particles P = test::cutoff_particles(c, 2500, 600);
  const long n = P.p.size(), nt = P.nt;
  search::CellList cl(kHost);
  cl.build(P.p.x.data(), P.p.y.data(), P.p.z.data(), n, c);
  const std::vector<long> order(cl.order(), cl.order() + cl.size());
  const std::vector<long> start(cl.cell_start(), cl.cell_start() + cl.grid().count() + 1);
  const std::vector<double> src = test::sorted_sources(P, order);
  const exec::Buffer<double> dsrc = to_device(src);
  const exec::Buffer<long> dorder = to_device(order), dstart = to_device(start);
  exec::Buffer<double> dacc(kDev, 3 * nt);
  exec::Buffer<unsigned long long> dpairs(kDev, 1);
  for (int f32 = 0; f32 < 2; ++f32)
    for (double eps : {0.0, 1e-3}) {
      SCOPED_TRACE(testing::Message() << "float32 " << f32 << ", eps " << eps);
      model::BRCutoffArgs a =
          test::cutoff_args(src.data(), n, order.data(), nt, cl.grid(), start.data(), c, f32, eps);
      std::vector<double> acc(3 * nt);
      unsigned long long pairs = 0;
      a.acc = acc.data();
      a.pairs = &pairs;
      model::br_cutoff_host(a);
      a.sources = dsrc.data();
      a.order = dorder.data();
      a.cell_start = dstart.data();
      a.acc = dacc.data();
      a.pairs = dpairs.data();
      dpairs.zero();
      model::br_cutoff_device(a);
      exec::fence(kDev);
      EXPECT_EQ(to_host(dpairs.data(), 1)[0], pairs);
      EXPECT_LE(test::max_rel(to_host(dacc.data(), 3 * nt), acc, nt), 1e-12);
    }
}
