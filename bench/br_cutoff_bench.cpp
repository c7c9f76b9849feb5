// Cutoff Birkhoff–Rott kernel benchmark: a flat-ish random surface of N particles in
// [−1, 1]² (z a gentle wave plus jitter), all of them targets, cutoff c. Prints the cell-list
// build time and the kernel's rate in pairs within the cutoff per second (and candidate pairs
// per second: the sources in the cell ranges the kernel tests for each target). The defaults are the
// reference's n = 128, c = 0.2 case: 16384 particles, about 500 neighbours each.
// --cell F: cells of F × the cutoff (default model::kBRCutoffCell).
// Usage: br_cutoff_bench [--n N] [-c cutoff] [-x host|cuda] [--reps R] [--float32] [--cell F]
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/space.hpp"
#include "beatnik/model/br_cutoff_block.hpp"
#include "beatnik/search/cell_list.hpp"

using namespace beatnik;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
// Process CPU seconds (all threads): on a shared machine the per-core rate is pairs per CPU
// second; the wall-clock rate also counts time other jobs took.
double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// Permutes the positions and strengths into sorted (cell) order: the solver's packing step.
std::vector<double> pack(const std::vector<double>& p, const std::vector<long>& order, long n) {
  std::vector<double> s(6 * n);
  for (int c = 0; c < 6; ++c)
    for (long q = 0; q < n; ++q) s[c * n + q] = p[c * n + order[q]];
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  long n = 16384;
  double cutoff = 0.2;
  int reps = 5;
  bool f32 = false;
  double cell = model::kBRCutoffCell;  // cell size / cutoff
  exec::Space space = exec::Space::Host;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--n" && i + 1 < argc) n = std::stol(argv[++i]);
    else if (a == "-c" && i + 1 < argc) cutoff = std::stod(argv[++i]);
    else if (a == "--reps" && i + 1 < argc) reps = std::stoi(argv[++i]);
    else if (a == "--float32") f32 = true;
    else if (a == "--cell" && i + 1 < argc) cell = std::stod(argv[++i]);
    else if (a == "-x" && i + 1 < argc) space = std::string(argv[++i]) == "cuda" ? exec::Space::Device : exec::Space::Host;
    else {
      std::fprintf(stderr, "usage: br_cutoff_bench [--n N] [-c cutoff] [-x host|cuda] [--reps R] [--float32] [--cell F]\n");
      return 2;
    }
  }
  if (space == exec::Space::Device) exec::bind_device(0, -1);
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> p(6 * n);  // [x|y|z|qx|qy|qz], original order
  for (long k = 0; k < n; ++k) {
    const double x = u(rng), y = u(rng);
    p[k] = x;
    p[n + k] = y;
    p[2 * n + k] = 0.05 * std::cos(M_PI * x) * std::cos(M_PI * y) + 0.005 * u(rng);
    p[3 * n + k] = 1e-4 * std::sin(3 * x);
    p[4 * n + k] = 1e-4 * std::cos(2 * y);
    p[5 * n + k] = 1e-5 * x * y;
  }
  exec::Buffer<double> pos(space, 6 * n), src(space, 6 * n), acc(space, 3 * n);
  exec::Buffer<unsigned long long> pairs(space, 1);
  exec::copy(pos.data(), space, p.data(), exec::Space::Host, 6 * n);

  // Cell-list build (bounding box, keys, counting sort), repeated: the scratch is reused.
  search::CellList cl(space);
  cl.build(pos.data(), pos.data() + n, pos.data() + 2 * n, n, cell * cutoff);
  exec::fence(space);
  double t0 = now();
  for (int r = 0; r < reps; ++r) cl.build(pos.data(), pos.data() + n, pos.data() + 2 * n, n, cell * cutoff);
  exec::fence(space);
  const double build = (now() - t0) / reps;

  std::vector<long> order(n);
  exec::copy(order.data(), exec::Space::Host, cl.order(), space, n);
  const std::vector<double> s = pack(p, order, n);
  exec::copy(src.data(), space, s.data(), exec::Space::Host, 6 * n);
  const search::CellGrid g = cl.grid();
  std::vector<long> start(g.count() + 1);
  exec::copy(start.data(), exec::Space::Host, cl.cell_start(), space, start.size());
  // Candidates: every target against the sources of its 27 cells (what the host loop computes).
  double candidates = 0;
  for (long q = 0; q < n; ++q) {
    const double tx = s[q], ty = s[n + q], tz = s[2 * n + q];
    model::detail::br_cutoff_visit(g, start.data(), tx, ty, tz, model::detail::br_cutoff_reach(cutoff, tx, ty, tz),
                                   [&](long b, long e) { candidates += double(e - b); });
  }

  model::BRCutoffArgs a;
  a.sources = src.data();
  a.ns = n;
  a.order = cl.order();
  a.nt = n;
  a.grid = g;
  a.cell_start = cl.cell_start();
  a.cutoff = cutoff;
  a.float32_test = f32;
  a.eps = 0.25 * 2.0 / std::sqrt(double(n));
  a.acc = acc.data();
  a.pairs = pairs.data();
  auto run = [&] {
    if (space == exec::Space::Host) model::br_cutoff_host(a);
    else model::br_cutoff_device(a);
  };
  pairs.zero();
  run();  // warm-up, and the pair count
  exec::fence(space);
  unsigned long long np = 0;
  exec::copy(&np, exec::Space::Host, pairs.data(), space, 1);
  a.pairs = nullptr;
  t0 = now();
  const double c0 = cpu_seconds();
  for (int r = 0; r < reps; ++r) run();
  exec::fence(space);
  const double kernel = (now() - t0) / reps, cpu = (cpu_seconds() - c0) / reps;

  std::printf("cutoff Birkhoff-Rott kernel, %s, %d host thread(s), %s distance test\n", exec::to_string(space),
              exec::host_threads(), f32 ? "float32" : "double");
  std::printf("N %ld, cutoff %g, cells %d x %d x %d, %.1f neighbours per target (self included), %.2f candidates per pair\n",
              n, cutoff, g.n[0], g.n[1], g.n[2], double(np) / n, candidates / double(np));
  std::printf("cell-list build %.3e s; kernel %.3e s wall: %.3e pairs/s, %.3e candidate pairs/s\n", build, kernel,
              double(np) / kernel, candidates / kernel);
  if (space == exec::Space::Host)
    std::printf("kernel %.3e cpu-s: %.3e pairs per cpu-second, %.3e candidates per cpu-second\n", cpu,
                double(np) / cpu, candidates / cpu);
  return 0;
}
