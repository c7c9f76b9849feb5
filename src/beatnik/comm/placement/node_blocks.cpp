// --placement node-blocks: each node a compact a x b block of the process grid, so that most
// halo partners (and FFT row/column partners) of a rank are on its node, as Cray's
// MPICH_RANK_REORDER grid_order does.
//
// The grid is cut into strips of height a (along dimension 0); cells are dealt out strip by
// strip, column by column inside a strip, row by row inside a column. Node n, in node order,
// takes the next (its size) cells; its ranks, in rank order, take them in row-major order.
// When every node has a x b ranks with a | Px and b | Py the nodes' cells are exactly the
// a x b tiles of the grid; otherwise (uneven node sizes) they are runs of width a, as compact
// as the sizes allow.
#include <algorithm>
#include <cmath>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/placement/placement.hpp"

namespace beatnik::comm::placement {

std::array<int, 2> node_block_shape(std::array<int, 2> dims, int node_size, std::array<double, 2> rank_extent) {
  // Least edge towards other nodes, in mesh nodes: a block as tall as the grid (or as wide) has
  // no edge in that dimension (periodic wrap onto itself, or the mesh's boundary). Ties: the
  // squarer block in ranks (it keeps more corner messages inside), then the shorter a.
  struct Pick {
    bool exact;
    double edge;
    int skew, a, b;
  };
  auto better = [](const Pick& p, const Pick& q) {
    if (p.exact != q.exact) return p.exact;
    if (p.edge != q.edge) return p.edge < q.edge;
    if (p.skew != q.skew) return p.skew < q.skew;
    return p.a < q.a;
  };
  const int s = std::max(node_size, 1);
  Pick best{false, HUGE_VAL, 0, 1, s};
  for (int a = 1; a <= std::min(s, dims[0]); ++a) {
    const int b = (s + a - 1) / a;
    const bool exact = s % a == 0 && dims[0] % a == 0 && b <= dims[1] && dims[1] % b == 0;
    const double edge = (a < dims[0] ? b * rank_extent[1] : 0.0) + (b < dims[1] ? a * rank_extent[0] : 0.0);
    const Pick p{exact, edge, std::abs(a - b), a, b};
    if (better(p, best)) best = p;
  }
  return {best.a, best.b};
}

std::vector<int> node_blocks(std::array<int, 2> dims, const std::vector<int>& node_of_rank,
                             std::array<double, 2> rank_extent) {
  const int ranks = dims[0] * dims[1];
  if (static_cast<int>(node_of_rank.size()) != ranks) throw Error("node-blocks placement: one node per rank needed");
  int nodes = 0;
  for (int n : node_of_rank) nodes = std::max(nodes, n + 1);
  std::vector<std::vector<int>> members(nodes);  // ranks of each node, in rank order
  for (int r = 0; r < ranks; ++r) members[node_of_rank[r]].push_back(r);
  int largest = 0;
  for (const auto& m : members) largest = std::max(largest, static_cast<int>(m.size()));
  const int a = node_block_shape(dims, largest, rank_extent)[0];

  std::vector<int> order;  // cells in dealing order
  order.reserve(ranks);
  for (int i0 = 0; i0 < dims[0]; i0 += a)
    for (int j = 0; j < dims[1]; ++j)
      for (int i = i0; i < std::min(i0 + a, dims[0]); ++i) order.push_back(i * dims[1] + j);

  std::vector<int> cell_of_rank(ranks);
  size_t next = 0;
  for (const auto& m : members) {
    std::vector<int> mine(order.begin() + next, order.begin() + next + m.size());
    next += m.size();
    std::sort(mine.begin(), mine.end());  // row-major inside the block
    for (size_t k = 0; k < m.size(); ++k) cell_of_rank[m[k]] = mine[k];
  }
  return cell_of_rank;
}

}  // namespace beatnik::comm::placement
