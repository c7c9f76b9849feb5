// Rank placement on 8 ranks with --ranks-per-node making the nodes: the on-node / off-node
// halo bytes each placement gives, against a count by hand, and the halo still delivering
// every ghost from its right owner whichever rank holds a cell.
//
// Setup of every case: periodic 16 x 16 mesh, halo of depth 2 with corners, one component
// (8 B per value), one exchange.
//
// Case A: grid 4 x 2, 2 ranks per node. A rank owns 4 x 8 nodes (ni = 4, nj = 8) and sends
//   i-faces (di = ±1): 2 x 8 = 16 values = 128 B each, to (i±1, j): two different ranks;
//   j-faces (dj = ±1): 4 x 2 =  8 values =  64 B each, both to (i, 1-j) (Py = 2);
//   corners:           2 x 2 =  4 values =  32 B each, to (i±1, 1-j).
//   Per rank 2·128 + 2·64 + 4·32 = 512 B; 8 ranks: 4096 B, none to itself.
//   linear: node n holds ranks 2n, 2n+1 = cells (n, 0), (n, 1), a grid row. On the node: the
//     two j-faces, 128 B per rank -> 1024 B; off: 3072 B.
//   node-blocks: 1 x 2 (edge 2·8 = 16 mesh nodes) and 2 x 1 (8 + 2·4 = 16) tie; the shorter
//     a wins, 1 x 2: the linear map. 2 x 1 blocks (given as a file: node = cells (2m, j),
//     (2m+1, j)) count the same: one i-face on the node, 128 B per rank -> 1024 B; off 3072 B.
//     On this grid a rank has one node partner either way, reached by one 128 B face or by
//     two 64 B faces.
//   file (scattered): node n's two ranks on cells that are not neighbours, (i, j) and
//     (i+2, 1-j): nothing on the node, 4096 B off.
// Case B: grid 2 x 4, 4 ranks per node. A rank owns 8 x 4 nodes (ni = 8, nj = 4) and sends
//   i-faces: 2 x 4 = 8 values = 64 B each, both to (1-i, j) (Px = 2);
//   j-faces: 8 x 2 = 16 values = 128 B each, to (i, j±1): two different ranks;
//   corners: 32 B each, (±1, +1) to (1-i, j+1) and (±1, -1) to (1-i, j-1).
//   Per rank 2·64 + 2·128 + 4·32 = 512 B; 4096 B in all.
//   linear: node n = row n (1 x 4). On the node: both j-faces, 256 B per rank -> 2048 B;
//     off: 2048 B.
//   node-blocks: 2 x 2 blocks (columns 0-1 and 2-3; half-perimeter 2·8 + 2·4 = 24 ties 1 x 4,
//     the squarer wins). On the node: both i-faces (128) + one j-face (128) + the two corners
//     towards the block's other column (64) = 320 B per rank -> 2560 B; off: one j-face + two
//     corners = 192 B per rank -> 1536 B.
// Without --ranks-per-node all 8 ranks are on this one machine: 4096 B on the node.
#include <gtest/gtest.h>

#include <sstream>

#include "beatnik/app/problem.hpp"
#include "beatnik/comm/context.hpp"
#include "beatnik/comm/halo_exchange.hpp"
#include "beatnik/comm/placement/placement.hpp"
#include "beatnik/mesh/surface_mesh.hpp"
#include "support/test_support.hpp"

using namespace beatnik;
namespace pl = beatnik::comm::placement;

namespace {

constexpr int kN = 16;

struct Bytes {
  long self = 0, on = 0, off = 0;
};

// Node n's ranks 2n, 2n+1 on cells (2m, j), (2m+1, j), m = n / 2, j = n % 2: 2 x 1 blocks.
constexpr const char* kColumnPairs = "0 0 0\n1 1 0\n2 0 1\n3 1 1\n4 2 0\n5 3 0\n6 2 1\n7 3 1\n";
// Node n's ranks 2n, 2n+1 on cells (i, j) and (i+2, 1-j) of the 4 x 2 grid: never neighbours.
constexpr const char* kScattered = "0 0 0\n1 2 1\n2 0 1\n3 2 0\n4 1 0\n5 3 1\n6 1 1\n7 3 0\n";

// One halo exchange under `placement`; the bytes summed over ranks. Also checks that every
// ghost holds the value of the node it mirrors (global index, wrapped periodically).
Bytes halo_bytes(std::array<int, 2> procs, int ranks_per_node, const std::string& placement,
                 const std::string& map_text = "") {
  comm::Context ctx(MPI_COMM_WORLD, ranks_per_node);
  const mesh::Geometry geom = app::make_geometry(app::Profile::Consistent, true, kN, 1.0);
  pl::Options p = pl::parse(placement);
  if (p.policy == pl::Policy::File) {
    std::istringstream in(map_text);
    p.file_cells = pl::read_map(in, "test map", procs);
  }
  mesh::SurfaceMesh m(ctx, geom, procs, nullptr, p);
  const GhostedLayout L = m.layout();
  std::vector<double> plane(static_cast<size_t>(L.plane()), -1.0);
  const Box2& own = m.owned();
  for (int i = 0; i < L.ni; ++i)
    for (int j = 0; j < L.nj; ++j) plane[L.index(i, j)] = (own.lo[0] + i) * kN + (own.lo[1] + j);
  comm::CommStats stats;
  comm::HaloExchange h(m.grid(), L, comm::HaloPattern{2, true}, 1, exec::Space::Host, m.locality(), &stats, "halo");
  comm::ComponentSet cs;
  cs.add(plane.data());
  h.exchange(cs);
  bool right = true;
  for (int i = -2; i < L.ni + 2; ++i)
    for (int j = -2; j < L.nj + 2; ++j) {
      const int gi = (own.lo[0] + i + kN) % kN, gj = (own.lo[1] + j + kN) % kN;
      right = right && plane[L.index(i, j)] == gi * kN + gj;
    }
  EXPECT_TRUE(test::all_ranks(right)) << placement << ": a ghost holds the wrong node's value";
  const comm::PatternStats s = stats.stats().at("halo");
  long b[3] = {s.bytes[0], s.bytes[1], s.bytes[2]};
  MPI_Allreduce(MPI_IN_PLACE, b, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return {b[0], b[1], b[2]};
}

}  // namespace

TEST(PlacementAccounting, FourByTwoTwoPerNode) {
  ASSERT_EQ(test::world_size(), 8);
  const Bytes lin = halo_bytes({4, 2}, 2, "linear");
  EXPECT_EQ(lin.self, 0);
  EXPECT_EQ(lin.on, 1024);
  EXPECT_EQ(lin.off, 3072);
  const Bytes nb = halo_bytes({4, 2}, 2, "node-blocks");
  EXPECT_EQ(nb.self, 0);
  EXPECT_EQ(nb.on, 1024);
  EXPECT_EQ(nb.off, 3072);
  const Bytes cols = halo_bytes({4, 2}, 2, "file:columns", kColumnPairs);
  EXPECT_EQ(cols.on, 1024);
  EXPECT_EQ(cols.off, 3072);
  const Bytes sc = halo_bytes({4, 2}, 2, "file:scattered", kScattered);
  EXPECT_EQ(sc.on, 0);
  EXPECT_EQ(sc.off, 4096);
}

TEST(PlacementAccounting, TwoByFourFourPerNode) {
  ASSERT_EQ(test::world_size(), 8);
  const Bytes lin = halo_bytes({2, 4}, 4, "linear");
  EXPECT_EQ(lin.on, 2048);
  EXPECT_EQ(lin.off, 2048);
  const Bytes nb = halo_bytes({2, 4}, 4, "node-blocks");
  EXPECT_EQ(nb.self, 0);
  EXPECT_EQ(nb.on, 2560);
  EXPECT_EQ(nb.off, 1536);
}

// Every placement moves the same 4096 B; only the split between on- and off-node changes.
TEST(PlacementAccounting, TotalsAgreeAndOneMachineIsOneNode) {
  ASSERT_EQ(test::world_size(), 8);
  for (const char* p : {"linear", "cart", "node-blocks", "random"}) {
    const Bytes b = halo_bytes({2, 4}, 2, p);
    EXPECT_EQ(b.self + b.on + b.off, 4096) << p;
    const Bytes one = halo_bytes({4, 2}, 0, p);  // the machine's nodes: all ranks on this one
    EXPECT_EQ(one.on, 4096) << p;
    EXPECT_EQ(one.off, 0) << p;
  }
}

// --ranks-per-node K that does not divide the ranks: the last node is smaller.
TEST(PlacementAccounting, RanksPerNodeLastNodeSmaller) {
  comm::Context ctx(MPI_COMM_WORLD, 3);
  EXPECT_EQ(ctx.node_count(), 3);
  EXPECT_EQ(ctx.node_of_rank(), (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2}));
  EXPECT_EQ(ctx.machine_node_of_rank(), std::vector<int>(8, 0));
}
