#include "beatnik/fft/fft_plan.hpp"

#include <algorithm>

#include "beatnik/base/complex.hpp"
#include "beatnik/mesh/decomposition.hpp"

namespace beatnik::fft {
namespace {

// Lines along x (all i) for a range of j, or along y (all j) for a range of i.
Box2 x_lines(int nx, int j0, int j1) { return Box2{{0, j0}, {nx, j1}}; }
Box2 y_lines(int ny, int i0, int i1) { return Box2{{i0, 0}, {i1, ny}}; }

bool same_layout(const ArrayLayout2& a, const ArrayLayout2& b) {
  return a.box == b.box && a.si == b.si && a.sj == b.sj && a.offset == b.offset;
}

class Builder {
 public:

  void reshape(PlanGroup g, const std::vector<Box2>& from, const std::vector<Box2>& to,
               const ArrayLayout2& from_layout, const ArrayLayout2& to_layout) {
    PlanStep s;
    s.group = g;
    s.from = from;
    s.to = to;
    s.from_layout = from_layout;
    s.to_layout = to_layout;
    s.local = from == to;  // every rank keeps its box (always so in a group of one)
    // A step that moves nothing and keeps the memory layout is an identity: drop it. The first
    // step is always kept: it builds the complex input from the caller's data.
    if (!plan.steps.empty() && s.local && same_layout(from_layout, to_layout)) return;
    plan.steps.push_back(std::move(s));
  }
  void fft(const BatchShape& shape) {
    PlanStep s;
    s.is_fft = true;
    s.shape = shape;
    plan.steps.push_back(s);
  }

  FftPlan plan;
};

}  // namespace

int plan_group_member(PlanGroup g, std::array<int, 2> procs, int rank, int k) {
  const int a = rank / procs[1], b = rank % procs[1];
  switch (g) {
    case PlanGroup::Column: return k * procs[1] + b;
    case PlanGroup::Row: return a * procs[1] + k;
    case PlanGroup::All: break;
  }
  return k;
}

int plan_group_index(PlanGroup g, std::array<int, 2> procs, int rank) {
  switch (g) {
    case PlanGroup::Column: return rank / procs[1];
    case PlanGroup::Row: return rank % procs[1];
    case PlanGroup::All: break;
  }
  return rank;
}

FftPlan make_fft_plan(std::array<int, 2> global, std::array<int, 2> procs, const std::vector<Box2>& blocks,
                      const FftOptions& options, int rank) {
  const int nx = global[0], ny = global[1];
  const int size = static_cast<int>(blocks.size());
  const Box2 mine = blocks[rank];
  Builder p;

  // Work-array layouts: with reorder the x-lines a reshape delivers are made contiguous; without,
  // the block's j-fastest order is kept and the x transforms are strided.
  auto xl_layout = [&](const Box2& b) { return options.reorder ? i_fastest(b) : j_fastest(b); };
  // x transforms on a layout (contiguous when i is fastest, strided otherwise).
  auto x_shape = [&](const ArrayLayout2& l) {
    const int lines = l.box.extent(1);
    return l.si == 1 ? BatchShape{nx, lines, 1, nx} : BatchShape{nx, lines, lines, 1};
  };
  auto y_shape = [&](const Box2& b) { return BatchShape{ny, b.extent(0), 1, ny}; };

  if (options.intermediate == Intermediate::Slab) {
    // Do the blocks already hold whole lines of a dimension?
    bool full_i = true, full_j = true;
    for (const Box2& b : blocks) {
      full_i = full_i && b.lo[0] == 0 && b.hi[0] == nx;
      full_j = full_j && b.lo[1] == 0 && b.hi[1] == ny;
    }
    const auto js = mesh::split_offsets(ny, size), is = mesh::split_offsets(nx, size);
    std::vector<Box2> xs, ys;
    for (int r = 0; r < size; ++r) {
      xs.push_back(x_lines(nx, js[r], js[r + 1]));
      ys.push_back(y_lines(ny, is[r], is[r + 1]));
    }
    if (full_j) {
      // The blocks are y-lines (P×1 grid, or one rank): y first, in place; then x-lines.
      p.plan.first_dim = 1;
      p.reshape(PlanGroup::All, blocks, blocks, ArrayLayout2{}, j_fastest(mine));
      p.fft(y_shape(mine));
      if (full_i) {  // one rank: the x transforms run strided on the same array
        p.fft(x_shape(j_fastest(mine)));
        p.plan.spectral = j_fastest(mine);
        return p.plan;
      }
      p.reshape(PlanGroup::All, blocks, xs, j_fastest(mine), xl_layout(xs[rank]));
      p.fft(x_shape(xl_layout(xs[rank])));
      p.plan.spectral = xl_layout(xs[rank]);
      if (options.spectrum_in_input_layout) {
        p.reshape(PlanGroup::All, xs, blocks, xl_layout(xs[rank]), j_fastest(mine));
        p.plan.spectral = j_fastest(mine);
      }
      return p.plan;
    }
    // x first: the blocks are x-lines already (1×P grid) or the first reshape makes them.
    const std::vector<Box2>& xl = full_i ? blocks : xs;
    p.reshape(PlanGroup::All, blocks, xl, ArrayLayout2{}, xl_layout(xl[rank]));
    p.fft(x_shape(xl_layout(xl[rank])));
    p.reshape(PlanGroup::All, xl, ys, xl_layout(xl[rank]), j_fastest(ys[rank]));
    p.fft(y_shape(ys[rank]));
    p.plan.spectral = j_fastest(ys[rank]);
    if (options.spectrum_in_input_layout) {
      p.reshape(PlanGroup::All, ys, blocks, j_fastest(ys[rank]), j_fastest(mine));
      p.plan.spectral = j_fastest(mine);
    }
    return p.plan;
  }

  // Pencil. Column group: the Px ranks sharing this rank's j-range (x-lines among them); row
  // group: the Py ranks sharing its i-range (y-lines).
  const int a = rank / procs[1], b = rank % procs[1];
  std::vector<Box2> col_blocks, col_lines, row_blocks, row_lines;
  const auto jsplit = mesh::split_offsets(mine.extent(1), procs[0]);
  const auto isplit = mesh::split_offsets(mine.extent(0), procs[1]);
  for (int k = 0; k < procs[0]; ++k) {
    col_blocks.push_back(blocks[k * procs[1] + b]);
    col_lines.push_back(x_lines(nx, mine.lo[1] + jsplit[k], mine.lo[1] + jsplit[k + 1]));
  }
  for (int k = 0; k < procs[1]; ++k) {
    row_blocks.push_back(blocks[a * procs[1] + k]);
    row_lines.push_back(y_lines(ny, mine.lo[0] + isplit[k], mine.lo[0] + isplit[k + 1]));
  }
  const Box2 xl = col_lines[a], yl = row_lines[b];
  // The first dimension's exchange is made twice (there and back): give it the smaller group.
  if (procs[1] < procs[0]) {
    p.plan.first_dim = 1;
    p.reshape(PlanGroup::Row, row_blocks, row_lines, ArrayLayout2{}, j_fastest(yl));
    p.fft(y_shape(yl));
    p.reshape(PlanGroup::Row, row_lines, row_blocks, j_fastest(yl), j_fastest(mine));
    p.reshape(PlanGroup::Column, col_blocks, col_lines, j_fastest(mine), xl_layout(xl));
    p.fft(x_shape(xl_layout(xl)));
    p.plan.spectral = xl_layout(xl);
    if (options.spectrum_in_input_layout) {
      p.reshape(PlanGroup::Column, col_lines, col_blocks, xl_layout(xl), j_fastest(mine));
      p.plan.spectral = j_fastest(mine);
    }
    return p.plan;
  }
  p.reshape(PlanGroup::Column, col_blocks, col_lines, ArrayLayout2{}, xl_layout(xl));
  p.fft(x_shape(xl_layout(xl)));
  p.reshape(PlanGroup::Column, col_lines, col_blocks, xl_layout(xl), j_fastest(mine));
  p.reshape(PlanGroup::Row, row_blocks, row_lines, j_fastest(mine), j_fastest(yl));
  p.fft(y_shape(yl));
  p.plan.spectral = j_fastest(yl);
  if (options.spectrum_in_input_layout) {
    p.reshape(PlanGroup::Row, row_lines, row_blocks, j_fastest(yl), j_fastest(mine));
    p.plan.spectral = j_fastest(mine);
  }
  return p.plan;
}

long plan_bytes_to_others(const FftPlan& plan, std::array<int, 2> procs, int rank) {
  long bytes = 0;
  for (size_t k = 0; k < plan.steps.size(); ++k) {
    const PlanStep& s = plan.steps[k];
    if (s.is_fft || s.local) continue;
    const int me = plan_group_index(s.group, procs, rank);
    // The inverse's last reshape (the first step run backwards) carries the real result only.
    const long inverse_elem = k == 0 ? long(sizeof(double)) : long(sizeof(cplx));
    for (int q = 0; q < static_cast<int>(s.to.size()); ++q) {
      if (q == me) continue;
      bytes += intersect(s.from[me], s.to[q]).count() * long(sizeof(cplx));  // forward
      bytes += intersect(s.to[me], s.from[q]).count() * inverse_elem;        // inverse
    }
  }
  return bytes;
}

int plan_exchanges(const FftPlan& plan) {
  int n = 0;
  for (const PlanStep& s : plan.steps) n += !s.is_fft && !s.local;
  return n;
}

PlanCost plan_cost(std::array<int, 2> global, std::array<int, 2> procs, const FftOptions& options) {
  const mesh::Decomposition d(global, procs);
  const std::vector<Box2> blocks = d.all_owned();
  PlanCost c;
  for (int r = 0; r < d.size(); ++r) {
    const FftPlan p = make_fft_plan(global, procs, blocks, options, r);
    const long b = plan_bytes_to_others(p, procs, r);
    c.total += b;
    c.busiest = std::max(c.busiest, b);
    c.exchanges = std::max(c.exchanges, plan_exchanges(p));
  }
  return c;
}

}  // namespace beatnik::fft
