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

  // Marks the steps after the real transform (index half_from on) as half-spectrum steps and
  // sets every reshape's element sizes.
  FftPlan finish() {
    for (size_t k = 0; k < plan.steps.size(); ++k) {
      PlanStep& s = plan.steps[k];
      s.half = plan.half && k >= half_from;
      if (s.half) {
        s.forward_elem_bytes = 2 * long(sizeof(cplx));
        s.inverse_elem_bytes = long(sizeof(cplx));
      } else {
        s.forward_elem_bytes = long(sizeof(cplx));
        // The inverse's last reshape (the first step run backwards) carries the real result only.
        s.inverse_elem_bytes = k == 0 ? long(sizeof(double)) : long(sizeof(cplx));
      }
    }
    return plan;
  }

  FftPlan plan;
  size_t half_from = 0;
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
  const bool half = options.half_spectrum;
  Builder p;
  p.plan.half = half;
  p.plan.spectral_global = global;

  // Work-array layouts: with reorder the x-lines a reshape delivers are made contiguous; without,
  // the block's j-fastest order is kept and the x transforms are strided.
  auto xl_layout = [&](const Box2& b) { return options.reorder ? i_fastest(b) : j_fastest(b); };
  // x transforms on a layout (contiguous when i is fastest, strided otherwise); lines of nx.
  auto x_shape = [&](const ArrayLayout2& l) {
    const int lines = l.box.extent(1);
    return l.si == 1 ? BatchShape{nx, lines, 1, nx} : BatchShape{nx, lines, lines, 1};
  };
  auto y_shape = [&](const Box2& b) { return BatchShape{ny, b.extent(0), 1, ny}; };

  // Half spectrum: the first dimension d is transformed real to complex; afterwards its index
  // range is [0, n_d/2 + 1). cut() restricts full lines of d to that range; half_blocks are the
  // process grid's blocks of the half index space (the caller's j- or i-ranges, d split evenly
  // over the grid's d-coordinate), where the pencil plan and the input-layout spectrum put it.
  int d = 0;
  std::array<int, 2> hg = global;
  auto cut = [&](Box2 b) {
    if (half) b.hi[d] = std::min(b.hi[d], hg[d]);
    return b;
  };
  auto cut_all = [&](std::vector<Box2> v) {
    for (Box2& b : v) b = cut(b);
    return v;
  };
  std::vector<Box2> half_blocks;
  auto start_half = [&](int dim) {
    d = dim;
    p.plan.first_dim = dim;
    if (!half) {
      half_blocks = blocks;
      return;
    }
    hg[d] = global[d] / 2 + 1;
    p.plan.spectral_global = hg;
    const auto off = mesh::split_offsets(hg[d], procs[d]);
    for (int r = 0; r < size; ++r) {
      Box2 b = blocks[r];
      const int c = d == 0 ? r / procs[1] : r % procs[1];
      b.lo[d] = off[c];
      b.hi[d] = off[c + 1];
      half_blocks.push_back(b);
    }
  };
  // The first transform, along d, on full lines laid out as `l`: complex, or real to complex
  // into the cut lines laid out as `h` (the half array).
  auto first_fft = [&](const ArrayLayout2& l, const ArrayLayout2& h, const BatchShape& full_shape) {
    if (!half) {
      p.fft(full_shape);
      return;
    }
    PlanStep s;
    s.is_fft = s.is_real_fft = true;
    s.shape = full_shape;
    s.from_layout = l;
    s.to_layout = h;
    p.plan.steps.push_back(s);
    p.half_from = p.plan.steps.size();
  };

  if (options.intermediate == Intermediate::Slab) {
    // Do the blocks already hold whole lines of a dimension?
    bool full_i = true, full_j = true;
    for (const Box2& b : blocks) {
      full_i = full_i && b.lo[0] == 0 && b.hi[0] == nx;
      full_j = full_j && b.lo[1] == 0 && b.hi[1] == ny;
    }
    if (full_j) {
      // The blocks are y-lines (P×1 grid, or one rank): y first, in place; then x-lines.
      start_half(1);
      const auto js = mesh::split_offsets(hg[1], size);
      std::vector<Box2> xs;
      for (int r = 0; r < size; ++r) xs.push_back(x_lines(nx, js[r], js[r + 1]));
      p.reshape(PlanGroup::All, blocks, blocks, ArrayLayout2{}, j_fastest(mine));
      first_fft(j_fastest(mine), j_fastest(cut(mine)), y_shape(mine));
      const Box2 hm = cut(mine);
      if (full_i) {  // one rank: the x transforms run strided on the same array
        p.fft(x_shape(j_fastest(hm)));
        p.plan.spectral = j_fastest(hm);
        return p.finish();
      }
      p.reshape(PlanGroup::All, cut_all(blocks), xs, j_fastest(hm), xl_layout(xs[rank]));
      p.fft(x_shape(xl_layout(xs[rank])));
      p.plan.spectral = xl_layout(xs[rank]);
      if (options.spectrum_in_input_layout) {
        p.reshape(PlanGroup::All, xs, half_blocks, xl_layout(xs[rank]), j_fastest(half_blocks[rank]));
        p.plan.spectral = j_fastest(half_blocks[rank]);
      }
      return p.finish();
    }
    // x first: the blocks are x-lines already (1×P grid) or the first reshape makes them.
    start_half(0);
    const auto js = mesh::split_offsets(ny, size), is = mesh::split_offsets(hg[0], size);
    std::vector<Box2> xs, ys;
    for (int r = 0; r < size; ++r) {
      xs.push_back(x_lines(nx, js[r], js[r + 1]));
      ys.push_back(y_lines(ny, is[r], is[r + 1]));
    }
    const std::vector<Box2>& xl = full_i ? blocks : xs;
    p.reshape(PlanGroup::All, blocks, xl, ArrayLayout2{}, xl_layout(xl[rank]));
    first_fft(xl_layout(xl[rank]), xl_layout(cut(xl[rank])), x_shape(xl_layout(xl[rank])));
    p.reshape(PlanGroup::All, cut_all(xl), ys, xl_layout(cut(xl[rank])), j_fastest(ys[rank]));
    p.fft(y_shape(ys[rank]));
    p.plan.spectral = j_fastest(ys[rank]);
    if (options.spectrum_in_input_layout) {
      p.reshape(PlanGroup::All, ys, half_blocks, j_fastest(ys[rank]), j_fastest(half_blocks[rank]));
      p.plan.spectral = j_fastest(half_blocks[rank]);
    }
    return p.finish();
  }

  // Pencil. Column group: the Px ranks sharing this rank's j-range (x-lines among them); row
  // group: the Py ranks sharing its i-range (y-lines). The first dimension's exchange is made
  // twice (there and back): give it the smaller group.
  const int a = rank / procs[1], b = rank % procs[1];
  start_half(procs[1] < procs[0] ? 1 : 0);
  // Lines of the group, from the blocks `from` (this rank's block is from[rank]).
  auto col_group = [&](const std::vector<Box2>& from, std::vector<Box2>& gb, std::vector<Box2>& gl) {
    const Box2 m = from[rank];
    const auto split = mesh::split_offsets(m.extent(1), procs[0]);
    for (int k = 0; k < procs[0]; ++k) {
      gb.push_back(from[k * procs[1] + b]);
      gl.push_back(x_lines(nx, m.lo[1] + split[k], m.lo[1] + split[k + 1]));
    }
  };
  auto row_group = [&](const std::vector<Box2>& from, std::vector<Box2>& gb, std::vector<Box2>& gl) {
    const Box2 m = from[rank];
    const auto split = mesh::split_offsets(m.extent(0), procs[1]);
    for (int k = 0; k < procs[1]; ++k) {
      gb.push_back(from[a * procs[1] + k]);
      gl.push_back(y_lines(ny, m.lo[0] + split[k], m.lo[0] + split[k + 1]));
    }
  };
  std::vector<Box2> col_blocks, col_lines, row_blocks, row_lines;
  if (d == 1) {
    row_group(blocks, row_blocks, row_lines);
    col_group(half_blocks, col_blocks, col_lines);
    const Box2 xl = col_lines[a], yl = row_lines[b];
    const Box2 hm = half_blocks[rank];
    p.reshape(PlanGroup::Row, row_blocks, row_lines, ArrayLayout2{}, j_fastest(yl));
    first_fft(j_fastest(yl), j_fastest(cut(yl)), y_shape(yl));
    std::vector<Box2> hrow;
    for (int k = 0; k < procs[1]; ++k) hrow.push_back(half_blocks[a * procs[1] + k]);
    p.reshape(PlanGroup::Row, cut_all(row_lines), hrow, j_fastest(cut(yl)), j_fastest(hm));
    p.reshape(PlanGroup::Column, col_blocks, col_lines, j_fastest(hm), xl_layout(xl));
    p.fft(x_shape(xl_layout(xl)));
    p.plan.spectral = xl_layout(xl);
    if (options.spectrum_in_input_layout) {
      p.reshape(PlanGroup::Column, col_lines, col_blocks, xl_layout(xl), j_fastest(hm));
      p.plan.spectral = j_fastest(hm);
    }
    return p.finish();
  }
  col_group(blocks, col_blocks, col_lines);
  row_group(half_blocks, row_blocks, row_lines);
  const Box2 xl = col_lines[a], yl = row_lines[b];
  const Box2 hm = half_blocks[rank];
  p.reshape(PlanGroup::Column, col_blocks, col_lines, ArrayLayout2{}, xl_layout(xl));
  first_fft(xl_layout(xl), xl_layout(cut(xl)), x_shape(xl_layout(xl)));
  std::vector<Box2> hcol;
  for (int k = 0; k < procs[0]; ++k) hcol.push_back(half_blocks[k * procs[1] + b]);
  p.reshape(PlanGroup::Column, cut_all(col_lines), hcol, xl_layout(cut(xl)), j_fastest(hm));
  p.reshape(PlanGroup::Row, row_blocks, row_lines, j_fastest(hm), j_fastest(yl));
  p.fft(y_shape(yl));
  p.plan.spectral = j_fastest(yl);
  if (options.spectrum_in_input_layout) {
    p.reshape(PlanGroup::Row, row_lines, row_blocks, j_fastest(yl), j_fastest(hm));
    p.plan.spectral = j_fastest(hm);
  }
  return p.finish();
}

long plan_bytes_to_others(const FftPlan& plan, std::array<int, 2> procs, int rank) {
  long bytes = 0;
  for (const PlanStep& s : plan.steps) {
    if (s.is_fft || s.local) continue;
    const int me = plan_group_index(s.group, procs, rank);
    for (int q = 0; q < static_cast<int>(s.to.size()); ++q) {
      if (q == me) continue;
      bytes += intersect(s.from[me], s.to[q]).count() * s.forward_elem_bytes;
      bytes += intersect(s.to[me], s.from[q]).count() * s.inverse_elem_bytes;
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
