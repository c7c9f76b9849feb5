// exec::split_interior (the --halo-overlap split): interior and border strips cover a block
// exactly once; an interior node's stencil of reach R stays inside the block; every border
// node's stencil leaves it (the interior is as large as it can be); thin blocks are all border.
#include <gtest/gtest.h>

#include <vector>

#include "beatnik/exec/interior_split.hpp"

using namespace beatnik;

namespace {

bool inside(const exec::Range2& r, int i, int j) { return i >= r.i0 && i < r.i1 && j >= r.j0 && j < r.j1; }

void check(exec::Range2 block, int reach) {
  const exec::InteriorSplit s = exec::split_interior(block, reach);
  const int ni = block.i1 - block.i0, nj = block.j1 - block.j0;
  std::vector<int> visits(static_cast<size_t>(ni) * nj, 0), interior(visits.size(), 0);
  auto count = [&](const exec::Range2& r, bool is_interior) {
    for (int i = r.i0; i < r.i1; ++i)
      for (int j = r.j0; j < r.j1; ++j) {
        ASSERT_TRUE(inside(block, i, j)) << i << "," << j;
        const size_t k = static_cast<size_t>(i - block.i0) * nj + (j - block.j0);
        ++visits[k];
        if (is_interior) interior[k] = 1;
      }
  };
  count(s.interior, true);
  for (int b = 0; b < s.nborder; ++b) count(s.border[b], false);
  for (int i = block.i0; i < block.i1; ++i)
    for (int j = block.j0; j < block.j1; ++j) {
      const size_t k = static_cast<size_t>(i - block.i0) * nj + (j - block.j0);
      EXPECT_EQ(visits[k], 1) << "node " << i << "," << j << " of " << ni << "x" << nj << " reach " << reach;
      const bool stencil_inside = inside(block, i - reach, j - reach) && inside(block, i + reach, j + reach);
      EXPECT_EQ(interior[k] == 1, stencil_inside) << "node " << i << "," << j << " of " << ni << "x" << nj;
    }
}

}  // namespace

TEST(InteriorSplit, CoversEveryNodeOnceAndKeepsStencilsInside) {
  for (int reach : {1, 2, 3})
    for (int ni : {1, 2, 3, 4, 5, 6, 7, 11})
      for (int nj : {1, 3, 4, 5, 9, 16}) {
        check(exec::Range2{0, ni, 0, nj}, reach);
        check(exec::Range2{-3, ni - 3, 5, nj + 5}, reach);  // offset blocks
      }
}

TEST(InteriorSplit, ThinBlocksAreAllBorder) {
  const exec::InteriorSplit s = exec::split_interior(exec::Range2{0, 4, 0, 100}, 2);
  EXPECT_EQ(s.interior.count(), 0);
  ASSERT_EQ(s.nborder, 1);
  EXPECT_EQ(s.border[0].count(), 400);
  EXPECT_EQ(exec::split_interior(exec::Range2{0, 0, 0, 5}, 2).nborder, 0);
}
