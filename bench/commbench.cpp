// beatnik-commbench (docs/commbench.md): OSU-style point-to-point latency, bandwidth,
// bidirectional bandwidth and all-to-all(v) on the buffer kinds and transports a run uses, and
// each of beatnik's communication patterns alone on the message set a run with the same problem
// options would send (planned by the dry run's planner, app/message_sets.hpp). Writes a bounds
// file that `beatnik --bounds FILE` compares a run with.
//
//   beatnik-commbench [options] [-- beatnik problem options]
//
// Exit codes: 0 success, 1 a -c validation failed (or an internal error), 2 bad input or
// unavailable feature.
#include <fmt/format.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "beatnik/app/message_sets.hpp"
#include "beatnik/app/mpi_main.hpp"
#include "beatnik/app/options.hpp"
#include "beatnik/app/problem.hpp"
#include "beatnik/app/provenance.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/comm/context.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/exec/space.hpp"
#include "commbench_wire.hpp"

namespace {

using namespace beatnik;
using bench::Buf;
using bench::extent;
using bench::Messages;
using nlohmann::json;

struct Setup {
  long min = 1, max = 1L << 22;
  int warmup = 10, iters = 100, window = 64, reps = 50;
  bool validate = false, corrupt = false;
  std::string buffer = "host", transport = "mpi", tests = "all", output;
  std::vector<std::string> problem;  // beatnik's options, after --
};

const std::vector<std::string> kTests = {"latency", "bw", "bibw", "alltoall", "alltoallv", "patterns"};

// -c: fills and checks message bytes; counts wrong bytes. --test-corrupt flips one received
// byte on the last rank once, so that a test sees the check fail.
struct Validator {
  bool on = false, corrupt = false;
  int rank = 0, size = 1;
  long wrong = 0;
  std::vector<unsigned char> img;

  void fill(Buf& b, const Messages& sends, long iter, const std::vector<long>& msg_ids) {
    if (!on) return;
    for (size_t m = 0; m < sends.size(); ++m) {
      img.resize(std::max<size_t>(sends[m].bytes, 1));
      for (long k = 0; k < sends[m].bytes; ++k) img[k] = bench::pattern_byte(rank, sends[m].peer, iter, msg_ids[m], k);
      b.put(img.data(), sends[m].offset, sends[m].bytes);
    }
  }
  void check(const Buf& b, const Messages& recvs, long iter, const std::vector<long>& msg_ids) {
    if (!on) return;
    for (size_t m = 0; m < recvs.size(); ++m) {
      img.resize(std::max<size_t>(recvs[m].bytes, 1));
      b.get(img.data(), recvs[m].offset, recvs[m].bytes);
      if (corrupt && rank == size - 1 && recvs[m].bytes > 0) {
        img[recvs[m].bytes / 2] ^= 0x5a;
        corrupt = false;
      }
      for (long k = 0; k < recvs[m].bytes; ++k)
        if (img[k] != bench::pattern_byte(recvs[m].peer, rank, iter, msg_ids[m], k)) ++wrong;
    }
  }
};

double max_over(double x, MPI_Comm c) {
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, c);
  return x;
}

std::vector<long> sizes(const Setup& s) {
  std::vector<long> v;
  for (long b = s.min; b <= s.max; b *= 2) v.push_back(b);
  return v;
}

std::vector<long> zeros(size_t n) { return std::vector<long>(n, 0); }

// Latency (half a round trip), bandwidth (a window of messages one way, then a short reply) and
// bidirectional bandwidth (windows both ways at once) between ranks 0 and 1; others wait.
json point_to_point(const std::string& test, const Setup& s, bench::Wire& w, bench::BufferKind kind, Validator& v,
                    int rank, MPI_Comm c) {
  json rows = json::array();
  const bool lat = test == "latency", bi = test == "bibw";
  const int window = lat ? 1 : s.window;
  if (rank == 0) fmt::print("\n# {} between ranks 0 and 1, {} iterations ({} warm-up){}\n", test, s.iters, s.warmup,
                            lat ? "" : fmt::format(", window {}", window));
  if (rank == 0) fmt::print("# {:>12} {:>14}\n", "bytes", lat ? "latency us" : "GB/s");
  for (long bytes : sizes(s)) {
    double t = 0;
    if (rank <= 1) {
      const int peer = 1 - rank;
      Buf sb(kind, bytes), rb(kind, bytes), ack_s(kind, 4), ack_r(kind, 4);
      const Messages one{{peer, 0, bytes}};
      const Messages win(window, comm::Message{peer, 0, bytes});
      const Messages none{}, ack{{peer, 0, 4}};
      for (long it = 0; it < s.warmup + s.iters; ++it) {
        const bool timed = it >= s.warmup;
        double t0 = 0;
        if (lat) {
          if (rank == 0) {
            v.fill(sb, one, it, {0});
            t0 = wall_seconds();
            w.exchange(sb, one, rb, none);
            w.exchange(sb, none, rb, one);
            if (timed) t += wall_seconds() - t0;
            v.check(rb, one, it, {0});
          } else {
            w.exchange(sb, none, rb, one);
            v.check(rb, one, it, {0});
            v.fill(sb, one, it, {0});
            w.exchange(sb, one, rb, none);
          }
          continue;
        }
        // The window's messages share one buffer (as OSU's): their bytes do not depend on the
        // message's place in the window.
        const bool sender = bi || rank == 0;
        if (sender) v.fill(sb, one, it, {0});
        t0 = wall_seconds();
        w.exchange(sb, sender ? win : none, rb, (bi || rank == 1) ? win : none);
        if (!bi) w.exchange(ack_s, rank == 1 ? ack : none, ack_r, rank == 0 ? ack : none);
        if (timed) t += wall_seconds() - t0;
        if (bi || rank == 1) v.check(rb, one, it, {0});
      }
    }
    t = max_over(t, c);
    if (rank == 0) {
      const double val = lat ? t / s.iters / 2 * 1e6 : (bi ? 2.0 : 1.0) * double(bytes) * window * s.iters / t / 1e9;
      fmt::print("  {:>12} {:>14.3f}\n", bytes, val);
      rows.push_back(lat ? json{{"bytes", bytes}, {"seconds", val * 1e-6}} : json{{"bytes", bytes}, {"gb_per_s", val}});
    }
  }
  return rows;
}

// MPI_Alltoall / MPI_Alltoallv (NCCL: grouped send/receives) among all ranks; alltoallv sends
// rank d bytes * (1 + (rank + 2d) % 3) / 2 (between half and one and a half times the size).
json all_to_all(bool v_kind, const Setup& s, bench::Wire& w, bench::BufferKind kind, Validator& v, int rank, int size,
                MPI_Comm c) {
  json rows = json::array();
  if (rank == 0) {
    fmt::print("\n# {} among {} ranks, {} iterations ({} warm-up); GB/s: all ranks' bytes / time\n",
               v_kind ? "alltoallv" : "alltoall", size, s.iters, s.warmup);
    fmt::print("# {:>12} {:>14} {:>14}\n", "bytes", "time us", "GB/s");
  }
  auto count = [&](int from, int to, long bytes) {
    return v_kind ? static_cast<int>(bytes * (1 + (from + 2 * to) % 3) / 2) : static_cast<int>(bytes);
  };
  for (long bytes : sizes(s)) {
    std::vector<int> sc(size), sd(size), rc(size), rd(size);
    long total = 0;
    for (int p = 0, so = 0, ro = 0; p < size; ++p) {
      sc[p] = count(rank, p, bytes);
      rc[p] = count(p, rank, bytes);
      sd[p] = so;
      rd[p] = ro;
      so += sc[p];
      ro += rc[p];
      for (int q = 0; q < size; ++q) total += count(p, q, bytes);
    }
    Messages sm, rm;
    for (int p = 0; p < size; ++p) {
      sm.push_back({p, sd[p], sc[p]});
      rm.push_back({p, rd[p], rc[p]});
    }
    Buf sb(kind, size_t(sd.back()) + sc.back()), rb(kind, size_t(rd.back()) + rc.back());
    double t = 0;
    for (long it = 0; it < s.warmup + s.iters; ++it) {
      v.fill(sb, sm, it, zeros(size));
      MPI_Barrier(c);
      const double t0 = wall_seconds();
      w.alltoallv(sb, sc, sd, rb, rc, rd, !v_kind);
      if (it >= s.warmup) t += wall_seconds() - t0;
      v.check(rb, rm, it, zeros(size));
    }
    t = max_over(t, c) / s.iters;
    if (rank == 0) {
      fmt::print("  {:>12} {:>14.3f} {:>14.4f}\n", bytes, t * 1e6, total / t / 1e9);
      rows.push_back({{"bytes", bytes}, {"bytes_all_ranks", total}, {"seconds", t}, {"gb_per_s", total / t / 1e9}});
    }
  }
  return rows;
}

// One exchange of a pattern as this rank runs it: sends and receives with their places, and the
// message numbers (the sender's) that -c keys its bytes with.
struct Exchange {
  Messages sends, recvs;
  std::vector<long> send_ids, recv_ids;
};

std::vector<Exchange> exchanges_of(const app::PatternMessages& p, int me) {
  std::vector<Exchange> out;
  auto add = [&](int k, long only) {  // only: one round (message index), or -1 for all
    Exchange e;
    long off = 0;
    const auto& mine = p.sends[me][k];
    for (size_t m = 0; m < mine.size(); ++m) {
      if (only >= 0 && long(m) != only) continue;
      e.sends.push_back({mine[m].first, off, mine[m].second});
      e.send_ids.push_back(long(m));
      off += mine[m].second;
    }
    off = 0;
    for (int src = 0; src < p.ranks(); ++src) {
      const auto& theirs = p.sends[src][k];
      for (size_t m = 0; m < theirs.size(); ++m) {
        if ((only >= 0 && long(m) != only) || theirs[m].first != me) continue;
        e.recvs.push_back({src, off, theirs[m].second});
        e.recv_ids.push_back(long(m));
        off += theirs[m].second;
      }
    }
    out.push_back(std::move(e));
  };
  for (int k = 0; k < p.exchanges(); ++k) {
    if (!p.rounds) {
      add(k, -1);
      continue;
    }
    for (size_t r = 0; r < p.sends[me][k].size(); ++r) add(k, long(r));
  }
  return out;
}

// One step's exchanges of a pattern, repeated: each repetition's time is the slowest rank's.
json pattern_bound(const std::string& name, const app::PatternMessages& p, const Setup& s, bench::Wire& w,
                   bench::BufferKind kind, Validator& v, int rank, MPI_Comm c) {
  const std::vector<Exchange> ex = exchanges_of(p, rank);
  long sbytes = 1, rbytes = 1;
  for (const auto& e : ex) {
    sbytes = std::max(sbytes, extent(e.sends));
    rbytes = std::max(rbytes, extent(e.recvs));
  }
  Buf sb(kind, sbytes), rb(kind, rbytes);
  std::vector<double> times;
  const int warm = std::min(s.warmup, s.reps);
  for (int it = 0; it < warm + s.reps; ++it) {
    MPI_Barrier(c);
    double t = 0;
    for (size_t k = 0; k < ex.size(); ++k) {
      const long key = long(it) * long(ex.size()) + long(k);
      v.fill(sb, ex[k].sends, key, ex[k].send_ids);
      const double t0 = wall_seconds();
      w.exchange(sb, ex[k].sends, rb, ex[k].recvs);
      t += wall_seconds() - t0;
      v.check(rb, ex[k].recvs, key, ex[k].recv_ids);
    }
    t = max_over(t, c);
    if (it >= warm) times.push_back(t);
  }
  std::sort(times.begin(), times.end());
  const double tmin = times.front(), p50 = times[times.size() / 2];
  const long bytes = p.bytes_per_step();
  json j;
  j["fingerprint"] = p.fingerprint();
  j["ranks"] = p.ranks();
  j["exchanges_per_step"] = p.exchanges();
  j["rounds"] = p.rounds;
  j["messages_per_step"] = p.messages_per_step();
  j["bytes_per_step_total"] = bytes;
  json sz = json::array();
  for (const auto& [b, n] : p.sizes()) sz.push_back({b, n});
  j["message_sizes"] = sz;
  j["peers"] = p.peers();
  j["repetitions"] = s.reps;
  j["seconds_min"] = tmin;
  j["seconds_p50"] = p50;
  j["gb_per_s"] = bytes / tmin / 1e9;
  j["gb_per_s_p50"] = bytes / p50 / 1e9;
  if (rank == 0)
    fmt::print("  {:<8} {:>10} {:>10} {:>14} {:>12.4e} {:>12.4e} {:>10.4f} {:>10.4f}\n", name, p.exchanges(),
               p.messages_per_step(), bytes, p50, tmin, bytes / p50 / 1e9, bytes / tmin / 1e9);
  return j;
}

int run(int argc, char** argv, int rank, int size) {
  // Our options before "--", beatnik's problem options after.
  std::vector<std::string> mine, problem;
  bool after = false;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    if (!after && a == "--") after = true;
    else (after ? problem : mine).push_back(a);
  }
  Setup s;
  CLI::App cli{"beatnik-commbench: point-to-point and all-to-all bounds, and each of beatnik's communication "
               "patterns alone on a run's message set (docs/commbench.md).\n"
               "Usage: beatnik-commbench [options] [-- beatnik problem options, e.g. -n 256 -O medium]",
               "beatnik-commbench"};
  cli.add_option("--min", s.min, "Smallest message size in bytes of the point-to-point and all-to-all sweeps (default 1)");
  cli.add_option("--max", s.max, "Largest message size in bytes (powers of two from --min; default 4194304)");
  cli.add_option("--warmup", s.warmup, "Warm-up iterations, not timed (default 10)");
  cli.add_option("--iterations", s.iters, "Timed iterations per size (default 100)");
  cli.add_option("--window", s.window, "Messages in flight per iteration of bw and bibw (default 64)");
  cli.add_option("--reps", s.reps, "Timed repetitions of each pattern's step (default 50)");
  cli.add_option("--buffer", s.buffer, "Buffer kind: host, pinned (CUDA build), device (CUDA build)");
  cli.add_option("--transport", s.transport, "mpi, or nccl (device buffers, CUDA build with NCCL)");
  cli.add_option("--tests", s.tests, "Comma-separated: latency, bw, bibw, alltoall, alltoallv, patterns, or all");
  cli.add_flag("-c,--validate", s.validate, "Fill every message with a pattern keyed by sender, receiver and iteration and check every received byte");
  cli.add_option("-o,--output", s.output, "Write the bounds file (JSON) for beatnik --bounds");
  cli.add_flag("--test-corrupt", s.corrupt, "")->group("");  // test hook: flip one received byte
  try {
    std::vector<std::string> rev(mine.rbegin(), mine.rend());
    cli.parse(rev);
  } catch (const CLI::CallForHelp&) {
    if (rank == 0) fmt::print("{}", cli.help());
    return 0;
  } catch (const CLI::ParseError& e) {
    throw InputError(std::string(e.what()) + "\nRun 'beatnik-commbench --help' for the options.");
  }
  if (s.min < 1 || s.max < s.min || s.max > (1L << 30))
    throw InputError(fmt::format("--min {} --max {}: need 1 <= min <= max <= 1073741824", s.min, s.max));
  if (s.warmup < 0 || s.iters < 1 || s.reps < 1 || s.window < 1 || s.window > 1024)
    throw InputError("need --warmup >= 0, --iterations >= 1, --reps >= 1 and 1 <= --window <= 1024");
  if (s.transport != "mpi" && s.transport != "nccl") throw InputError("--transport " + s.transport + ": expected mpi or nccl");
  std::vector<std::string> tests;
  {
    std::stringstream ss(s.tests);
    for (std::string t; std::getline(ss, t, ',');) {
      if (t == "all") tests.insert(tests.end(), kTests.begin(), kTests.end());
      else if (std::find(kTests.begin(), kTests.end(), t) != kTests.end()) tests.push_back(t);
      else throw InputError("--tests " + t + ": expected latency, bw, bibw, alltoall, alltoallv, patterns or all");
    }
  }
  const bench::BufferKind kind = bench::parse_buffer_kind(s.buffer);
  if (s.transport == "nccl" && !comm::nccl_built())
    throw NotAvailable("--transport nccl: this beatnik-commbench was built without NCCL");

  // The problem, as beatnik reads it (every rank alike, no communication).
  app::Options opts;
  std::vector<std::string> pargs{"beatnik"};
  pargs.insert(pargs.end(), problem.begin(), problem.end());
  std::vector<char*> pargv;
  for (auto& a : pargs) pargv.push_back(a.data());
  std::string text;
  if (app::parse_options(static_cast<int>(pargv.size()), pargv.data(), opts, text) == app::ParseOutcome::Exit)
    throw InputError("the problem options after -- asked for help or a list; run 'beatnik --help'");
  const app::RunConfig cfg = app::make_run_config(opts, size);

  // The output file, checked before anything runs.
  int bad = 0;
  if (rank == 0 && !s.output.empty()) {
    std::ofstream probe(s.output, std::ios::app);
    bad = probe ? 0 : 1;
  }
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (bad) throw InputError("-o " + s.output + ": cannot be written");

  MPI_Comm c = MPI_COMM_WORLD;
  comm::Context ctx(c);
  if (kind != bench::BufferKind::Host) exec::bind_device(ctx.node_local_rank(), -1);
  bench::Wire wire(c, kind, s.transport == "nccl");
  Validator v;
  v.on = s.validate;
  v.corrupt = s.corrupt;
  v.rank = rank;
  v.size = size;

  if (rank == 0)
    fmt::print("beatnik-commbench: {} rank(s), {}{}\n", size, wire.describe(), s.validate ? ", -c: every byte checked" : "");
  json doc;
  doc["schema"] = "beatnik-bounds";
  doc["schema_version"] = 1;
  doc["provenance"] = app::provenance(std::vector<std::string>(argv, argv + argc), ctx.host_of_rank());
  doc["setup"] = {{"ranks", size},          {"buffer", bench::to_string(kind)}, {"transport", s.transport},
                  {"description", wire.describe()}, {"validate", s.validate}, {"warmup", s.warmup},
                  {"iterations", s.iters},  {"window", s.window},          {"repetitions", s.reps}};
  json p2p;
  for (const auto& t : tests) {
    if (t == "patterns") continue;
    if ((t == "latency" || t == "bw" || t == "bibw") && size < 2) {
      if (rank == 0) fmt::print("\n# {}: needs 2 ranks, not run on 1\n", t);
      p2p[t] = "not run: needs 2 ranks";
      continue;
    }
    p2p[t] = (t == "alltoall" || t == "alltoallv") ? all_to_all(t == "alltoallv", s, wire, kind, v, rank, size, c)
                                                   : point_to_point(t, s, wire, kind, v, rank, c);
  }
  doc["point_to_point"] = p2p;

  if (std::find(tests.begin(), tests.end(), "patterns") != tests.end()) {
    const app::MessageSets sets = app::plan_message_sets(cfg, size);
    const auto& g = cfg.geometry;
    doc["run"] = {{"problem_options", problem}, {"ranks", size}, {"grid", cfg.procs}, {"mesh_nodes", g.nodes},
                  {"order", model::to_string(cfg.model.order)}, {"fft", cfg.fft.describe()}};
    if (rank == 0) {
      fmt::print("\n# beatnik's patterns alone: one step's exchanges of -n {} x {} on a {} x {} grid ({} order), "
                 "{} repetitions; time = slowest rank\n",
                 g.nodes[0], g.nodes[1], cfg.procs[0], cfg.procs[1], model::to_string(cfg.model.order), s.reps);
      fmt::print("  {:<8} {:>10} {:>10} {:>14} {:>12} {:>12} {:>10} {:>10}\n", "pattern", "exchanges", "messages",
                 "bytes/step", "p50 s", "min s", "GB/s p50", "GB/s best");
    }
    json pats = json::object();
    for (const auto& [name, p] : sets.patterns) pats[name] = pattern_bound(name, p, s, wire, kind, v, rank, c);
    doc["patterns"] = pats;
    json un = json::object();
    for (const auto& u : sets.unplanned) {
      const auto colon = u.find(':');
      un[u.substr(0, colon)] = u.substr(colon + 2);
      if (rank == 0) fmt::print("  {}\n", u);
    }
    doc["not_planned"] = un;
  } else {
    doc["patterns"] = json::object();
  }

  long wrong = v.wrong;
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, c);
  doc["validation"] = s.validate ? json{{"wrong_bytes", wrong}} : json(nullptr);
  int code = 0;
  if (rank == 0) {
    if (s.validate) fmt::print("\nvalidation: {}\n", wrong == 0 ? std::string("every received byte as sent")
                                                              : fmt::format("FAILED, {} byte(s) wrong", wrong));
    if (!s.output.empty()) {
      std::ofstream out(s.output);
      out << doc.dump(1) << "\n";
      if (!out) {
        fmt::print(stderr, "beatnik-commbench: error: -o {}: write failed\n", s.output);
        code = 5;
      } else {
        fmt::print("bounds written to {}\n", s.output);
      }
    }
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, c);
  return wrong > 0 ? 1 : code;
}

}  // namespace

int main(int argc, char** argv) {
  return beatnik::app::mpi_main(argc, argv, "beatnik-commbench",
                                [&](int rank, int size) { return run(argc, argv, rank, size); });
}
