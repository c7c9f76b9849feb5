// The cutoff solver's spatial decomposition: owners, balanced cuts, the ghost-target rule
// against a brute-force search, and a migration round trip of awkward particles (outside the
// box, far in z, all on one rank, empty ranks) that returns every particle to its origin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <tuple>

#include "beatnik/comm/cart_grid.hpp"
#include "beatnik/comm/context.hpp"
#include "beatnik/comm/migrate/migrator.hpp"
#include "beatnik/comm/migrate/registry.hpp"
#include "beatnik/exec/counting_sort.hpp"
#include "beatnik/mesh/spatial_decomposition.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {

// The surface grid of the run (MPI_Dims_create), the box [−1, 1]².
struct Grid {
  std::array<int, 2> dims{0, 0};
  std::unique_ptr<comm::CartGrid> cart;
  explicit Grid(std::array<bool, 2> periodic = {true, true}) {
    int d[2] = {0, 0};
    MPI_Dims_create(test::world_size(), 2, d);
    dims = {d[0], d[1]};
    cart = std::make_unique<comm::CartGrid>(MPI_COMM_WORLD, dims, periodic);
  }
  mesh::SpatialDecomposition spatial(mesh::SpatialPartition p) const {
    return mesh::SpatialDecomposition(cart->comm(), dims, {-1.0, -1.0}, {1.0, 1.0}, p, exec::Space::Host);
  }
};

// Particles clustered near (0.3, −0.2), a few far outside the box; per rank, seeded by rank.
void clustered(long n, std::vector<double>& x, std::vector<double>& y) {
  std::mt19937_64 g(1234 + test::world_rank());
  std::normal_distribution<double> d(0.0, 0.15);
  for (long k = 0; k < n; ++k) {
    x.push_back(0.3 + d(g));
    y.push_back(-0.2 + d(g));
  }
  x.push_back(7.5);  // far beyond the box: an edge rank owns it
  y.push_back(-3.0);
}

std::vector<long> owned_counts(const mesh::SpatialView& v, const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<long> c(test::world_size(), 0);
  for (size_t k = 0; k < x.size(); ++k) ++c[v.owner(x[k], y[k])];
  MPI_Allreduce(MPI_IN_PLACE, c.data(), static_cast<int>(c.size()), MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return c;
}

double max_over_mean(const std::vector<long>& c) {
  double sum = 0, max = 0;
  for (long v : c) {
    sum += double(v);
    max = std::max(max, double(v));
  }
  return max / (sum / double(c.size()));
}

}  // namespace

// Every position has exactly one owner, whose cell (outer cuts: the global extent) holds it.
TEST(Spatial, OwnersHoldTheirPositions) {
  Grid grid;
  for (auto p : {mesh::SpatialPartition::Uniform, mesh::SpatialPartition::Balanced}) {
    auto sd = grid.spatial(p);
    std::vector<double> x, y;
    clustered(500, x, y);
    ASSERT_TRUE(sd.update(x.data(), y.data(), static_cast<long>(x.size())));
    const auto v = sd.host_view();
    for (size_t k = 0; k < x.size(); ++k) {
      const auto cell = sd.cell_of(v.owner(x[k], y[k]));
      EXPECT_TRUE(x[k] >= cell[0] && x[k] <= cell[1] && y[k] >= cell[2] && y[k] <= cell[3])
          << x[k] << ", " << y[k] << " not in its owner's cell";
    }
  }
}

// Balanced cuts spread clustered particles evenly; uniform boxes do not (so the check has teeth).
TEST(Spatial, BalancedPartitionEqualisesParticleCounts) {
  Grid grid;
  std::vector<double> x, y;
  clustered(4000, x, y);
  auto uniform = grid.spatial(mesh::SpatialPartition::Uniform);
  auto balanced = grid.spatial(mesh::SpatialPartition::Balanced);
  ASSERT_TRUE(uniform.update(x.data(), y.data(), static_cast<long>(x.size())));
  ASSERT_TRUE(balanced.update(x.data(), y.data(), static_cast<long>(x.size())));
  const double b = max_over_mean(owned_counts(balanced.host_view(), x, y));
  const double u = max_over_mean(owned_counts(uniform.host_view(), x, y));
  EXPECT_LE(b, 1.08) << "balanced max/mean";
  if (test::world_size() > 1) EXPECT_GT(u, 1.3) << "uniform max/mean";
}

// The ghost targets of a point are exactly the (rank, image) pairs whose widened cell holds the
// image, within the widened global extent; the point itself on its owner is not one of them.
TEST(Spatial, GhostTargetsEqualABruteForceSearch) {
  for (bool periodic : {true, false}) {
    Grid grid({periodic, periodic});
    auto sd = grid.spatial(mesh::SpatialPartition::Balanced);
    std::vector<double> x, y;
    clustered(300, x, y);
    ASSERT_TRUE(sd.update(x.data(), y.data(), static_cast<long>(x.size())));
    const auto v = sd.host_view();
    const double period[2] = {periodic ? 2.0 : 0.0, periodic ? 2.0 : 0.0};
    for (double reach : {0.1, 0.7, 2.3}) {
      for (size_t k = 0; k < x.size(); ++k) {
        const int self = v.owner(x[k], y[k]);
        std::set<std::tuple<int, long, long>> got, want;
        mesh::visit_ghost_targets(v, period, reach, self, x[k], y[k], [&](int r, double sx, double sy) {
          EXPECT_TRUE(got.insert({r, std::lround(sx * 2), std::lround(sy * 2)}).second) << "visited twice";
        });
        const int K = periodic ? 8 : 0;
        for (int a = -K; a <= K; ++a)
          for (int b = -K; b <= K; ++b) {
            const double xs = x[k] + a * period[0], ys = y[k] + b * period[1];
            if (xs < v.x_lo() - reach || xs > v.x_hi() + reach || ys < v.y_lo() - reach || ys > v.y_hi() + reach)
              continue;
            for (int r = 0; r < test::world_size(); ++r) {
              const auto c = sd.cell_of(r);
              if (xs < c[0] - reach || xs > c[1] + reach || ys < c[2] - reach || ys > c[3] + reach) continue;
              if (a == 0 && b == 0 && r == self) continue;
              want.insert({r, std::lround(a * period[0] * 2), std::lround(b * period[1] * 2)});
            }
          }
        // Cells are half-open and the widened extent is closed: ties at the very edge may go
        // either way, so the search checks points that are not on an edge to round-off.
        EXPECT_EQ(got, want) << "point " << x[k] << ", " << y[k] << " reach " << reach;
      }
    }
  }
}

// Awkward particles to their spatial owners and back, with every migration strategy: all on
// rank 0 (the others empty), outside the box, far in z. The return trip restores every record.
TEST(Spatial, MigrationRoundTripReturnsEveryParticleHome) {
  Grid grid;
  comm::Context ctx(MPI_COMM_WORLD);
  for (const std::string strategy : test::migrate_strategies())
    for (auto p : {mesh::SpatialPartition::Uniform, mesh::SpatialPartition::Balanced}) {
      auto sd = grid.spatial(p);
      std::vector<double> x, y, z;
      if (test::world_rank() == 0) {
        std::mt19937_64 g(99);
        std::uniform_real_distribution<double> u(-3.0, 3.0);
        for (int k = 0; k < 700; ++k) {
          x.push_back(u(g));
          y.push_back(u(g));
          z.push_back(k % 7 == 0 ? 1e6 * u(g) : u(g));
        }
      }
      const long n = static_cast<long>(x.size());
      ASSERT_TRUE(sd.update(x.data(), y.data(), n));
      const auto v = sd.host_view();
      std::vector<int> key(n);
      for (long k = 0; k < n; ++k) key[k] = v.owner(x[k], y[k]);
      exec::CountingSort sort(exec::Space::Host);
      sort.sort(key.data(), n, test::world_size());
      std::vector<long> counts(test::world_size());
      for (int r = 0; r < test::world_size(); ++r) counts[r] = sort.host_offsets()[r + 1] - sort.host_offsets()[r];
      std::vector<double> send(4 * n);
      for (long q = 0; q < n; ++q) {
        const long k = sort.order()[q];
        send[4 * q] = x[k], send[4 * q + 1] = y[k], send[4 * q + 2] = z[k], send[4 * q + 3] = double(k);
      }
      comm::CommStats stats;
      comm::Migrator m(grid.cart->comm(), exec::Space::Host, strategy, ctx.locality(grid.cart->comm()), &stats);
      std::vector<long> rcounts;
      exec::Buffer<double> recv(exec::Space::Host, 0);
      m.exchange(counts, send.data(), 4, rcounts, recv, "migrate");
      long got = 0;
      for (long c : rcounts) got += c;
      // Every record arrived at the owner of its position.
      for (long k = 0; k < got; ++k)
        EXPECT_EQ(v.owner(recv.data()[4 * k], recv.data()[4 * k + 1]), grid.cart->rank()) << strategy;
      std::vector<double> back(4 * n, -1.0);
      m.exchange_known(rcounts, recv.data(), 4, counts, back.data(), "migrate");
      EXPECT_EQ(back, send) << strategy;
      long total = got;
      MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      EXPECT_EQ(total, 700);
    }
}
