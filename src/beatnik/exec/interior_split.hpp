#pragma once
// Interior / border split of a block for stencil kernels that overlap a halo exchange: the
// interior nodes' stencils (reach R) stay inside the block, so they can run while the ghosts
// are in flight; the border strips run once the ghosts have arrived. A kernel is written once
// and launched on both parts; each node is visited exactly once, by the same lambda, so the
// result does not depend on the split.
#include "beatnik/exec/parallel_for.hpp"

namespace beatnik::exec {

struct InteriorSplit {
  Range2 interior{0, 0, 0, 0};
  Range2 border[4] = {};  // low i, high i, low j, high j (the j strips without the i strips' corners)
  int nborder = 0;
};

// Interior: i in [i0+R, i1-R), j in [j0+R, j1-R). A block of 2R nodes or fewer in either
// dimension has no interior: all of it is one border part.
inline InteriorSplit split_interior(Range2 r, int reach) {
  InteriorSplit s;
  if (r.count() == 0) return s;
  if (r.i1 - r.i0 <= 2 * reach || r.j1 - r.j0 <= 2 * reach) {
    s.border[s.nborder++] = r;
    return s;
  }
  const int ia = r.i0 + reach, ib = r.i1 - reach, ja = r.j0 + reach, jb = r.j1 - reach;
  s.interior = Range2{ia, ib, ja, jb};
  s.border[s.nborder++] = Range2{r.i0, ia, r.j0, r.j1};
  s.border[s.nborder++] = Range2{ib, r.i1, r.j0, r.j1};
  s.border[s.nborder++] = Range2{ia, ib, r.j0, ja};
  s.border[s.nborder++] = Range2{ia, ib, jb, r.j1};
  return s;
}

// Which nodes of a split block a launch covers.
enum class Part { All, Interior, Border };

template <class F>
void parallel_for_part(Space s, Range2 all, const InteriorSplit& split, Part part, F f) {
  if (part == Part::All) parallel_for(s, all, f);
  else if (part == Part::Interior) parallel_for(s, split.interior, f);
  else for (int k = 0; k < split.nborder; ++k) parallel_for(s, split.border[k], f);
}

template <class F>
void parallel_for_interior(Space s, const InteriorSplit& split, F f) {
  parallel_for(s, split.interior, f);
}

template <class F>
void parallel_for_border(Space s, const InteriorSplit& split, F f) {
  for (int k = 0; k < split.nborder; ++k) parallel_for(s, split.border[k], f);
}

}  // namespace beatnik::exec
