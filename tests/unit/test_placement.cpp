// Rank placement maps (comm/placement): pure functions, no MPI. Every map must be a
// permutation of the cells; node-blocks must give each node a compact block; a map file must
// be refused with the line of its first mistake.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/placement/placement.hpp"

using namespace beatnik;
namespace pl = beatnik::comm::placement;

namespace {

std::vector<int> nodes_of(int ranks, int per_node) {
  std::vector<int> n(ranks);
  for (int r = 0; r < ranks; ++r) n[r] = r / per_node;
  return n;
}

// The bounding box (rows, columns) of every node's cells, node by node.
std::vector<std::array<int, 2>> node_boxes(std::array<int, 2> dims, const std::vector<int>& cells,
                                           const std::vector<int>& node_of_rank) {
  int nodes = *std::max_element(node_of_rank.begin(), node_of_rank.end()) + 1;
  std::vector<std::array<int, 4>> b(nodes, {1 << 30, -1, 1 << 30, -1});
  for (size_t r = 0; r < cells.size(); ++r) {
    const int i = cells[r] / dims[1], j = cells[r] % dims[1];
    auto& x = b[node_of_rank[r]];
    x = {std::min(x[0], i), std::max(x[1], i), std::min(x[2], j), std::max(x[3], j)};
  }
  std::vector<std::array<int, 2>> out;
  for (const auto& x : b) out.push_back({x[1] - x[0] + 1, x[3] - x[2] + 1});
  return out;
}

std::vector<int> read(const std::string& text, std::array<int, 2> dims) {
  std::istringstream in(text);
  return pl::read_map(in, "map", dims);
}

// The InputError message of reading `text`, or "" when it reads.
std::string refusal(const std::string& text, std::array<int, 2> dims) {
  try {
    read(text, dims);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Placement, ParseNames) {
  EXPECT_EQ(pl::parse("linear").policy, pl::Policy::Linear);
  EXPECT_EQ(pl::parse("cart").policy, pl::Policy::Cart);
  EXPECT_EQ(pl::parse("node-blocks").policy, pl::Policy::NodeBlocks);
  EXPECT_EQ(pl::parse("random", 7).seed, 7u);
  const pl::Options f = pl::parse("file:/tmp/map.txt");
  EXPECT_EQ(f.policy, pl::Policy::File);
  EXPECT_EQ(f.path, "/tmp/map.txt");
  EXPECT_THROW(pl::parse("file:"), InputError);
  EXPECT_THROW(pl::parse("hilbert"), InputError);
  EXPECT_THROW(pl::parse("Linear"), InputError);
}

TEST(Placement, LinearIsIdentity) {
  const auto c = pl::linear(6);
  for (int r = 0; r < 6; ++r) EXPECT_EQ(c[r], r);
}

// 8 ranks, 2 per node, 4 x 2 grid, counted in ranks: a 1 x 2 block spans the grid's width, so
// its only edges are across i (2 x 1 ranks long) against 1 + 2 for a 2 x 1 block. Node n = row
// n: the linear map itself.
TEST(Placement, NodeBlocksEightRanksTwoPerNodeSquareBoxes) {
  const auto c = pl::node_blocks({4, 2}, nodes_of(8, 2));
  EXPECT_EQ(c, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(pl::node_block_shape({4, 2}, 2, {1, 1}), (std::array<int, 2>{1, 2}));
}

// The same grid on a 16 x 16 mesh: a rank owns 4 x 8 nodes. 1 x 2: edge 2 x 8 = 16 mesh nodes
// across i, none across j (the block spans Py); 2 x 1: 8 across i + 2 x 4 across j = 16. A tie
// of the same squareness: the shorter a, rows again. (test_placement_accounting counts the
// same halo bytes for both.)
TEST(Placement, NodeBlocksEightRanksTwoPerNodeMeshShaped) {
  EXPECT_EQ(pl::node_block_shape({4, 2}, 2, {4, 8}), (std::array<int, 2>{1, 2}));
  EXPECT_EQ(pl::node_blocks({4, 2}, nodes_of(8, 2), {4, 8}), pl::linear(8));
  // Boxes of 8 x 2 nodes: 1 x 2 has edge 2 x 2 = 4, 2 x 1 has 2 + 2 x 8 = 18: rows. Boxes of
  // 2 x 8: 1 x 2 has 2 x 8 = 16, 2 x 1 has 8 + 2 x 2 = 12: columns, node n on cells
  // (2m, j), (2m+1, j) with m = n / 2, j = n % 2.
  EXPECT_EQ(pl::node_block_shape({4, 2}, 2, {8, 2}), (std::array<int, 2>{1, 2}));
  EXPECT_EQ(pl::node_block_shape({4, 2}, 2, {2, 8}), (std::array<int, 2>{2, 1}));
  EXPECT_EQ(pl::node_blocks({4, 2}, nodes_of(8, 2), {2, 8}), (std::vector<int>{0, 2, 1, 3, 4, 6, 5, 7}));
}

// 2 x 4 grid, 4 per node, square mesh (8 x 4 nodes per rank): 1 x 4 (edge 4 x 4 = 16 across
// i) and 2 x 2 (edge 2 x 8 = 16 across j; none across i, the block spans Px) tie; the squarer
// 2 x 2 wins (it keeps corners inside). Linear gives rows (1 x 4).
TEST(Placement, NodeBlocksTwoByFourFourPerNode) {
  const auto c = pl::node_blocks({2, 4}, nodes_of(8, 4), {8, 4});
  EXPECT_EQ(c, (std::vector<int>{0, 1, 4, 5, 2, 3, 6, 7}));
  const auto boxes = node_boxes({2, 4}, c, nodes_of(8, 4));
  for (const auto& b : boxes) EXPECT_EQ(b, (std::array<int, 2>{2, 2}));
}

// Exact tilings on larger grids: every node's cells are one a x b rectangle.
TEST(Placement, NodeBlocksTileExactly) {
  struct Case {
    std::array<int, 2> dims;
    int per_node;
    std::array<int, 2> block;
  };
  for (const Case& k : {Case{{8, 8}, 4, {2, 2}}, Case{{8, 8}, 16, {4, 4}}, Case{{4, 6}, 6, {2, 3}},
                        Case{{6, 4}, 8, {2, 4}}, Case{{16, 4}, 8, {2, 4}}, Case{{3, 3}, 9, {3, 3}}}) {
    const int ranks = k.dims[0] * k.dims[1];
    const auto nodes = nodes_of(ranks, k.per_node);
    const auto c = pl::node_blocks(k.dims, nodes);
    ASSERT_TRUE(pl::is_permutation(c));
    EXPECT_EQ(pl::node_block_shape(k.dims, k.per_node, {1, 1}), k.block);
    for (const auto& b : node_boxes(k.dims, c, nodes)) EXPECT_EQ(b, k.block) << k.dims[0] << "x" << k.dims[1];
  }
}

// Uneven nodes (the last one smaller, or nodes of different sizes, in any rank order) still
// give a permutation, with each node's ranks in row-major order inside its cells.
TEST(Placement, NodeBlocksUnevenNodesArePermutations) {
  for (int px = 1; px <= 6; ++px)
    for (int py = 1; py <= 6; ++py)
      for (int k = 1; k <= px * py; ++k) {
        const auto nodes = nodes_of(px * py, k);
        const auto c = pl::node_blocks({px, py}, nodes);
        ASSERT_TRUE(pl::is_permutation(c)) << px << "x" << py << " K=" << k;
        for (size_t r = 1; r < c.size(); ++r)
          if (nodes[r] == nodes[r - 1]) EXPECT_LT(c[r - 1], c[r]);
      }
  // Interleaved nodes (round-robin ranks, as some launchers place them).
  std::vector<int> rr(12);
  for (int r = 0; r < 12; ++r) rr[r] = r % 3;
  const auto c = pl::node_blocks({4, 3}, rr);
  ASSERT_TRUE(pl::is_permutation(c));
  for (const auto& b : node_boxes({4, 3}, c, rr)) EXPECT_LE(b[0] * b[1], 6);
}

TEST(Placement, RandomIsASeededPermutation) {
  for (int n : {1, 2, 5, 64, 1000}) {
    const auto a = pl::random(n, 1), b = pl::random(n, 1);
    EXPECT_TRUE(pl::is_permutation(a));
    EXPECT_EQ(a, b);
  }
  EXPECT_NE(pl::random(64, 1), pl::random(64, 2));
  EXPECT_NE(pl::random(64, 1), pl::linear(64));
}

TEST(Placement, IsPermutation) {
  EXPECT_TRUE(pl::is_permutation({2, 0, 1}));
  EXPECT_FALSE(pl::is_permutation({0, 0, 1}));
  EXPECT_FALSE(pl::is_permutation({0, 1, 3}));
  EXPECT_FALSE(pl::is_permutation({-1, 0, 1}));
}

TEST(Placement, MapFileReads) {
  const auto c = read("# rank i j\n0 1 1\n\n1 1 0   # comment\n2 0 1\n  3 0 0\n", {2, 2});
  EXPECT_EQ(c, (std::vector<int>{3, 2, 1, 0}));
}

TEST(Placement, MapFileRefusals) {
  const std::array<int, 2> d{2, 2};
  EXPECT_NE(refusal("0 0 0\n1 0 1\n2 1 0\n", d).find("1 rank(s) missing (3)"), std::string::npos);
  EXPECT_NE(refusal("0 0 0\n1 0 1\n1 1 0\n3 1 1\n", d).find("line 3: rank 1 is listed twice (first on line 2)"),
            std::string::npos);
  EXPECT_NE(refusal("0 0 0\n1 0 1\n2 0 1\n3 1 1\n", d).find("line 3: coordinate (0, 1) is given twice (first to rank 1"),
            std::string::npos);
  EXPECT_NE(refusal("0 0 0\n1 0 2\n", d).find("line 2: coordinate (0, 2) is outside the 2 x 2"), std::string::npos);
  EXPECT_NE(refusal("0 0 0\n4 0 1\n", d).find("line 2: rank 4 is not a rank of this run"), std::string::npos);
  EXPECT_NE(refusal("0 0 0\n1 0\n", d).find("line 2: expected 'rank i j'"), std::string::npos);
  EXPECT_NE(refusal("0 0 0 0\n", d).find("line 1: expected"), std::string::npos);
  EXPECT_NE(refusal("0 0 x\n", d).find("line 1: expected"), std::string::npos);
  EXPECT_NE(refusal("", d).find("4 rank(s) missing"), std::string::npos);
  EXPECT_THROW(pl::read_map_file("/nonexistent-dir/map.txt", d), InputError);
}
