// Distributed FFT: every strategy combination (4 exchange algorithms x slab/pencil x
// contiguous/strided x spectrum layout) on every process grid of the rank count against a serial
// FFTW 2D transform, for even, odd and prime sizes that the rank counts do not divide; round
// trips; the Riesz transform of single modes (VALIDATION O1).
#include <fftw3.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <memory>
#include <vector>

#include "beatnik/comm/context.hpp"
#include "beatnik/fft/distributed_fft.hpp"
#include "beatnik/mesh/decomposition.hpp"
#include "beatnik/model/riesz.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {

std::complex<double> input(int i, int j) {
  return {std::sin(0.37 * i * i + 0.11 * j) + 0.2 * j, std::cos(0.23 * i + 0.71 * j * j) - 0.1 * i};
}

double input_scale(std::array<int, 2> n) {
  double m = 0;
  for (int i = 0; i < n[0]; ++i)
    for (int j = 0; j < n[1]; ++j) m = std::max(m, std::abs(input(i, j)));
  return m;
}

// The periodic Cartesian communicator of a process grid (the caller frees it).
MPI_Comm make_cart(std::array<int, 2> procs) {
  MPI_Comm cart;
  int dims[2] = {procs[0], procs[1]}, per[2] = {1, 1};
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &cart);
  return cart;
}

// Serial FFTW 2D reference of input() (every rank computes it).
struct Reference {
  std::vector<std::complex<double>> spectrum;
  double scale = 0, in_scale = 0;  // largest |spectrum| and |input|
};
Reference reference(std::array<int, 2> n) {
  Reference r;
  r.spectrum.resize(n[0] * n[1]);
  for (int i = 0; i < n[0]; ++i)
    for (int j = 0; j < n[1]; ++j) r.spectrum[i * n[1] + j] = input(i, j);
  fftw_plan p = fftw_plan_dft_2d(n[0], n[1], reinterpret_cast<fftw_complex*>(r.spectrum.data()),
                                 reinterpret_cast<fftw_complex*>(r.spectrum.data()), FFTW_FORWARD, FFTW_ESTIMATE);
  fftw_execute(p);
  fftw_destroy_plan(p);
  for (auto& v : r.spectrum) r.scale = std::max(r.scale, std::abs(v));
  r.in_scale = input_scale(n);
  return r;
}

// Forward transform of input() against the reference and the round trip, on every rank; a
// failure names the case. Also returns whether the two local passes ran as one 2-D transform.
bool check_transform(const comm::Context& ctx, std::array<int, 2> n, std::array<int, 2> procs,
                     const fft::FftOptions& opt, const Reference& ref) {
  const mesh::Decomposition dec(n, procs);
  MPI_Comm cart = make_cart(procs);
  int rank = 0;
  MPI_Comm_rank(cart, &rank);
  const Box2 mine = dec.owned(rank);
  auto fp = std::make_unique<fft::DistributedFFT>(ctx, cart, n, procs, dec.all_owned(), exec::Space::Host, opt,
                                                  nullptr, nullptr);
  fft::DistributedFFT& f = *fp;
  f.forward([](int i, int j) {
    const auto v = input(i, j);
    return cplx{v.real(), v.imag()};
  });
  const ArrayLayout2 sl = f.spectral_layout();
  const StridedIndex at = indexer(sl);
  double err = 0;
  for (int i = sl.box.lo[0]; i < sl.box.hi[0]; ++i)
    for (int j = sl.box.lo[1]; j < sl.box.hi[1]; ++j) {
      const cplx c = f.spectrum()[at(i, j)];
      err = std::max(err, std::abs(std::complex<double>(c.re, c.im) - ref.spectrum[i * n[1] + j]));
    }
  std::vector<std::complex<double>> back(mine.count());
  f.inverse([&](int i, int j, cplx v) {
    back[(i - mine.lo[0]) * mine.extent(1) + (j - mine.lo[1])] = std::complex<double>(v.re, v.im);
  });
  double rt = 0;
  for (int i = mine.lo[0]; i < mine.hi[0]; ++i)
    for (int j = mine.lo[1]; j < mine.hi[1]; ++j)
      rt = std::max(rt, std::abs(back[(i - mine.lo[0]) * mine.extent(1) + (j - mine.lo[1])] / double(n[0] * n[1]) -
                                 input(i, j)));
  const bool ok = test::all_ranks(err <= 1e-12 * ref.scale && rt <= 1e-13 * ref.in_scale);
  EXPECT_TRUE(ok) << n[0] << "x" << n[1] << " grid " << procs[0] << "x" << procs[1] << " " << opt.describe()
                  << ": forward error " << err / ref.scale << ", round trip " << rt / ref.in_scale;
  const bool two_d = f.whole_array_2d();
  fp.reset();
  MPI_Comm_free(&cart);
  return two_d;
}

}  // namespace

TEST(DistributedFFT, EveryStrategyMatchesSerialFFTWAndRoundTrips) {
  comm::Context ctx(MPI_COMM_WORLD);
  const std::array<std::array<int, 2>, 4> sizes{{{16, 16}, {15, 17}, {13, 12}, {9, 11}}};
  for (auto n : sizes) {
    const Reference ref = reference(n);
    for (auto procs : test::process_grids())
      for (const auto& opt : test::all_fft_strategies()) EXPECT_FALSE(check_transform(ctx, n, procs, opt, ref));
  }
}

// --fft-2d: with the whole array on one rank, the slab plan and the pencil plan with strided x
// transforms run one 2-D transform (FFTW's here; cuFFT's in tests/cuda and test_fft_device);
// the result matches the serial reference as the two 1-D passes do. Every other plan, and every
// plan on several ranks, keeps its 1-D passes and is unchanged.
TEST(DistributedFFT, TwoDPlanOnOneRankMatchesSerialFFTW) {
  comm::Context ctx(MPI_COMM_WORLD);
  for (auto n : std::vector<std::array<int, 2>>{{16, 16}, {15, 17}, {19, 8}}) {
    const Reference ref = reference(n);
    for (auto procs : test::process_grids()) {
      for (auto opt : fft::FftOptions::every_combination({comm::ExchangeAlgorithm::Alltoallv, comm::ExchangeAlgorithm::P2P},
                                                         fft::PlanEffort::Estimate)) {
        opt.plan_2d = true;
        const bool expect_2d = test::world_size() == 1 && (opt.intermediate == fft::Intermediate::Slab || !opt.reorder);
        EXPECT_EQ(check_transform(ctx, n, procs, opt, ref), expect_2d) << opt.describe();
        // The 2-D plan is a full complex transform: the half spectrum keeps its passes.
        opt.half_spectrum = true;
        const mesh::Decomposition dec(n, procs);
        MPI_Comm cart = make_cart(procs);
        {
          fft::DistributedFFT half(ctx, cart, n, procs, dec.all_owned(), exec::Space::Host, opt, nullptr, nullptr);
          EXPECT_FALSE(half.whole_array_2d()) << opt.describe();
        }
        MPI_Comm_free(&cart);
      }
    }
  }
}

TEST(DistributedFFT, ExchangeAlgorithmNamesAndAvailability) {
  for (auto a : {comm::ExchangeAlgorithm::Alltoallv, comm::ExchangeAlgorithm::Alltoall, comm::ExchangeAlgorithm::P2P,
                 comm::ExchangeAlgorithm::P2PPipelined, comm::ExchangeAlgorithm::Nccl}) {
    comm::ExchangeAlgorithm back = comm::ExchangeAlgorithm::Alltoallv;
    EXPECT_TRUE(comm::parse_exchange_algorithm(comm::to_string(a), back));
    EXPECT_EQ(back, a);
  }
  comm::ExchangeAlgorithm unused;
  EXPECT_FALSE(comm::parse_exchange_algorithm("alltoallw", unused));
  // The reference's all-to-all bit: set -> alltoallv, clear -> p2p (docs/fft.md).
  EXPECT_EQ(fft::FftOptions::from_reference_code(6).algorithm, comm::ExchangeAlgorithm::Alltoallv);
  EXPECT_EQ(fft::FftOptions::from_reference_code(3).algorithm, comm::ExchangeAlgorithm::P2P);
  // nccl is a known name that this build cannot run yet.
  auto o = test::small_options(16);
  o.fft_exchange = "nccl";
  EXPECT_THROW(test::config_for(o, MPI_COMM_WORLD), NotAvailable);
  o.fft_exchange = "alltoallw";
  EXPECT_THROW(test::config_for(o, MPI_COMM_WORLD), InputError);
  for (const char* name : {"alltoall", "p2p-pipelined"}) {
    o.fft_exchange = name;
    EXPECT_EQ(comm::to_string(test::config_for(o, MPI_COMM_WORLD).fft.algorithm), std::string(name));
  }
}

// VALIDATION O1: R·w for w = (sin ax cos by, cos ax sin by) is −((a + b)/|k|) cos ax cos by.
// Also with --fft-2d (one rank: FFTW's 2-D plan) under each --fft-2d-inverse: c2r must then run
// the complex-to-real inverse from the Hermitian half (the multiply writes that half), c2c the
// full complex inverse; both against the same analytic values.
TEST(Riesz, SingleModesMatchTheAnalyticTransform) {
  comm::Context ctx(MPI_COMM_WORLD);
  for (int variant = 0; variant < 4; ++variant)
  for (int n : {16, 17, 24}) {
    for (auto modes : std::vector<std::array<int, 2>>{{1, 0}, {2, 3}, {0, 4}, {3, 3}}) {
      mesh::Geometry g;
      g.nodes = {n, n};
      g.periodic = {true, true};
      g.spacing = g.node_spacing = {2.0 / n, 2.0 / n};
      g.origin = {-1.0, -1.0};
      g.period = {2.0, 2.0};
      int dims[2] = {0, 0};
      MPI_Dims_create(test::world_size(), 2, dims);
      mesh::SurfaceMesh m(ctx, g, {dims[0], dims[1]});
      auto opt = fft::FftOptions{};
      opt.effort = fft::PlanEffort::Estimate;  // variant 0: two 1-D passes
      const fft::Inverse2D inverse[] = {fft::Inverse2D::Auto, fft::Inverse2D::C2R, fft::Inverse2D::C2C,
                                        fft::Inverse2D::Auto};
      opt.plan_2d = variant > 0;
      opt.inverse_2d = inverse[variant];
      model::RieszTransform riesz(m, exec::Space::Host, opt, nullptr, nullptr);
      const bool one = test::world_size() == 1;
      EXPECT_EQ(riesz.fft().whole_array_2d(), one && variant > 0);
      // auto with estimate planning on the host: c2r (local_c2r.hpp, DistributedFFT::choose_c2r_2d)
      EXPECT_EQ(riesz.fft().inverse_from_half_2d(), one && (variant == 1 || variant == 3)) << "variant " << variant;
      const double a = M_PI * modes[0], b = M_PI * modes[1];  // wavenumbers 2π·mode/L, L = 2
      const auto L = m.layout();
      mesh::Field w(exec::Space::Host, L, 2), out(exec::Space::Host, GhostedLayout{L.ni, L.nj, 0}, 1);
      for (int i = 0; i < L.ni; ++i)
        for (int j = 0; j < L.nj; ++j) {
          const double x = g.position(0, m.owned().lo[0] + i), y = g.position(1, m.owned().lo[1] + j);
          w.view()(0, i, j) = std::sin(a * x) * std::cos(b * y);
          w.view()(1, i, j) = std::cos(a * x) * std::sin(b * y);
        }
      riesz.apply(w, 0, 1, out);
      const double kk = std::sqrt(a * a + b * b);
      double err = 0;
      for (int i = 0; i < L.ni; ++i)
        for (int j = 0; j < L.nj; ++j) {
          const double x = g.position(0, m.owned().lo[0] + i), y = g.position(1, m.owned().lo[1] + j);
          err = std::max(err, std::fabs(out.view()(0, i, j) + (a + b) / kk * std::cos(a * x) * std::cos(b * y)));
        }
      EXPECT_TRUE(test::all_ranks(err < 1e-13))
          << "variant " << variant << " n " << n << " mode " << modes[0] << "," << modes[1] << " err " << err;
    }
  }
}

TEST(Riesz, ConstantFieldHasNoTransform) {
  comm::Context ctx(MPI_COMM_WORLD);
  mesh::Geometry g;
  g.nodes = {16, 14};  // unequal, and at least 2 nodes per rank on up to 8 ranks
  g.periodic = {true, true};
  g.spacing = g.node_spacing = {0.1, 0.1};
  g.period = {1.6, 1.4};
  int dims[2] = {0, 0};
  MPI_Dims_create(test::world_size(), 2, dims);
  mesh::SurfaceMesh m(ctx, g, {dims[0], dims[1]});
  auto opt = fft::FftOptions{};
  opt.effort = fft::PlanEffort::Estimate;
  model::RieszTransform riesz(m, exec::Space::Host, opt, nullptr, nullptr);
  const auto L = m.layout();
  mesh::Field w(exec::Space::Host, L, 2), out(exec::Space::Host, GhostedLayout{L.ni, L.nj, 0}, 1);
  for (int i = 0; i < L.ni; ++i)
    for (int j = 0; j < L.nj; ++j) {
      w.view()(0, i, j) = 3.5;
      w.view()(1, i, j) = -1.25;
    }
  riesz.apply(w, 0, 1, out);
  double err = 0;
  for (int i = 0; i < L.ni; ++i)
    for (int j = 0; j < L.nj; ++j) err = std::max(err, std::fabs(out.view()(0, i, j)));
  EXPECT_TRUE(test::all_ranks(err < 1e-14)) << err;
}

// --fft-2d-inverse c2r against the two 1-D passes on fields with every wavenumber (unequal, odd
// and even sizes, so the Hermitian half's edge columns q = 0 and q = ny/2 and the Nyquist rows
// count): R·w agrees to round-off. On several ranks no 2-D plan runs and the results are equal.
TEST(Riesz, TwoDComplexToRealInverseMatchesTheOneDPasses) {
  comm::Context ctx(MPI_COMM_WORLD);
  for (auto nodes : std::vector<std::array<int, 2>>{{16, 14}, {15, 17}, {9, 12}, {8, 8}}) {
    mesh::Geometry g;
    g.nodes = nodes;
    g.periodic = {true, true};
    g.spacing = g.node_spacing = {0.1, 0.13};
    g.period = {0.1 * nodes[0], 0.13 * nodes[1]};
    int dims[2] = {0, 0};
    MPI_Dims_create(test::world_size(), 2, dims);
    if (dims[0] > nodes[0] / 2 || dims[1] > nodes[1] / 2) continue;  // at least 2 nodes per rank
    mesh::SurfaceMesh m(ctx, g, {dims[0], dims[1]});
    const auto L = m.layout();
    mesh::Field w(exec::Space::Host, L, 2);
    for (int i = 0; i < L.ni; ++i)
      for (int j = 0; j < L.nj; ++j) {
        const int gi = m.owned().lo[0] + i, gj = m.owned().lo[1] + j;
        w.view()(0, i, j) = std::sin(0.37 * gi * gi + 0.11 * gj) + 0.2 * gj;
        w.view()(1, i, j) = std::cos(0.23 * gi + 0.71 * gj * gj) - 0.1 * gi;
      }
    auto result = [&](bool two_d) {
      auto opt = fft::FftOptions{};
      opt.effort = fft::PlanEffort::Estimate;
      opt.plan_2d = two_d;
      opt.inverse_2d = fft::Inverse2D::C2R;
      model::RieszTransform riesz(m, exec::Space::Host, opt, nullptr, nullptr);
      EXPECT_EQ(riesz.fft().inverse_from_half_2d(), two_d && test::world_size() == 1);
      mesh::Field out(exec::Space::Host, GhostedLayout{L.ni, L.nj, 0}, 1);
      riesz.apply(w, 0, 1, out);
      std::vector<double> v;
      for (int i = 0; i < L.ni; ++i)
        for (int j = 0; j < L.nj; ++j) v.push_back(out.view()(0, i, j));
      return v;
    };
    const std::vector<double> passes = result(false), c2r = result(true);
    double err = 0, scale = 0;
    for (size_t k = 0; k < passes.size(); ++k) {
      err = std::max(err, std::fabs(c2r[k] - passes[k]));
      scale = std::max(scale, std::fabs(passes[k]));
    }
    EXPECT_TRUE(test::all_ranks(scale > 0.1 && err < 1e-13 * scale))
        << nodes[0] << "x" << nodes[1] << " err " << err << " scale " << scale;
  }
}

// The half spectrum (FftOptions::half_spectrum, real-to-complex first, complex-to-real inverse):
// spectrum() and spectrum_second() against serial FFTW 2D transforms of the input's real and
// imaginary parts on the Hermitian half, the ranks' spectral boxes tiling that half exactly, and
// the real inverse of a real combination of the two (Hermitian) against the same combination of
// the input; every intermediate, reorder and spectrum layout on every grid, even and odd sizes.
// The complex inverse is refused.
TEST(DistributedFFT, HalfSpectrumMatchesSerialRealTransformsAndInvertsToReal) {
  comm::Context ctx(MPI_COMM_WORLD);
  const std::array<std::array<int, 2>, 3> sizes{{{16, 16}, {15, 17}, {9, 11}}};
  const double ca = 0.5, cb = -1.5;  // the inverted spectrum: ca·FFT(Re) + cb·FFT(Im)
  for (auto n : sizes) {
    std::vector<std::complex<double>> ra(n[0] * n[1]), rb(n[0] * n[1]);
    for (int i = 0; i < n[0]; ++i)
      for (int j = 0; j < n[1]; ++j) {
        ra[i * n[1] + j] = input(i, j).real();
        rb[i * n[1] + j] = input(i, j).imag();
      }
    for (auto* r : {&ra, &rb}) {
      auto* d = reinterpret_cast<fftw_complex*>(r->data());
      fftw_plan p = fftw_plan_dft_2d(n[0], n[1], d, d, FFTW_FORWARD, FFTW_ESTIMATE);
      fftw_execute(p);
      fftw_destroy_plan(p);
    }
    double scale = 0;
    for (auto* r : {&ra, &rb})
      for (auto& v : *r) scale = std::max(scale, std::abs(v));
    const double in_scale = input_scale(n);

    for (auto procs : test::process_grids()) {
      mesh::Decomposition dec(n, procs);
      MPI_Comm cart = make_cart(procs);
      int rank = 0;
      MPI_Comm_rank(cart, &rank);
      const Box2 mine = dec.owned(rank);
      // Two exchange algorithms here (the padded one and the pipelined one, the others run the
      // same pack and unpack); test_fft_plan runs the Riesz transform under all four.
      for (auto opt : fft::FftOptions::every_combination(
               {comm::ExchangeAlgorithm::Alltoall, comm::ExchangeAlgorithm::P2PPipelined}, fft::PlanEffort::Estimate)) {
        opt.half_spectrum = true;
        fft::DistributedFFT f(ctx, cart, n, procs, dec.all_owned(), exec::Space::Host, opt, nullptr, nullptr);
        f.forward([](int i, int j) {
          const auto v = input(i, j);
          return cplx{v.real(), v.imag()};
        });
        // The half: the first dimension transformed cut to n/2 + 1, the other whole.
        const int d = f.plan().first_dim;
        std::array<int, 2> hg = n;
        hg[d] = n[d] / 2 + 1;
        const ArrayLayout2 sl = f.spectral_layout();
        long count = sl.box.count();
        MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPI_LONG, MPI_SUM, cart);
        const bool inside = sl.box.empty() || (sl.box.lo[0] >= 0 && sl.box.lo[1] >= 0 &&
                                               sl.box.hi[0] <= hg[0] && sl.box.hi[1] <= hg[1]);
        const StridedIndex at = indexer(sl);
        double err = 0;
        for (int i = sl.box.lo[0]; i < sl.box.hi[0]; ++i)
          for (int j = sl.box.lo[1]; j < sl.box.hi[1]; ++j) {
            cplx& a = f.spectrum()[at(i, j)];
            const cplx b = f.spectrum_second()[at(i, j)];
            err = std::max({err, std::abs(std::complex<double>(a.re, a.im) - ra[i * n[1] + j]),
                            std::abs(std::complex<double>(b.re, b.im) - rb[i * n[1] + j])});
            a = cplx{ca * a.re + cb * b.re, ca * a.im + cb * b.im};
          }
        EXPECT_THROW(f.inverse([](int, int, cplx) {}), Error);
        std::vector<double> back(mine.count());
        f.inverse_real([&](int i, int j, double v) { back[(i - mine.lo[0]) * mine.extent(1) + (j - mine.lo[1])] = v; });
        double rt = 0;
        for (int i = mine.lo[0]; i < mine.hi[0]; ++i)
          for (int j = mine.lo[1]; j < mine.hi[1]; ++j) {
            const auto v = input(i, j);
            rt = std::max(rt, std::abs(back[(i - mine.lo[0]) * mine.extent(1) + (j - mine.lo[1])] / double(n[0] * n[1]) -
                                       (ca * v.real() + cb * v.imag())));
          }
        const bool ok = test::all_ranks(inside && count == long(hg[0]) * hg[1] && err <= 1e-12 * scale &&
                                        rt <= 1e-13 * 2 * in_scale);
        EXPECT_TRUE(ok) << n[0] << "x" << n[1] << " grid " << procs[0] << "x" << procs[1] << " "
                        << opt.describe() << ": half boxes inside " << inside << ", count " << count
                        << ", forward error " << err / scale << ", real inverse " << rt / in_scale;
      }
      MPI_Comm_free(&cart);
    }
  }
}
