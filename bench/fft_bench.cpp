// beatnik-fft-bench: times the distributed 2D FFT of beatnik under each strategy, verifies it,
// and compares its exchanges with a plain all-to-all of the same per-pair sizes.
//
// Per configuration and size N (M = N^2 points):
//   time      forward + inverse pair, max over ranks; median (and min) over --reps pairs after
//             --warmup pairs, times --rounds rounds that visit the configurations in turn
//   GFLOP/s   2 x 5 M log2(M) / time (the usual FFT convention: two transforms per pair)
//   sent      bytes this rank sent to other ranks per pair (CommStats, max over ranks; the
//             padded all-to-all counts its padding)
//   exch GB/s useful bytes to other ranks per pair / time in fft.reshape (pack + exchange + unpack)
//   a2a GB/s  the same bytes / time of the bare exchanges with MPI_Alltoallv (identical per-pair
//             counts, same staging) -- what the machine's all-to-all delivers for this pattern
//   fraction  exch / a2a
#include <fftw3.h>
#include <fmt/format.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "beatnik/app/mpi_main.hpp"
#include "beatnik/app/problem.hpp"
#include "beatnik/app/provenance.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/context.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/exec/device_clock.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/fft/distributed_fft.hpp"
#include "beatnik/mesh/decomposition.hpp"
#include "fft_bench_kernels.hpp"

using namespace beatnik;

namespace {

struct BenchOptions {
  std::vector<int> sizes{256, 1024};
  bool all = false;        // the whole strategy space
  bool reference = false;  // the reference's eight -H configurations
  int reps = 10;
  int warmup = 2;
  int rounds = 1;
  int serial_verify_max = 2048;
  std::string json;
  app::Options program;  // -H, --fft-*, --fftw-plan, --ranks-grid, -x as in beatnik
};

// Deterministic input in [-1, 1]^2 with content at every wavenumber.
std::complex<double> input_value(long i, long j) {
  auto mix = [](std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  const std::uint64_t h = mix((static_cast<std::uint64_t>(i) << 32) ^ static_cast<std::uint64_t>(j));
  const double a = double(h >> 11) * 0x1.0p-53, b = double(mix(h) >> 11) * 0x1.0p-53;
  return {2 * a - 1, 2 * b - 1};
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double max_over_ranks(double v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v;
}
double sum_over_ranks(double v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

// -H code whose (exchange, intermediate, reorder) this plan has, or -1.
int reference_code_of(const fft::FftOptions& o) {
  for (int h = 0; h < 8; ++h) {
    const auto r = fft::FftOptions::from_reference_code(h);
    if (r.algorithm == o.algorithm && r.intermediate == o.intermediate && r.reorder == o.reorder) return h;
  }
  return -1;
}

// The NCCL transport of a multi-GPU run (null otherwise): only plans with the nccl exchange use
// it; the MPI exchanges run staged through host memory.
comm::Transport* g_nccl = nullptr;
comm::Transport* transport_for(const fft::FftOptions& o) {
  return o.algorithm == comm::ExchangeAlgorithm::Nccl ? g_nccl : nullptr;
}

std::vector<fft::FftOptions> strategies(const BenchOptions& b, const fft::FftOptions& chosen, exec::Space space) {
  std::vector<fft::FftOptions> v;
  if (b.reference) {
    for (int h = 0; h < 8; ++h) {
      auto o = fft::FftOptions::from_reference_code(h);
      o.spectrum_in_input_layout = chosen.spectrum_in_input_layout;
      o.effort = chosen.effort;
      v.push_back(o);
    }
  } else if (b.all) {
    std::vector<comm::ExchangeAlgorithm> algs;
    for (auto a : {comm::ExchangeAlgorithm::Alltoallv, comm::ExchangeAlgorithm::Alltoall, comm::ExchangeAlgorithm::P2P,
                   comm::ExchangeAlgorithm::P2PPipelined, comm::ExchangeAlgorithm::Nccl})
      if (comm::exchange_unavailable_reason(a, space).empty() && (a != comm::ExchangeAlgorithm::Nccl || g_nccl))
        algs.push_back(a);
    v = fft::FftOptions::every_combination(algs, chosen.effort);
  } else {
    v.push_back(chosen);
  }
  return v;
}

// The problem of one size: this rank's block of the input and, when affordable, the serial
// FFTW spectrum (computed by every rank; shared by all configurations).
struct Problem {
  int n = 0;
  mesh::Decomposition dec{{1, 1}, {1, 1}};
  Box2 mine;
  std::vector<cplx> host_input;
  exec::Buffer<cplx> input, output;
  std::vector<std::complex<double>> serial;  // empty: verify by round trip + Parseval only
  double input_norm2 = 0;                    // sum |x|^2 over all ranks
  double input_max = 0;
};

Problem make_problem(int n, std::array<int, 2> procs, exec::Space space, int rank, bool serial_reference) {
  Problem p;
  p.n = n;
  p.dec = mesh::Decomposition({n, n}, procs);
  p.mine = p.dec.owned(rank);
  const int ni = p.mine.extent(0), nj = p.mine.extent(1);
  p.host_input.resize(size_t(ni) * nj);
  double norm2 = 0, mx = 0;
  for (int i = 0; i < ni; ++i)
    for (int j = 0; j < nj; ++j) {
      const auto v = input_value(p.mine.lo[0] + i, p.mine.lo[1] + j);
      p.host_input[size_t(i) * nj + j] = cplx{v.real(), v.imag()};
      norm2 += std::norm(v);
      mx = std::max(mx, std::abs(v));
    }
  p.input_norm2 = sum_over_ranks(norm2);
  p.input_max = max_over_ranks(mx);
  p.input = exec::Buffer<cplx>(space, std::max<size_t>(p.host_input.size(), 1));
  p.output = exec::Buffer<cplx>(space, std::max<size_t>(p.host_input.size(), 1));
  exec::copy(p.input.data(), space, p.host_input.data(), exec::Space::Host, p.host_input.size());
  if (serial_reference) {
    p.serial.resize(size_t(n) * n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) p.serial[size_t(i) * n + j] = input_value(i, j);
    auto* d = reinterpret_cast<fftw_complex*>(p.serial.data());
    fftw_plan plan = fftw_plan_dft_2d(n, n, d, d, FFTW_FORWARD, FFTW_ESTIMATE);
    fftw_execute(plan);
    fftw_destroy_plan(plan);
  }
  return p;
}

void forward_from_input(fft::DistributedFFT& f, const Problem& p) { bench::forward_from_block(f, p.input.data(), p.mine); }
void inverse_to_output(fft::DistributedFFT& f, const Problem& p) { bench::inverse_to_block(f, p.output.data(), p.mine); }

struct Verification {
  std::string method;
  double forward_error = 0;    // max |X - X_serial| / max |X_serial| (serial method only)
  double parseval_error = 0;   // |sum |X|^2 - M sum |x|^2| / (M sum |x|^2)
  double roundtrip_error = 0;  // max |IFFT(FFT x)/M - x| / max |x|
  bool ok = false;
};

Verification verify(fft::DistributedFFT& f, const Problem& p, exec::Space space) {
  Verification v;
  v.method = p.serial.empty() ? "roundtrip+parseval" : "serial-fftw+roundtrip+parseval";
  const double M = double(p.n) * p.n;
  forward_from_input(f, p);
  exec::fence(space);
  const ArrayLayout2 sl = f.spectral_layout();
  const StridedIndex at = indexer(sl);
  const Box2& b = sl.box;
  const long extent = b.empty() ? 0 : at(b.hi[0] - 1, b.hi[1] - 1) + 1;
  std::vector<cplx> spec(std::max(extent, 1L));
  if (extent > 0) exec::copy(spec.data(), exec::Space::Host, f.spectrum(), space, extent);
  double err = 0, ref_max = 0, norm2 = 0;
  for (int i = b.lo[0]; i < b.hi[0]; ++i)
    for (int j = b.lo[1]; j < b.hi[1]; ++j) {
      const cplx c = spec[at(i, j)];
      const std::complex<double> x(c.re, c.im);
      norm2 += std::norm(x);
      if (!p.serial.empty()) {
        const auto r = p.serial[size_t(i) * p.n + j];
        err = std::max(err, std::abs(x - r));
        ref_max = std::max(ref_max, std::abs(r));
      }
    }
  norm2 = sum_over_ranks(norm2);
  v.parseval_error = std::fabs(norm2 - M * p.input_norm2) / (M * p.input_norm2);
  if (!p.serial.empty()) v.forward_error = max_over_ranks(err) / max_over_ranks(ref_max);
  inverse_to_output(f, p);
  exec::fence(space);
  std::vector<cplx> back(p.host_input.size());
  exec::copy(back.data(), exec::Space::Host, p.output.data(), space, back.size());
  double rt = 0;
  for (size_t k = 0; k < back.size(); ++k)
    rt = std::max(rt, std::abs(std::complex<double>(back[k].re / M - p.host_input[k].re,
                                                    back[k].im / M - p.host_input[k].im)));
  v.roundtrip_error = max_over_ranks(rt) / p.input_max;
  v.ok = v.forward_error <= 1e-12 && v.parseval_error <= 1e-12 && v.roundtrip_error <= 1e-13;
  return v;
}

// Samples of one configuration, gathered over one or more rounds.
struct Samples {
  std::vector<double> pairs, reshapes;  // s per forward+inverse pair, max over ranks, one per rep
  double sent = -1;                     // bytes to other ranks per pair (max over ranks)
  double payload = 0;                   // useful bytes to other ranks per pair (max over ranks)
};

// `reps` timed pairs after `warmup` untimed ones, appended to `out`.
void time_fft(fft::DistributedFFT& f, const Problem& p, exec::Space space, Timers& timers,
              comm::CommStats& stats, const BenchOptions& b, Samples& out) {
  for (int w = 0; w < b.warmup; ++w) {
    forward_from_input(f, p);
    inverse_to_output(f, p);
  }
  exec::fence(space);
  stats.reset();
  timers.reset();
  for (int r = 0; r < b.reps; ++r) {
    const double before = timers.stats().count("fft.reshape") ? timers.stats().at("fft.reshape").seconds : 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = wall_seconds();
    forward_from_input(f, p);
    inverse_to_output(f, p);
    exec::fence(space);
    const double t1 = wall_seconds();
    timers.resolve();  // device runs: fold the CUDA-event timestamps of this pair in
    const double after = timers.stats().count("fft.reshape") ? timers.stats().at("fft.reshape").seconds : 0.0;
    double v[2] = {t1 - t0, after - before};
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    out.pairs.push_back(v[0]);
    out.reshapes.push_back(v[1]);
  }
  if (out.sent < 0) {  // the same every pair: taken from the first block
    double sent = 0;
    if (stats.stats().count("fft")) {
      const auto& s = stats.stats().at("fft");
      sent = double(s.bytes[1] + s.bytes[2]) / b.reps;
    }
    out.sent = max_over_ranks(sent);
    double payload = 0;
    for (const auto& r : f.reshapes())
      payload += r->payload_bytes_to_others(false, sizeof(cplx)) + r->payload_bytes_to_others(true, sizeof(cplx));
    out.payload = max_over_ranks(payload);
  }
}

// The exchanges of a plan alone, as MPI_Alltoallv with the plan's per-pair counts (NCCL plans:
// the same with NCCL), forward then reverse: seconds per pair appended to `out`.
void time_plain_alltoall(const comm::Context& ctx, MPI_Comm cart, const Problem& p, std::array<int, 2> procs,
                         exec::Space space, fft::FftOptions o, const BenchOptions& b, std::vector<double>& out) {
  o.algorithm = o.algorithm == comm::ExchangeAlgorithm::Nccl ? comm::ExchangeAlgorithm::Nccl
                                                             : comm::ExchangeAlgorithm::Alltoallv;
  o.effort = fft::PlanEffort::Estimate;
  fft::DistributedFFT f(ctx, cart, {p.n, p.n}, procs, p.dec.all_owned(), space, o, nullptr, nullptr,
                        transport_for(o));
  long elems = 1;
  for (const auto& r : f.reshapes()) elems = std::max(elems, r->buffer_elements());
  exec::Buffer<cplx> send(space, elems), recv(space, elems);
  send.zero();
  auto once = [&] {
    for (const auto& r : f.reshapes()) r->exchange_only(send.data(), recv.data(), sizeof(cplx), false);
    for (auto it = f.reshapes().rbegin(); it != f.reshapes().rend(); ++it)
      (*it)->exchange_only(send.data(), recv.data(), sizeof(cplx), true);
    exec::fence(space);
  };
  for (int w = 0; w < b.warmup; ++w) once();
  for (int r = 0; r < b.reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = wall_seconds();
    once();
    out.push_back(max_over_ranks(wall_seconds() - t0));
  }
}

std::string plain_key(const fft::FftOptions& o) {
  return fmt::format("{}/{}/{}", o.algorithm == comm::ExchangeAlgorithm::Nccl ? "nccl" : "mpi",
                     o.intermediate == fft::Intermediate::Slab ? "slab" : "pencil", o.spectrum_in_input_layout);
}

int run(int argc, char** argv, int rank, int size) {
  BenchOptions b;
  CLI::App app{"beatnik-fft-bench: the distributed 2D FFT of beatnik under each strategy: verified, timed, and "
               "compared with a plain all-to-all of the same sizes.",
               "beatnik-fft-bench"};
  app.get_formatter()->column_width(34);
  app.add_option("--sizes", b.sizes, "FFT sizes N (N x N complex), comma separated")->delimiter(',');
  auto* all = app.add_flag("--all", b.all, "Every strategy: exchange x intermediate x reorder x spectrum");
  app.add_flag("--reference", b.reference, "The reference's eight -H configurations (spectrum from --fft-spectrum)")
      ->excludes(all);
  app.add_option("--reps", b.reps, "Timed forward+inverse pairs per configuration (median reported)");
  app.add_option("--warmup", b.warmup, "Untimed pairs before each timed block");
  app.add_option("--rounds", b.rounds,
                 "Time the configurations in turn this many times (reps each; keeps all plans in memory)");
  app.add_option("--serial-verify-max", b.serial_verify_max,
                 "Largest N verified against a serial FFTW transform (larger: round trip + Parseval only)");
  app.add_option("--json", b.json, "Write the results to this JSON file");
  app::Options& o = b.program;
  o.fftw_plan = "measure";
  app.add_option("-H,--heffte-configuration", o.heffte, "Reference FFT configuration 0..7 (4 all-to-all, 2 pencils, 1 reorder)");
  app.add_option("--fft-exchange", o.fft_exchange, "alltoallv, alltoall, p2p, p2p-pipelined, nccl");
  app.add_option("--fft-intermediate", o.fft_intermediate, "slab or pencil");
  app.add_option("--fft-reorder", o.fft_reorder, "contiguous or strided");
  app.add_option("--fft-spectrum", o.fft_spectrum, "intermediate or input");
  app.add_option("--fftw-plan", o.fftw_plan, "FFTW planning effort: estimate, measure, patient");
  app.add_option("--ranks-grid", o.ranks_grid, "Process grid PxQ (default: MPI_Dims_create)");
  app.add_option("-x,--exec", o.exec, "host or cuda");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (rank == 0) app.exit(e);
    return e.get_exit_code() == 0 ? 0 : 2;
  }
  app::RunConfig cfg;
  try {
    if (b.sizes.empty()) throw InputError("--sizes needs at least one size");
    if (b.reps < 1 || b.warmup < 0 || b.rounds < 1)
      throw InputError("--reps and --rounds must be at least 1, --warmup at least 0");
    o.nodes = std::max(*std::max_element(b.sizes.begin(), b.sizes.end()) + 1, 4);
    cfg = app::make_run_config(o, size);  // validates -x, -H, --fft-*, --ranks-grid as beatnik does
    for (int n : b.sizes)
      for (int d = 0; d < 2; ++d)
        if (n < 2 * cfg.procs[d])
          throw InputError(fmt::format("size {} is too small for the {}x{} process grid", n, cfg.procs[0], cfg.procs[1]));
  } catch (const Error& e) {
    if (rank == 0) fmt::print(stderr, "beatnik-fft-bench: error: {}\n", e.what());
    return 2;
  }

  const exec::Space space = cfg.space;
  comm::Context ctx(MPI_COMM_WORLD);
  if (space == exec::Space::Device) {
    if (exec::device_count() < 1) {
      if (rank == 0) fmt::print(stderr, "beatnik-fft-bench: error: -x cuda but no GPU is visible\n");
      return 2;
    }
    exec::set_device(ctx.node_local_rank() % exec::device_count());
  }
  std::unique_ptr<comm::Transport> nccl;
  if (space == exec::Space::Device && comm::nccl_built() && ctx.size() > 1 &&
      ctx.node_local_size() <= exec::device_count()) {
    nccl = std::make_unique<comm::Transport>(ctx, space, comm::TransportKind::Nccl);
    g_nccl = nccl.get();
  }
  MPI_Comm cart;
  int dims[2] = {cfg.procs[0], cfg.procs[1]}, periods[2] = {1, 1};
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int crank = 0;
  MPI_Comm_rank(cart, &crank);
  const auto plans = strategies(b, cfg.fft, space);

  if (rank == 0) {
    fmt::print("beatnik-fft-bench: {} ranks ({}x{} grid) on {} node(s), -x {}, {} OpenMP thread(s) per rank, "
               "{} configuration(s), {} round(s) of {} reps after {} warm-up\n",
               size, cfg.procs[0], cfg.procs[1], ctx.node_count(), exec::to_string(space), exec::host_threads(),
               plans.size(), b.rounds, b.reps, b.warmup);
    fmt::print("time: forward+inverse pair, max over ranks, median and min over reps; GFLOP/s = 2 x 5 M log2 M / time (M = N^2);\n"
               "sent: bytes to other ranks per pair and rank; exch = useful bytes / time in reshapes;\n"
               "a2a = same bytes / plain MPI_Alltoallv of the same per-pair counts; frac = exch / a2a\n");
  }

  nlohmann::json results = nlohmann::json::array();
  nlohmann::json best_doc = nlohmann::json::object();
  bool all_ok = true;
  for (int n : b.sizes) {
    const bool serial = n <= b.serial_verify_max;
    Problem p = make_problem(n, cfg.procs, space, crank, serial);
    const double M = double(n) * n;
    const double flops = 2 * 5 * M * std::log2(M);
    if (rank == 0) {
      fmt::print("\nN = {} ({}x{} complex doubles), verification: {}\n", n, n, n,
                 serial ? "vs serial FFTW (forward 1e-12), round trip 1e-13, Parseval 1e-12"
                        : "round trip 1e-13 and Parseval 1e-12 (N > --serial-verify-max)");
      fmt::print("{:>3} {:>10} {:>9} {:>8} {:>9} {:>9} {:>9} {:>5} {:>5}  {}\n", "-H", "median ms", "min ms", "GFLOP/s",
                 "sent MB", "exch GB/s", "a2a GB/s", "frac", "check", "plan");
    }
    struct Entry {
      fft::FftOptions opt;
      std::unique_ptr<fft::DistributedFFT> f;
      comm::CommStats stats;
      Timers timers;
      Verification v;
      Samples s;
    };
    std::vector<Entry> entries(plans.size());
    std::map<std::string, std::vector<double>> plain;  // by exchange pattern (plain_key)
    double best_time = HUGE_VAL;
    std::string best_plan;
    auto report = [&](const Entry& e) {
      const double pair = median(e.s.pairs), reshape = median(e.s.reshapes);
      const double fastest = *std::min_element(e.s.pairs.begin(), e.s.pairs.end());
      const double plain_t = median(plain[plain_key(e.opt)]);
      const bool moved = e.s.payload > 0;
      const double exch_bw = moved && reshape > 0 ? e.s.payload / reshape : 0;
      const double a2a_bw = moved && plain_t > 0 ? e.s.payload / plain_t : 0;
      const double frac = a2a_bw > 0 ? exch_bw / a2a_bw : 0;
      const int h = reference_code_of(e.opt);
      if (pair < best_time) {
        best_time = pair;
        best_plan = e.opt.describe();
      }
      if (rank == 0) {
        auto or_dash = [&](double x, int digits) { return moved ? fmt::format("{:.{}f}", x, digits) : std::string("-"); };
        fmt::print("{:>3} {:>10.3f} {:>9.3f} {:>8.2f} {:>9.3f} {:>9} {:>9} {:>5} {:>5}  {}\n", h >= 0 ? std::to_string(h) : "-",
                   pair * 1e3, fastest * 1e3, flops / pair / 1e9, e.s.sent / 1e6, or_dash(exch_bw / 1e9, 3),
                   or_dash(a2a_bw / 1e9, 3), or_dash(frac, 2), e.v.ok ? "ok" : "FAIL", e.opt.describe());
        std::fflush(stdout);
      }
      results.push_back({{"n", n},
                         {"plan", e.opt.describe()},
                         {"reference_code", h},
                         {"exchange", comm::to_string(e.opt.algorithm)},
                         {"intermediate", e.opt.intermediate == fft::Intermediate::Slab ? "slab" : "pencil"},
                         {"reorder", e.opt.reorder ? "contiguous" : "strided"},
                         {"spectrum", e.opt.spectrum_in_input_layout ? "input" : "intermediate"},
                         {"seconds_per_pair", pair},
                         {"min_seconds_per_pair", fastest},
                         {"samples", e.s.pairs.size()},
                         {"reshape_seconds_per_pair", reshape},
                         {"gflops", flops / pair / 1e9},
                         {"bytes_sent_per_rank_per_pair", e.s.sent},
                         {"payload_bytes_per_rank_per_pair", e.s.payload},
                         {"exchange_bandwidth_Bps", exch_bw},
                         {"plain_alltoallv_seconds_per_pair", plain_t},
                         {"plain_alltoallv_bandwidth_Bps", a2a_bw},
                         {"fraction_of_alltoall", frac},
                         {"verification",
                          {{"method", e.v.method},
                           {"forward_rel_error", p.serial.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.v.forward_error)},
                           {"parseval_rel_error", e.v.parseval_error},
                           {"roundtrip_rel_error", e.v.roundtrip_error},
                           {"ok", e.v.ok}}}});
    };
    // With several rounds every configuration is timed once per round, in turn, so that a
    // machine whose load changes over time treats all of them alike (all plans stay alive).
    for (int round = 0; round < b.rounds; ++round) {
      std::map<std::string, bool> plain_done;
      for (size_t k = 0; k < plans.size(); ++k) {
        Entry& e = entries[k];
        if (round == 0) {
          e.opt = plans[k];
          if (space == exec::Space::Device) e.timers.set_device_clock(exec::make_cuda_event_clock());
          e.f = std::make_unique<fft::DistributedFFT>(ctx, cart, std::array<int, 2>{n, n}, cfg.procs,
                                                      p.dec.all_owned(), space, e.opt, &e.stats, &e.timers,
                                                      transport_for(e.opt));
          e.v = verify(*e.f, p, space);
          all_ok = all_ok && e.v.ok;
        }
        time_fft(*e.f, p, space, e.timers, e.stats, b, e.s);
        const std::string key = plain_key(e.opt);
        if (!plain_done[key]) {
          time_plain_alltoall(ctx, cart, p, cfg.procs, space, e.opt, b, plain[key]);
          plain_done[key] = true;
        }
        if (b.rounds == 1) {
          e.f.reset();
          report(e);
        }
      }
    }
    if (b.rounds > 1)
      for (Entry& e : entries) {
        e.f.reset();
        report(e);
      }
    if (rank == 0) fmt::print("best for N = {}: {:.3f} ms  {}\n", n, best_time * 1e3, best_plan);
    best_doc[std::to_string(n)] = {{"plan", best_plan}, {"seconds_per_pair", best_time}};
  }

  if (!b.json.empty() && rank == 0) {
    std::vector<std::string> args(argv, argv + argc);
    nlohmann::json doc = {{"program", "beatnik-fft-bench"},
                          {"provenance", app::provenance(args, ctx.host_of_rank())},
                          {"ranks", size},
                          {"grid", {cfg.procs[0], cfg.procs[1]}},
                          {"space", exec::to_string(space)},
                          {"reps", b.reps},
                          {"warmup", b.warmup},
                          {"rounds", b.rounds},
                          {"flop_convention", "2 transforms x 5 M log2 M per forward+inverse pair, M = N^2"},
                          {"results", results},
                          {"best", best_doc}};
    std::ofstream out(b.json);
    out << doc.dump(2) << "\n";
    if (!out) fmt::print(stderr, "beatnik-fft-bench: could not write {}\n", b.json);
    else fmt::print("results written to {}\n", b.json);
  }
  MPI_Comm_free(&cart);
  if (!all_ok && rank == 0) fmt::print(stderr, "beatnik-fft-bench: verification FAILED for some configuration\n");
  return all_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return beatnik::app::mpi_main(argc, argv, "beatnik-fft-bench",
                                [&](int rank, int size) { return run(argc, argv, rank, size); });
}
