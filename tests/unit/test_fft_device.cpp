// The distributed FFT with its data on the GPU (CUDA build only; needs a GPU): every strategy
// combination (each also with --fft-2d) against a serial FFTW 2D transform and round trips, as
// test_fft.cpp does on the host, plus a short model run under each -H against -H 6. Compiled by nvcc: the element
// functions run on the device.
#include <fftw3.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

#include "beatnik/comm/context.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/fft/distributed_fft.hpp"
#include "beatnik/mesh/decomposition.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {

std::complex<double> input(int i, int j) {
  return {std::sin(0.37 * i * i + 0.11 * j) + 0.2 * j, std::cos(0.23 * i + 0.71 * j * j) - 0.1 * i};
}

// Element functions over a j-fastest block in device memory (free functions: nvcc's extended
// lambdas may not live in the private TestBody of a gtest class).
void forward_from(fft::DistributedFFT& f, const cplx* in, Box2 mine) {
  const int lo0 = mine.lo[0], lo1 = mine.lo[1], nj = mine.extent(1);
  f.forward([=] BEATNIK_HOST_DEVICE(int i, int j) { return in[long(i - lo0) * nj + (j - lo1)]; });
}
void inverse_to(fft::DistributedFFT& f, cplx* out, Box2 mine) {
  const int lo0 = mine.lo[0], lo1 = mine.lo[1], nj = mine.extent(1);
  f.inverse([=] BEATNIK_HOST_DEVICE(int i, int j, cplx v) { out[long(i - lo0) * nj + (j - lo1)] = v; });
}

bool use_gpu(const comm::Context& ctx) {
  if (exec::device_count() < 1) return false;
  exec::set_device(ctx.node_local_rank() % exec::device_count());
  return true;
}

}  // namespace

TEST(DistributedFFTDevice, EveryStrategyMatchesSerialFFTWAndRoundTrips) {
  comm::Context ctx(MPI_COMM_WORLD);
  ASSERT_TRUE(test::all_ranks(use_gpu(ctx))) << "the CUDA build's device tests need a visible GPU";
  const exec::Space dev = exec::Space::Device;
  const std::array<std::array<int, 2>, 4> sizes{{{16, 16}, {15, 17}, {13, 12}, {9, 11}}};
  for (auto n : sizes) {
    std::vector<std::complex<double>> ref(n[0] * n[1]);
    double in_scale = 0;
    for (int i = 0; i < n[0]; ++i)
      for (int j = 0; j < n[1]; ++j) {
        ref[i * n[1] + j] = input(i, j);
        in_scale = std::max(in_scale, std::abs(input(i, j)));
      }
    fftw_plan p = fftw_plan_dft_2d(n[0], n[1], reinterpret_cast<fftw_complex*>(ref.data()),
                                   reinterpret_cast<fftw_complex*>(ref.data()), FFTW_FORWARD, FFTW_ESTIMATE);
    fftw_execute(p);
    fftw_destroy_plan(p);
    double scale = 0;
    for (auto& v : ref) scale = std::max(scale, std::abs(v));

    const int P = test::world_size();
    for (int a = 1; a <= P; ++a) {
      if (P % a) continue;
      const std::array<int, 2> procs{a, P / a};
      mesh::Decomposition dec(n, procs);
      MPI_Comm cart;
      int dims[2] = {procs[0], procs[1]}, per[2] = {1, 1};
      MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &cart);
      int rank = 0;
      MPI_Comm_rank(cart, &rank);
      const Box2 mine = dec.owned(rank);
      std::vector<cplx> host_in(mine.count());
      for (int i = mine.lo[0]; i < mine.hi[0]; ++i)
        for (int j = mine.lo[1]; j < mine.hi[1]; ++j) {
          const auto v = input(i, j);
          host_in[(i - mine.lo[0]) * mine.extent(1) + (j - mine.lo[1])] = cplx{v.real(), v.imag()};
        }
      exec::Buffer<cplx> in(dev, std::max<size_t>(host_in.size(), 1)), out(dev, std::max<size_t>(host_in.size(), 1));
      exec::copy(in.data(), dev, host_in.data(), exec::Space::Host, host_in.size());
      // Each plan also with --fft-2d: on one rank the slab plan and the pencil plan with strided
      // x transforms run cuFFT's 2-D plan instead of two 1-D batches; every other plan is unchanged.
      std::vector<fft::FftOptions> plans = test::all_fft_strategies();
      for (fft::FftOptions o : test::all_fft_strategies()) {
        o.plan_2d = true;
        plans.push_back(o);
      }
      for (const fft::FftOptions& opt : plans) {
        fft::DistributedFFT f(ctx, cart, n, procs, dec.all_owned(), dev, opt, nullptr, nullptr);
        EXPECT_EQ(f.whole_array_2d(),
                  opt.plan_2d && P == 1 && (opt.intermediate == fft::Intermediate::Slab || !opt.reorder))
            << opt.describe();
        forward_from(f, in.data(), mine);
        exec::fence(dev);
        const ArrayLayout2 sl = f.spectral_layout();
        const StridedIndex at = indexer(sl);
        const long extent = sl.box.empty() ? 0 : at(sl.box.hi[0] - 1, sl.box.hi[1] - 1) + 1;
        std::vector<cplx> spec(std::max(extent, 1L));
        if (extent > 0) exec::copy(spec.data(), exec::Space::Host, f.spectrum(), dev, extent);
        double err = 0;
        for (int i = sl.box.lo[0]; i < sl.box.hi[0]; ++i)
          for (int j = sl.box.lo[1]; j < sl.box.hi[1]; ++j) {
            const cplx c = spec[at(i, j)];
            err = std::max(err, std::abs(std::complex<double>(c.re, c.im) - ref[i * n[1] + j]));
          }
        inverse_to(f, out.data(), mine);
        exec::fence(dev);
        std::vector<cplx> back(host_in.size());
        exec::copy(back.data(), exec::Space::Host, out.data(), dev, back.size());
        double rt = 0;
        for (size_t k = 0; k < back.size(); ++k)
          rt = std::max(rt, std::abs(std::complex<double>(back[k].re / (n[0] * n[1]) - host_in[k].re,
                                                          back[k].im / (n[0] * n[1]) - host_in[k].im)));
        const bool ok = test::all_ranks(err <= 1e-12 * scale && rt <= 1e-13 * in_scale);
        EXPECT_TRUE(ok) << n[0] << "x" << n[1] << " grid " << procs[0] << "x" << procs[1] << " "
                        << opt.describe() << ": forward error " << err / scale << ", round trip "
                        << rt / in_scale;
      }
      MPI_Comm_free(&cart);
    }
  }
}

TEST(DistributedFFTDevice, EveryReferenceConfigurationGivesTheSameRun) {
  comm::Context ctx(MPI_COMM_WORLD);
  ASSERT_TRUE(test::all_ranks(use_gpu(ctx))) << "the CUDA build's device tests need a visible GPU";
  auto base = [] {
    auto o = test::small_options(24);
    o.magnitude = 0.1;
    o.exec = "cuda";
    return o;
  };
  const auto ref = test::run_and_gather(base(), 5);
  for (int h = 0; h < 8; ++h)
    for (const char* alg : {"default", "alltoall", "p2p-pipelined"}) {
      auto o = base();
      o.heffte = h;
      if (std::string(alg) != "default") o.fft_exchange = alg;
      const auto s = test::run_and_gather(o, 5);
      const double d = test::world_rank() == 0 ? test::max_rel_diff(s, ref, 5) : 0.0;
      EXPECT_TRUE(test::all_ranks(d <= 1e-12)) << "-x cuda -H " << h << " exchange " << alg << ": max rel diff " << d;
    }
}
