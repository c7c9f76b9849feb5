// Exact Birkhoff–Rott kernel benchmark.
//  0. On the host, first: the core's clock (dependent integer adds) and its 256-bit FMA
//     throughput, the measure for a kernel's cycles a pair against its operations' bound.
//  1. Pair-image interactions per second of one block (all targets × all sources × 9
//     periodic images, the consistent profile's centred 3x3 block) for N = 64², 128², 256²
//     (512² with --large), on the host (all OpenMP threads) or the GPU (-x cuda). On the host
//     every kernel this CPU supports (br_host_kernel.hpp), side by side (scalar to 128² only).
//  2. The tree solver's pair kernel (br_targets_host, docs/tree.md) on the host: pairs per second
//     of batches of 64 targets against ranges of 64 sources (as the near sums) and of 81 (a
//     degree-8 proxy set, as the far sums), plain and with the image window's test, every kernel
//     this CPU supports.
//  3. Time per high-order step at n = 64, periodic (README-style problem), on the ranks this
//     program runs on (run it under mpirun with 1 and 2 ranks, OMP_NUM_THREADS=1).
// Usage: br_kernel_bench [--kernel-only|--targets-only|--step-only] [--large] [--max-n N]
//                        [--repeats R] [-x host|cuda] [--steps S]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "beatnik/app/problem.hpp"
#include "beatnik/app/simulation.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/comm/ring/registry.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/space.hpp"
#include "beatnik/model/br_block.hpp"
#include "beatnik/model/br_host_kernel.hpp"
#include "beatnik/model/br_targets_host.hpp"

using namespace beatnik;

namespace {

// Rate of one full block on a wavy periodic sheet of n×n nodes in [−1, 1)².
// Process CPU seconds (all threads): on a shared machine the per-core rate is
// interactions / CPU seconds, the wall-clock rate also counts time other jobs took.
double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// An n × n wavy sheet of sources on [−1, 1)² ([x|y|z|qx|qy|qz], n² each): the benchmarks' input.
void wavy_sheet(int n, std::vector<double>& src) {
  const long N = long(n) * n;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const long k = long(i) * n + j;
      const double x = -1.0 + 2.0 * i / n, y = -1.0 + 2.0 * j / n;
      src[k] = x;
      src[N + k] = y;
      src[2 * N + k] = 0.05 * std::cos(2 * M_PI * x) * std::cos(2 * M_PI * y);
      src[3 * N + k] = 1e-4 * std::sin(3.0 * x);
      src[4 * N + k] = 1e-4 * std::cos(2.0 * y);
      src[5 * N + k] = 1e-5 * x * y;
    }
}

double kernel_rate(int n, exec::Space space, model::BRHostKernel kernel, int repeats, double* seconds, double* cpu) {
  const long N = long(n) * n;
  std::vector<double> src(6 * N), tgt(3 * N);
  wavy_sheet(n, src);
  std::memcpy(tgt.data(), src.data(), 3 * N * sizeof(double));
  exec::Buffer<double> s(space, 6 * N), t(space, 3 * N), acc(space, 3 * N);
  exec::Buffer<double> partial(space, space == exec::Space::Device ? size_t(model::kBRMaxSplits) * 3 * N : 0);
  exec::copy(s.data(), space, src.data(), exec::Space::Host, 6 * N);
  exec::copy(t.data(), space, tgt.data(), exec::Space::Host, 3 * N);
  acc.zero();
  model::BRBlockArgs a;
  a.targets = t.data();
  a.nt = N;
  a.t0 = 0;
  a.t1 = N;
  a.sources = s.data();
  a.ns = N;
  a.images.k = 1;
  a.images.centred = true;
  a.images.period[0] = a.images.period[1] = 2.0;
  a.eps = 0.25 * 2.0 / n;
  a.acc = acc.data();
  a.partial = partial.data();
  auto run = [&] {
    if (space == exec::Space::Host) model::br_block_host(a, kernel);
    else model::br_block_device(a);
  };
  run();  // warm-up
  exec::fence(space);
  const double t0 = wall_seconds(), c0 = cpu_seconds();
  for (int r = 0; r < repeats; ++r) run();
  exec::fence(space);
  *seconds = (wall_seconds() - t0) / repeats;
  *cpu = (cpu_seconds() - c0) / repeats;
  return double(N) * N * 9 / *seconds;
}

// The tree kernel's rate: the n×n sheet's targets in batches of 64 (the default leaf), each
// against every source of the sheet cut into ranges of `range` sources at image (1, 0) (windowed:
// the pairs outside the window are tested and skipped), batches in parallel as the solver runs them.
double targets_rate(int n, model::BRHostKernel kernel, long range, bool window, int repeats, double* seconds,
                    double* cpu) {
  const long N = long(n) * n, batch = 64;
  std::vector<double> src(6 * N), acc(3 * N, 0.0);
  wavy_sheet(n, src);
  model::BRImages img;
  img.k = 1;
  img.period[0] = img.period[1] = 2.0;
  std::vector<model::BRSourceRange> ranges;
  for (long k = 0; k < N; k += range) ranges.push_back({src.data(), N, k, std::min(N, k + range), 1, 0, window});
  const double eps = 0.25 * 2.0 / n;
  const double *tx = src.data(), *ty = tx + N, *tz = ty + N;
  double *ux = acc.data(), *uy = ux + N, *uz = uy + N;
  long pairs = 0;
  auto run = [&] {
    long p = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : p)
    for (long t = 0; t < N; t += batch)
      p += model::br_targets_host(tx + t, ty + t, tz + t, std::min(batch, N - t), ranges.data(), int(ranges.size()),
                                  img, eps, ux + t, uy + t, uz + t, kernel);
    pairs = p;
  };
  run();  // warm-up
  const double t0 = wall_seconds(), c0 = cpu_seconds();
  for (int r = 0; r < repeats; ++r) run();
  *seconds = (wall_seconds() - t0) / repeats;
  *cpu = (cpu_seconds() - c0) / repeats;
  return double(pairs) / *seconds;
}

#if defined(__x86_64__)
// The core's clock, from a chain of dependent integer adds (one a cycle), and its 256-bit FMA
// throughput, from ten independent chains of vfmadd231pd (enough to cover the latency): the
// measure against which a pair kernel's cycles and its operations' bound are read (docs/tree.md,
// "Not done yet"). Both ~0.1 s; the clock is the one the core runs at now (turbo included).
double clock_ghz() {
  const long n = 100000000;
  const double t0 = wall_seconds();
  long a = 0;
  asm volatile("mov %1, %%rcx\n1:\n add $1, %0\n add $1, %0\n add $1, %0\n add $1, %0\n sub $4, %%rcx\n jnz 1b\n"
               : "+r"(a)
               : "r"(n)
               : "rcx", "cc");
  return double(n) / (wall_seconds() - t0) / 1e9;
}

__attribute__((target("avx2,fma"))) double fma_vectors_per_second() {
  const long n = 20000000;
  const double t0 = wall_seconds();
  asm volatile(
      "vxorpd %%ymm0,%%ymm0,%%ymm0\n vxorpd %%ymm1,%%ymm1,%%ymm1\n vxorpd %%ymm2,%%ymm2,%%ymm2\n"
      "vxorpd %%ymm3,%%ymm3,%%ymm3\n vxorpd %%ymm4,%%ymm4,%%ymm4\n vxorpd %%ymm5,%%ymm5,%%ymm5\n"
      "vxorpd %%ymm6,%%ymm6,%%ymm6\n vxorpd %%ymm7,%%ymm7,%%ymm7\n vxorpd %%ymm8,%%ymm8,%%ymm8\n"
      "vxorpd %%ymm9,%%ymm9,%%ymm9\n vxorpd %%ymm14,%%ymm14,%%ymm14\n vxorpd %%ymm15,%%ymm15,%%ymm15\n"
      "mov %0, %%rcx\n1:\n"
      "vfmadd231pd %%ymm14,%%ymm15,%%ymm0\n vfmadd231pd %%ymm14,%%ymm15,%%ymm1\n"
      "vfmadd231pd %%ymm14,%%ymm15,%%ymm2\n vfmadd231pd %%ymm14,%%ymm15,%%ymm3\n"
      "vfmadd231pd %%ymm14,%%ymm15,%%ymm4\n vfmadd231pd %%ymm14,%%ymm15,%%ymm5\n"
      "vfmadd231pd %%ymm14,%%ymm15,%%ymm6\n vfmadd231pd %%ymm14,%%ymm15,%%ymm7\n"
      "vfmadd231pd %%ymm14,%%ymm15,%%ymm8\n vfmadd231pd %%ymm14,%%ymm15,%%ymm9\n"
      "dec %%rcx\n jnz 1b\n vzeroupper\n"
      :
      : "r"(n)
      : "rcx", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm14",
        "xmm15");
  return 10.0 * double(n) / (wall_seconds() - t0);
}

void print_core_peak() {
  const double ghz = clock_ghz();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    const double f = fma_vectors_per_second();
    std::printf("core: %.2f GHz (dependent integer adds), %.3e 256-bit FMAs a second = %.2f a cycle (10 chains)\n",
                ghz, f, f / (ghz * 1e9));
  } else {
    std::printf("core: %.2f GHz (dependent integer adds); no AVX2 + FMA, FMA throughput not measured\n", ghz);
  }
}
#else
void print_core_peak() { std::printf("core: clock and FMA throughput are measured on x86-64 only\n"); }
#endif

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bool kernel = true, targets = true, step = true, large = false;
  exec::Space space = exec::Space::Host;
  long steps = 2;
  int max_n = 1 << 20, repeats_set = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--kernel-only") step = targets = false;
    else if (a == "--targets-only") step = kernel = false;
    else if (a == "--step-only") kernel = targets = false;
    else if (a == "--large") large = true;
    else if (a == "-x" && i + 1 < argc) space = std::string(argv[++i]) == "cuda" ? exec::Space::Device : exec::Space::Host;
    else if (a == "--steps" && i + 1 < argc) steps = std::stol(argv[++i]);
    else if (a == "--max-n" && i + 1 < argc) max_n = std::stoi(argv[++i]);
    else if (a == "--repeats" && i + 1 < argc) repeats_set = std::stoi(argv[++i]);
  }
  if (space == exec::Space::Device && exec::device_count() > 0) exec::set_device(0);
  if ((kernel || targets) && space == exec::Space::Host && rank == 0) print_core_peak();
  if (kernel && rank == 0) {
    std::printf("Birkhoff-Rott block kernel, %s, %d host thread(s), 9 images (centred 3x3)\n",
                exec::to_string(space), exec::host_threads());
    std::printf("%14s %10s %14s %12s %12s %18s %22s\n", "kernel", "N", "interactions", "wall s", "cpu s",
                "interactions/s", "per cpu-second (host)");
    std::vector<int> sizes{64, 128, 256};
    if (large) sizes.push_back(512);
    std::vector<model::BRHostKernel> kernels{model::br_host_kernel_default()};
    if (space == exec::Space::Host) kernels = model::br_host_kernels_supported();
    for (model::BRHostKernel k : kernels)
      for (int n : sizes) {
        if ((k == model::BRHostKernel::Scalar && n > 128) || n > max_n) continue;  // scalar: minutes per block
        double sec = 0, cpu = 0;
        const int repeats = repeats_set > 0 ? repeats_set : space == exec::Space::Device ? 5 : (n <= 64 ? 10 : 1);
        const double rate = kernel_rate(n, space, k, repeats, &sec, &cpu);
        const double pairs = double(n) * n * n * n * 9;
        std::printf("%14s %6d^2 %14.4e %12.4e %12.4e %18.4e %22.4e\n",
                    space == exec::Space::Host ? model::to_string(k) : "device", n, pairs, sec, cpu, rate,
                    pairs / cpu);
        std::fflush(stdout);
      }
  }
  if (targets && space == exec::Space::Host && rank == 0) {
    const int n = 64;
    std::printf("Tree pair kernel (br_targets_host), %d host thread(s): %d^2 targets in batches of 64 against "
                "all %d^2 sources in ranges, image (1, 0)\n",
                exec::host_threads(), n, n);
    std::printf("%14s %8s %8s %14s %12s %12s %14s %18s\n", "kernel", "range", "window", "pairs", "wall s", "cpu s",
                "pairs/s", "per cpu-second");
    for (model::BRHostKernel k : model::br_host_kernels_supported())
      for (long range : {64L, 81L})
        for (bool window : {false, true}) {
          double sec = 0, cpu = 0;
          const int repeats = repeats_set > 0 ? repeats_set : (k == model::BRHostKernel::Scalar ? 1 : 3);
          const double rate = targets_rate(n, k, range, window, repeats, &sec, &cpu);
          std::printf("%14s %8ld %8s %14.4e %12.4e %12.4e %14.4e %18.4e\n", model::to_string(k), range,
                      window ? "yes" : "no", rate * sec, sec, cpu, rate, rate * sec / cpu);
          std::fflush(stdout);
        }
  }
  if (step) {
    app::Options o;
    o.order = "high";
    o.nodes = 64;
    o.fftw_plan = "estimate";
    o.progress_every = 0;
    o.exec = exec::to_string(space);
    for (const auto& entry : comm::ring::registry()) {
      const char* strategy = entry.name;
      o.br_strategy = strategy;
      std::unique_ptr<app::Simulation> made;
      try {  // refused alike on every rank (e.g. a strategy the GPU transport cannot carry)
        made = std::make_unique<app::Simulation>(MPI_COMM_WORLD, app::make_run_config(o, size));
      } catch (const NotAvailable& e) {
        if (rank == 0) std::printf("ring %-10s: not run: %s\n", strategy, e.what());
        continue;
      }
      app::Simulation& sim = *made;
      sim.step();  // warm-up
      sim.timers().reset();
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = wall_seconds(), c0 = cpu_seconds();
      for (long s = 0; s < steps; ++s) sim.step();
      double cpu = (cpu_seconds() - c0) / steps;
      MPI_Barrier(MPI_COMM_WORLD);
      const double per = (wall_seconds() - t0) / steps;
      MPI_Allreduce(MPI_IN_PLACE, &cpu, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      const double pairs = 3.0 * 64 * 64 * 64 * 64 * 9;
      auto region = [&](const char* r) {
        auto it = sim.timers().stats().find(r);
        return it == sim.timers().stats().end() ? 0.0 : it->second.seconds / steps;
      };
      if (rank == 0)
        std::printf("high order, n = 64 periodic, %d rank(s) x %d thread(s), ring %-10s: %.4f s per step wall, "
                    "%.4f cpu-s per step per rank (%.3e interactions per cpu-second per rank); rank 0: "
                    "compute %.4f, ring exposed %.2e, ring hidden %.2e s per step\n",
                    size, exec::host_threads(), strategy, per, cpu, pairs / cpu / size, region("br.exact.compute"),
                    region("br.exact.ring"), region("br.exact.ring.hidden"));
    }
  }
  MPI_Finalize();
  return 0;
}
