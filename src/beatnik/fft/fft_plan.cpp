#include "beatnik/fft/fft_plan.hpp"

#include "beatnik/mesh/decomposition.hpp"

namespace beatnik::fft {
namespace {

// Lines along x (all i) for a range of j, or along y (all j) for a range of i.
Box2 x_lines(int nx, int j0, int j1) { return Box2{{0, j0}, {nx, j1}}; }
Box2 y_lines(int ny, int i0, int i1) { return Box2{{i0, 0}, {i1, ny}}; }

bool same_layout(const ArrayLayout2& a, const ArrayLayout2& b) {
  return a.box.lo == b.box.lo && a.box.hi == b.box.hi && a.si == b.si && a.sj == b.sj && a.offset == b.offset;
}

struct Builder {
  FftPlan plan;
  void reshape(PlanGroup g, std::vector<Box2> from, std::vector<Box2> to, ArrayLayout2 fl, ArrayLayout2 tl) {
    // A reshape that moves nothing between ranks and keeps the memory layout is a no-op: skip it
    // (e.g. pencil steps inside a process row or column of one rank). The first reshape is
    // always kept: it builds the complex input from the caller's data.
    if (!plan.steps.empty() && same_layout(fl, tl) && from == to) return;
    PlanStep s;
    s.group = g;
    s.from = std::move(from);
    s.to = std::move(to);
    s.from_layout = fl;
    s.to_layout = tl;
    plan.steps.push_back(std::move(s));
  }
  void fft(const BatchShape& shape) {
    PlanStep s;
    s.is_fft = true;
    s.shape = shape;
    plan.steps.push_back(std::move(s));
  }
};

}  // namespace

std::vector<int> plan_group_members(PlanGroup group, std::array<int, 2> procs, int rank) {
  const int a = rank / procs[1], b = rank % procs[1];
  std::vector<int> m;
  if (group == PlanGroup::Grid)
    for (int r = 0; r < procs[0] * procs[1]; ++r) m.push_back(r);
  else if (group == PlanGroup::Column)
    for (int k = 0; k < procs[0]; ++k) m.push_back(k * procs[1] + b);
  else
    for (int k = 0; k < procs[1]; ++k) m.push_back(a * procs[1] + k);
  return m;
}

FftPlan plan_fft(std::array<int, 2> global, std::array<int, 2> procs, const std::vector<Box2>& blocks,
                 const FftOptions& options, int rank) {
  const int size = procs[0] * procs[1];
  const int nx = global[0], ny = global[1];
  const Box2 mine = blocks[rank];
  // Work-array layouts: with reorder each line is contiguous; without, the block's j-fastest
  // order is kept and the x transforms are strided.
  auto xl_layout = [&](const Box2& b) { return options.reorder ? i_fastest(b) : j_fastest(b); };
  auto x_shape = [&](const Box2& b) {
    const int lines = b.extent(1);
    return options.reorder ? BatchShape{nx, lines, 1, nx} : BatchShape{nx, lines, lines, 1};
  };
  auto y_shape = [&](const Box2& b) { return BatchShape{ny, b.extent(0), 1, ny}; };
  Builder p;
  if (options.intermediate == Intermediate::Slab) {
    const auto js = mesh::split_offsets(ny, size), is = mesh::split_offsets(nx, size);
    std::vector<Box2> xs, ys;
    for (int r = 0; r < size; ++r) {
      xs.push_back(x_lines(nx, js[r], js[r + 1]));
      ys.push_back(y_lines(ny, is[r], is[r + 1]));
    }
    p.reshape(PlanGroup::Grid, blocks, xs, ArrayLayout2{}, xl_layout(xs[rank]));
    p.fft(x_shape(xs[rank]));
    p.reshape(PlanGroup::Grid, xs, ys, xl_layout(xs[rank]), j_fastest(ys[rank]));
    p.fft(y_shape(ys[rank]));
    p.plan.spectral = j_fastest(ys[rank]);
    if (options.spectrum_in_input_layout) {
      p.reshape(PlanGroup::Grid, ys, blocks, j_fastest(ys[rank]), j_fastest(mine));
      p.plan.spectral = j_fastest(mine);
    }
  } else {
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
    p.reshape(PlanGroup::Column, col_blocks, col_lines, ArrayLayout2{}, xl_layout(xl));
    p.fft(x_shape(xl));
    p.reshape(PlanGroup::Column, col_lines, col_blocks, xl_layout(xl), j_fastest(mine));
    p.reshape(PlanGroup::Row, row_blocks, row_lines, j_fastest(mine), j_fastest(yl));
    p.fft(y_shape(yl));
    p.plan.spectral = j_fastest(yl);
    if (options.spectrum_in_input_layout) {
      p.reshape(PlanGroup::Row, row_lines, row_blocks, j_fastest(yl), j_fastest(mine));
      p.plan.spectral = j_fastest(mine);
    }
  }
  return p.plan;
}

}  // namespace beatnik::fft
