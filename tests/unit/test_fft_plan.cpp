// FFT plans that use the layout (docs/fft.md "Plans that use the layout"): the number of
// exchanges per transform on P×1, 1×P and square grids; the bytes a Riesz transform moves,
// measured by CommStats, against counts computed here from the decomposition (and against the
// plan's own count, which --ranks-grid auto uses); the Riesz transform of a pseudo-random field
// on every grid and plan against a serial FFTW computation; --ranks-grid auto.
#include <fftw3.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>

#include "beatnik/app/grid_choice.hpp"
#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/context.hpp"
#include "beatnik/fft/fft_plan.hpp"
#include "beatnik/mesh/decomposition.hpp"
#include "beatnik/model/riesz.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {

double w_in(int c, int i, int j) {
  return c == 0 ? std::sin(0.37 * i * i + 0.11 * j) + 0.2 * j : std::cos(0.23 * i + 0.71 * j * j) - 0.1 * i;
}

mesh::Geometry periodic_geometry(std::array<int, 2> n) {
  mesh::Geometry g;
  g.nodes = n;
  g.periodic = {true, true};
  g.spacing = g.node_spacing = {2.0 / n[0], 2.0 / n[1]};
  g.origin = {-1.0, -1.0};
  g.period = {2.0, 2.0};
  return g;
}

// Serial Riesz transform R·w = Re IFFT[(m1 − i m2) FFT(w1 + i w2)] (MODEL.md §6.4), on every rank.
std::vector<double> serial_riesz(std::array<int, 2> n) {
  const int nx = n[0], ny = n[1];
  std::vector<std::complex<double>> c(long(nx) * ny);
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < ny; ++j) c[long(i) * ny + j] = {w_in(0, i, j), w_in(1, i, j)};
  auto* p = reinterpret_cast<fftw_complex*>(c.data());
  fftw_plan f = fftw_plan_dft_2d(nx, ny, p, p, FFTW_FORWARD, FFTW_ESTIMATE);
  fftw_plan b = fftw_plan_dft_2d(nx, ny, p, p, FFTW_BACKWARD, FFTW_ESTIMATE);
  fftw_execute(f);
  auto wave = [](int q, int m) { return 2 * q < m ? q : (2 * q > m ? q - m : 0); };
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < ny; ++j) {
      const double k1 = M_PI * wave(i, nx), k2 = M_PI * wave(j, ny), kk = std::hypot(k1, k2);
      auto& v = c[long(i) * ny + j];
      v = kk == 0 ? 0.0 : v * std::complex<double>(k1 / kk, 0) * std::complex<double>(0, -1) +
                              v * std::complex<double>(k2 / kk, 0) * std::complex<double>(-1, 0);
    }
  fftw_execute(b);
  fftw_destroy_plan(f);
  fftw_destroy_plan(b);
  std::vector<double> r(c.size());
  for (size_t k = 0; k < c.size(); ++k) r[k] = c[k].real() / (double(nx) * ny);
  return r;
}

long overlap(int a0, int a1, int b0, int b1) { return std::max(0, std::min(a1, b1) - std::max(a0, b0)); }

}  // namespace

// Exchanges per transform: one when the blocks are already lines of a dimension (P×1, 1×P),
// none on one rank; the slab plan makes two otherwise, the pencil plan three.
TEST(FftPlan, ExchangesPerTransformFollowTheLayout) {
  const int P = test::world_size();
  const std::array<int, 2> n{19, 16};
  for (auto procs : test::process_grids()) {
    const mesh::Decomposition d(n, procs);
    for (auto inter : {fft::Intermediate::Slab, fft::Intermediate::Pencil})
      for (bool reorder : {false, true})
        for (bool half : {false, true}) {
        fft::FftOptions o;
        o.intermediate = inter;
        o.reorder = reorder;
        o.half_spectrum = half;
        for (int r = 0; r < P; ++r) {
          const fft::FftPlan p = fft::make_fft_plan(n, procs, d.all_owned(), o, r);
          int expected = 0;
          if (P > 1) {
            if (procs[0] == 1 || procs[1] == 1) expected = 1;
            else expected = inter == fft::Intermediate::Slab ? 2 : 3;
          }
          EXPECT_EQ(fft::plan_exchanges(p), expected)
              << "grid " << procs[0] << "x" << procs[1] << " " << o.describe() << " rank " << r;
          int ffts = 0, real = 0;
          for (const auto& s : p.steps) {
            ffts += s.is_fft;
            real += s.is_real_fft;
          }
          EXPECT_EQ(ffts, 2);
          EXPECT_EQ(real, half ? 1 : 0);
        }
      }
  }
}

// The Riesz transform on every process grid and plan, full (c2c) and half (r2c) spectrum, equals
// the serial one; the bytes CommStats counts to other ranks equal the plan's count, and on P×1 /
// 1×P grids the count computed here: one exchange each way, the inverse's complex like the
// forward's (c2c); with the half spectrum the exchanged dimension is the one transformed first,
// cut to n/2 + 1, carrying two complex fields forward and one back.
TEST(FftPlan, RieszOnEveryGridMatchesSerialAndMovesThePredictedBytes) {
  comm::Context ctx(MPI_COMM_WORLD);
  const int P = test::world_size();
  for (std::array<int, 2> n : {std::array<int, 2>{16, 16}, std::array<int, 2>{17, 13}}) {
    const std::vector<double> ref = serial_riesz(n);
    double scale = 0;
    for (double v : ref) scale = std::max(scale, std::fabs(v));
    const mesh::Geometry g = periodic_geometry(n);
    for (auto procs : test::process_grids()) {
      mesh::SurfaceMesh m(ctx, g, procs);
      const int rank = m.grid().rank();
      const Box2 mine = m.owned();
      const auto L = m.layout();
      mesh::Field w(exec::Space::Host, L, 2), out(exec::Space::Host, GhostedLayout{L.ni, L.nj, 0}, 1);
      for (int i = 0; i < L.ni; ++i)
        for (int j = 0; j < L.nj; ++j)
          for (int c = 0; c < 2; ++c) w.view()(c, i, j) = w_in(c, mine.lo[0] + i, mine.lo[1] + j);
      for (auto opt : test::all_fft_strategies())
        for (bool half : {false, true}) {
        opt.half_spectrum = half;
        comm::CommStats stats;
        model::RieszTransform riesz(m, exec::Space::Host, opt, &stats, nullptr);
        stats.reset();
        riesz.apply(w, 0, 1, out);
        double err = 0;
        for (int i = 0; i < L.ni; ++i)
          for (int j = 0; j < L.nj; ++j)
            err = std::max(err, std::fabs(out.view()(0, i, j) - ref[long(mine.lo[0] + i) * n[1] + mine.lo[1] + j]));
        const auto& s = stats.stats().at("fft");
        const long measured = s.bytes[1] + s.bytes[2];
        const long planned = fft::plan_bytes_to_others(riesz.fft().plan(), procs, rank);
        // Independent count for P×1 (blocks are y-lines: to x-lines and back, complex both
        // ways) and 1×P (x-lines: to y-lines and back), spectrum in the intermediate layout.
        long formula = -1;
        if (opt.intermediate == fft::Intermediate::Slab && !opt.spectrum_in_input_layout && P > 1 &&
            (procs[0] == 1 || procs[1] == 1)) {
          const int d = procs[1] == 1 ? 1 : 0;  // the dimension the exchange splits
          // Lines after the exchange: dimension d split P ways. Forward: my block's part of
          // q's lines; inverse: my lines' part of q's block.
          const int nd = half ? n[d] / 2 + 1 : n[d];  // the blocks span all of d: [0, nd) travels
          const long fwd = half ? 32 : 16, inv = 16;
          const auto off = mesh::split_offsets(nd, P);
          const mesh::Decomposition dec(n, procs);
          formula = 0;
          for (int q = 0; q < P; ++q)
            if (q != rank)
              formula += fwd * mine.extent(1 - d) * overlap(mine.lo[d], std::min(mine.hi[d], nd), off[q], off[q + 1]) +
                         inv * (off[rank + 1] - off[rank]) * dec.owned(q).extent(1 - d);
        }
        if (P == 1) formula = 0;
        const bool padded = opt.algorithm == comm::ExchangeAlgorithm::Alltoall;
        const bool ok = test::all_ranks(err <= 1e-12 * scale && (padded || measured == planned) &&
                                        (formula < 0 || (!padded && measured == formula) || (padded && measured >= formula)));
        EXPECT_TRUE(ok) << n[0] << "x" << n[1] << " grid " << procs[0] << "x" << procs[1] << " "
                        << opt.describe() << ": error " << err / scale << ", bytes measured " << measured
                        << " planned " << planned << " formula " << formula;
      }
    }
  }
}

// On a P×1 grid the slab plan moves half of what a plan that ignores the layout moves (two
// exchanges each way), counted here from the decomposition.
TEST(FftPlan, PByOneSlabHalvesTheBytesOfTheLayoutBlindPlan) {
  const int P = test::world_size();
  if (P == 1) {
    fft::FftOptions o;
    EXPECT_EQ(fft::plan_cost({16, 16}, {1, 1}, o).total, 0);
    return;
  }
  const std::array<int, 2> n{64, 48};
  fft::FftOptions o;
  o.intermediate = fft::Intermediate::Slab;
  const auto is = mesh::split_offsets(n[0], P), js = mesh::split_offsets(n[1], P);
  long blind = 0;  // blocks (i-slabs) -> x-lines -> y-lines, and back; the last one real
  for (int r = 0; r < P; ++r)
    for (int q = 0; q < P; ++q)
      if (q != r) {
        const long a = long(is[r + 1] - is[r]) * (js[q + 1] - js[q]);  // y-lines/blocks <-> x-lines
        blind += a * 16 + a * 8 + a * 16 + a * 16;
      }
  const long now = fft::plan_cost(n, {P, 1}, o).total;
  EXPECT_EQ(now * 7, blind * 4) << now << " vs " << blind;  // 2·16 of 16+8+16+16 per element
  // The half spectrum: the blocks' y-lines are cut to [0, 48/2 + 1) and split P ways as x-lines;
  // 32 bytes per element forward (two fields), 16 back.
  const auto hs = mesh::split_offsets(n[1] / 2 + 1, P);
  long half = 0;
  for (int r = 0; r < P; ++r)
    for (int q = 0; q < P; ++q)
      if (q != r) half += 32L * (is[r + 1] - is[r]) * (hs[q + 1] - hs[q]) + 16L * (hs[r + 1] - hs[r]) * (is[q + 1] - is[q]);
  o.half_spectrum = true;
  EXPECT_EQ(fft::plan_cost(n, {P, 1}, o).total, half);
}

TEST(FftPlan, RanksGridAutoPicksTheFewestBytes) {
  const int P = test::world_size();
  fft::FftOptions o;
  const app::GridChoice g = app::choose_grid({64, 64}, P, o, true);
  EXPECT_EQ(g.procs[0] * g.procs[1], P);
  for (auto procs : test::process_grids())
    for (auto inter : {fft::Intermediate::Slab, fft::Intermediate::Pencil}) {
      fft::FftOptions c = o;
      c.intermediate = inter;
      EXPECT_LE(g.bytes, fft::plan_cost({64, 64}, procs, c).total);
    }
  if (P > 1) {
    EXPECT_TRUE(g.procs[0] == 1 || g.procs[1] == 1) << g.reason;
    EXPECT_NE(g.reason.find("runner-up"), std::string::npos) << g.reason;
  }
  // Only the named intermediate when --fft-intermediate fixes it.
  o.intermediate = fft::Intermediate::Pencil;
  EXPECT_EQ(app::choose_grid({64, 64}, P, o, false).intermediate, fft::Intermediate::Pencil);
  // Through the options: auto sets the grid and records why; a mesh too small for any grid fails.
  auto opts = test::small_options(32);
  opts.ranks_grid = "auto";
  const auto cfg = test::config_for(opts, MPI_COMM_WORLD);
  EXPECT_EQ(cfg.procs[0] * cfg.procs[1], P);
  EXPECT_FALSE(cfg.grid_choice.empty());
  if (P >= 2) EXPECT_THROW(app::choose_grid({3, 3}, P, o, true), InputError);
}
