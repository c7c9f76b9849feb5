// Cell list: bounding box, cell sizes, one cell key per point (a kernel written once), and a
// stable counting sort by key (so points of a cell keep their input order: deterministic).
// Compiled by nvcc in the CUDA build (BEATNIK_KERNEL_SOURCES).
#include "beatnik/search/cell_list.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

#include "beatnik/base/error.hpp"
#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/exec/scratch.hpp"

namespace beatnik::search {

CellGrid make_cell_grid(const double lo[3], const double hi[3], double radius, long max_cells) {
  if (!(radius > 0.0) || !std::isfinite(radius))
    throw InputError("cell list: the search radius must be a positive number (got " + std::to_string(radius) + ")");
  max_cells = std::clamp<long>(max_cells, 1, INT_MAX);
  double big = 0.0;
  for (int d = 0; d < 3; ++d) {
    if (!std::isfinite(lo[d]) || !std::isfinite(hi[d]))
      throw SimulationError("cell list: a point has a non-finite coordinate");
    big = std::max({big, std::fabs(lo[d]), std::fabs(hi[d])});
  }
  const double width = radius + 1e-6 * (radius + big);  // smallest cell size (see the header)
  CellGrid g;
  double ext[3];
  long total = 1;
  for (int d = 0; d < 3; ++d) {
    g.lo[d] = lo[d];
    ext[d] = hi[d] - lo[d];
    g.n[d] = static_cast<int>(std::clamp(std::floor(ext[d] / width), 1.0, double(max_cells)));
    total *= g.n[d];
    if (total > max_cells) total = max_cells + 1L;  // no overflow; capped below
  }
  if (total > max_cells) {
    // Shrink every split dimension by the same factor, then trim the largest until it fits.
    total = long(g.n[0]) * g.n[1] * g.n[2];
    int split = 0;
    for (int d = 0; d < 3; ++d) split += g.n[d] > 1;
    const double f = std::pow(double(total) / double(max_cells), 1.0 / split);
    for (int d = 0; d < 3; ++d) g.n[d] = std::max(1, static_cast<int>(g.n[d] / f));
    while (long(g.n[0]) * g.n[1] * g.n[2] > max_cells) {
      int d = 0;
      for (int e = 1; e < 3; ++e)
        if (g.n[e] > g.n[d]) d = e;
      --g.n[d];
    }
  }
  for (int d = 0; d < 3; ++d) g.inv[d] = ext[d] > 0.0 ? g.n[d] / ext[d] : 0.0;
  return g;
}

CellList::CellList(exec::Space s) : space_(s), box_(s), sort_(s) {}

namespace {
void cell_keys(exec::Space s, CellGrid g, const double* x, const double* y, const double* z, long n, int* key) {
  exec::parallel_for(s, n, [=] BEATNIK_HOST_DEVICE(long k) {
    key[k] = g.index(g.coord(0, x[k]), g.coord(1, y[k]), g.coord(2, z[k]));
  });
}
}  // namespace

void CellList::build(const double* x, const double* y, const double* z, long n, double radius, long max_cells) {
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  if (n > 0) box_.compute(x, y, z, n, lo, hi);
  // NaN coordinates are skipped by the box; a box that still is not finite means all NaN.
  grid_ = make_cell_grid(lo, hi, radius, max_cells);
  n_ = n;
  exec::grow(keys_, space_, std::max<long>(n, 1));
  cell_keys(space_, grid_, x, y, z, n, keys_.data());
  sort_.sort(keys_.data(), n, static_cast<int>(grid_.count()));
}

}  // namespace beatnik::search
