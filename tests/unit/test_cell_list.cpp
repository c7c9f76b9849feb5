// The cutoff solver's local building blocks on the host: the stable counting sort against
// std::stable_sort, the cell list (every point in its cell, every pair within the radius in
// neighbouring cells, degenerate and capped grids), and the cutoff Birkhoff–Rott sum against
// a brute-force double loop with the same distance test.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "beatnik/base/error.hpp"
#include "beatnik/exec/counting_sort.hpp"
#include "beatnik/model/br_cutoff_block.hpp"
#include "beatnik/search/cell_list.hpp"
#include "unit/cell_list_cases.hpp"

using namespace beatnik;

namespace {

const exec::Space kHost = exec::Space::Host;

// std::stable_sort of the indices by key, and the offsets counted directly.
void reference_sort(const std::vector<int>& keys, int nkeys, std::vector<long>& order, std::vector<long>& off) {
  order.resize(keys.size());
  std::iota(order.begin(), order.end(), 0L);
  std::stable_sort(order.begin(), order.end(), [&](long a, long b) { return keys[a] < keys[b]; });
  off.assign(nkeys + 1, 0);
  for (int k : keys) ++off[k + 1];
  for (int k = 0; k < nkeys; ++k) off[k + 1] += off[k];
}

void expect_sorted_like_reference(exec::CountingSort& s, const std::vector<int>& keys, int nkeys) {
  std::vector<long> order, off;
  reference_sort(keys, nkeys, order, off);
  s.sort(keys.data(), long(keys.size()), nkeys);
  const std::vector<long> got(s.order(), s.order() + keys.size());
  EXPECT_EQ(got, order) << "n = " << keys.size() << ", nkeys = " << nkeys;
  const std::vector<long> got_off(s.offsets(), s.offsets() + nkeys + 1);
  EXPECT_EQ(got_off, off);
  EXPECT_EQ(s.host_offsets(), off);
}

std::vector<int> random_keys(long n, int nkeys, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, nkeys - 1);
  std::vector<int> k(n);
  for (auto& v : k) v = d(rng);
  return k;
}

// Runs f with t OpenMP threads, then restores the previous count.
template <class F>
void with_threads(int t, F f) {
  const int old = omp_get_max_threads();
  omp_set_num_threads(t);
  f();
  omp_set_num_threads(old);
}

long cell_of_point(const search::CellGrid& g, double x, double y, double z) {
  return g.index(g.coord(0, x), g.coord(1, y), g.coord(2, z));
}

// Checks the structure of a built cell list over points P and that every pair within the
// radius (double test, and the float32 test) lies in neighbouring cells.
void check_cell_list(const search::CellList& cl, const test::Points& P, double radius, long max_cells) {
  const search::CellGrid& g = cl.grid();
  const long n = P.size(), cells = g.count();
  SCOPED_TRACE(P.name);
  ASSERT_LE(cells, max_cells);
  for (int d = 0; d < 3; ++d) ASSERT_GE(g.n[d], 1);
  if (cells < max_cells / 27)  // not capped: every split dimension has cells of at least the radius
    for (int d = 0; d < 3; ++d)
      if (g.n[d] > 1) EXPECT_GE(1.0 / g.inv[d], radius) << "dimension " << d;
  const long* start = cl.cell_start();
  EXPECT_EQ(start[0], 0);
  EXPECT_EQ(start[cells], n);
  std::vector<long> cell(n, -1);
  std::vector<int> seen(n, 0);
  for (long c = 0; c < cells; ++c) {
    ASSERT_LE(start[c], start[c + 1]);
    for (long p = start[c]; p < start[c + 1]; ++p) {
      const long k = cl.order()[p];
      ASSERT_GE(k, 0);
      ASSERT_LT(k, n);
      ++seen[k];
      cell[k] = c;
      if (p > start[c]) EXPECT_LT(cl.order()[p - 1], k) << "a cell keeps the input order";
      EXPECT_EQ(cell_of_point(g, P.x[k], P.y[k], P.z[k]), c);
      // The point lies in its cell's box (up to round-off; clamped cells reach the box edge).
      const double v[3] = {P.x[k], P.y[k], P.z[k]};
      const int cc[3] = {int(c / (long(g.n[1]) * g.n[2])), int(c / g.n[2] % g.n[1]), int(c % g.n[2])};
      for (int d = 0; d < 3; ++d) {
        if (g.inv[d] == 0.0) continue;
        const double t = (v[d] - g.lo[d]) * g.inv[d];
        EXPECT_GE(t, cc[d] - 1e-9);
        EXPECT_LE(t, cc[d] + 1 + 1e-9);
      }
    }
  }
  for (long k = 0; k < n; ++k) ASSERT_EQ(seen[k], 1) << "point " << k << " must be in exactly one cell";
  long close = 0;
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) {
      if (!test::within(P.x[i], P.y[i], P.z[i], P.x[j], P.y[j], P.z[j], radius, false) &&
          !test::within(P.x[i], P.y[i], P.z[i], P.x[j], P.y[j], P.z[j], radius, true))
        continue;
      ++close;
      const long a = cell[i], b = cell[j];
      const long az = a % g.n[2], ay = a / g.n[2] % g.n[1], ax = a / (long(g.n[1]) * g.n[2]);
      const long bz = b % g.n[2], by = b / g.n[2] % g.n[1], bx = b / (long(g.n[1]) * g.n[2]);
      ASSERT_LE(std::abs(ax - bx), 1) << i << " " << j;
      ASSERT_LE(std::abs(ay - by), 1) << i << " " << j;
      ASSERT_LE(std::abs(az - bz), 1) << i << " " << j;
    }
  EXPECT_GE(close, n);  // at least the self pairs: the check visited the pairs
}

}  // namespace

TEST(CountingSort, MatchesStableSort) {
  exec::CountingSort s(kHost);
  expect_sorted_like_reference(s, random_keys(10000, 37, 1), 37);
  expect_sorted_like_reference(s, random_keys(5000, 1 << 20, 2), 1 << 20);  // large nkeys, mostly empty
  expect_sorted_like_reference(s, random_keys(1000, 1, 3), 1);              // one key: the identity
  expect_sorted_like_reference(s, {}, 1);
  expect_sorted_like_reference(s, {}, 7);  // n = 0: every offset 0
  expect_sorted_like_reference(s, random_keys(300, 5, 4), 5);  // smaller after larger: scratch reused
  // Several threads (each counts its own chunk) give the same, stable, result.
  with_threads(3, [&] {
    exec::CountingSort t(kHost);
    expect_sorted_like_reference(t, random_keys(200000, 50, 5), 50);
    expect_sorted_like_reference(t, random_keys(100001, 3, 6), 3);
  });
}

TEST(CountingSort, RejectsKeysOutOfRange) {
  exec::CountingSort s(kHost);
  std::vector<int> keys{0, 1, 4, 2};
  EXPECT_THROW(s.sort(keys.data(), 4, 4), Error);
  keys[2] = -1;
  EXPECT_THROW(s.sort(keys.data(), 4, 4), Error);
}

TEST(CellList, EveryPointInItsCellAndEveryClosePairInNeighbouringCells) {
  const double radius = 0.125;
  search::CellList cl(kHost);
  for (const auto& P : test::point_sets(radius)) {
    const long max_cells = P.name == "big box" ? 1000 : 1 << 22;
    cl.build(P.x.data(), P.y.data(), P.z.data(), P.size(), radius, max_cells);
    check_cell_list(cl, P, radius, max_cells);
    if (P.name == "big box") {
      EXPECT_GT(cl.grid().count(), 500) << "capping keeps close to max_cells cells";
    }
    if (P.name == "plane" || P.name == "identical" || P.name == "single" || P.name == "empty") {
      EXPECT_EQ(cl.grid().n[2], 1);
    }
    if (P.name == "identical" || P.name == "single" || P.name == "empty") {
      EXPECT_EQ(cl.grid().count(), 1);
    }
  }
}

TEST(CellList, RejectsABadRadiusAndInfiniteCoordinates) {
  search::CellList cl(kHost);
  std::vector<double> x{0.0, 1.0}, y{0.0, 1.0}, z{0.0, 1.0};
  EXPECT_THROW(cl.build(x.data(), y.data(), z.data(), 2, 0.0), InputError);
  z[1] = 1.0 / 0.0;
  EXPECT_THROW(cl.build(x.data(), y.data(), z.data(), 2, 0.1), SimulationError);
}

// The kernel against brute force with cells of `cell` × c, one and three threads (the same sums
// bit for bit: each target's order is fixed). Returns the pairs found per test (double, float32).
namespace {
std::array<unsigned long long, 2> check_host_kernel(const test::Particles& P, double c, double cell) {
  const long n = P.p.size(), nt = P.nt;
  search::CellList cl(kHost);
  cl.build(P.p.x.data(), P.p.y.data(), P.p.z.data(), n, cell * c);
  const std::vector<long> order(cl.order(), cl.order() + n);
  const std::vector<double> src = test::sorted_sources(P, order);
  std::array<unsigned long long, 2> found{0, 0};
  for (int f32 = 0; f32 < 2; ++f32)
    for (double eps : {0.0, 1e-3}) {
      SCOPED_TRACE(testing::Message() << "cell " << cell << ", float32 " << f32 << ", eps " << eps);
      unsigned long long ref_pairs = 0;
      const std::vector<double> ref = test::brute_force(P, c, f32, eps, ref_pairs);
      std::vector<double> acc(3 * nt, 1e300);  // overwritten
      unsigned long long pairs = 5;            // added to
      model::BRCutoffArgs a =
          test::cutoff_args(src.data(), n, order.data(), nt, cl.grid(), cl.cell_start(), c, f32, eps);
      a.acc = acc.data();
      a.pairs = &pairs;
      model::br_cutoff_host(a);
      EXPECT_EQ(pairs - 5, ref_pairs);
      EXPECT_LE(test::max_rel(acc, ref, nt), 1e-12);
      for (double v : acc) EXPECT_TRUE(std::isfinite(v));
      found[f32] = ref_pairs;
      std::vector<double> acc3(3 * nt);
      a.acc = acc3.data();
      a.pairs = nullptr;
      with_threads(3, [&] { model::br_cutoff_host(a); });
      EXPECT_EQ(acc3, acc);
    }
  return found;
}
}  // namespace

TEST(BRCutoff, HostMatchesBruteForce) {
  const double c = 0.25;  // a power of two: the lattice pairs sit at exactly the cutoff
  const auto found = check_host_kernel(test::cutoff_particles(c, 2500, 600), c, 1.0);
  // The case has teeth: the float32 test accepts pairs the double test rejects.
  EXPECT_GT(found[1], found[0]);
}

// The kernel finds the cells to test from the grid geometry, so any cell size gives the same
// pairs, and sums equal to round-off (the order within a target is the same; the SIMD lanes
// may split it differently).
TEST(BRCutoff, HostAnyCellSize) {
  const double c = 0.25;
  const test::Particles P = test::cutoff_particles(c, 2500, 600);
  for (double cell : {0.5, 0.3, 1.7}) check_host_kernel(P, c, cell);
}
