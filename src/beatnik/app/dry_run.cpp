#include "beatnik/app/dry_run.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "beatnik/app/provenance.hpp"
#include "beatnik/comm/halo/registry.hpp"
#include "beatnik/comm/redistributor.hpp"
#include "beatnik/exec/space.hpp"
#include "beatnik/app/report.hpp"
#include "beatnik/app/run_io.hpp"
#include "beatnik/model/parameters.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/io/results_json.hpp"

namespace beatnik::app {
namespace {

using nlohmann::json;
constexpr const char* kLoc[3] = {"self", "on_node", "off_node"};
constexpr int kPerRankLines = 16;  // ranks listed one by one in the printout up to this count

struct Spread {
  double min = 0, median = 0, max = 0;
};
Spread spread(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  return {v.front(), v[v.size() / 2], v.back()};
}

bool is_estimated(const DryRunPlan& plan, const std::string& pattern) {
  return std::find(plan.estimated.begin(), plan.estimated.end(), pattern) != plan.estimated.end();
}

std::vector<std::string> pattern_names(const DryRunPlan& plan) {
  std::vector<std::string> names;
  for (const auto& s : plan.per_rank)
    for (const auto& [n, st] : s.stats())
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  std::sort(names.begin(), names.end());
  return names;
}

comm::PatternStats stats_of(const DryRunPlan& plan, int rank, const std::string& pattern) {
  auto it = plan.per_rank[rank].stats().find(pattern);
  return it == plan.per_rank[rank].stats().end() ? comm::PatternStats{} : it->second;
}

json per_rank_json(const DryRunPlan& plan) {
  json a = json::array();
  for (int r = 0; r < plan.ranks; ++r) {
    json j;
    j["rank"] = r;
    j["grid_rank"] = plan.grid_rank_of_rank[r];
    j["node"] = plan.node_of_rank[r];
    j["degree"] = plan.degree_all[r];
    for (const auto& [n, s] : plan.per_rank[r].stats()) {
      json p;
      p["exchanges"] = s.calls;
      for (int k = 0; k < 3; ++k) {
        p["bytes"][kLoc[k]] = s.bytes[k];
        p["messages"][kLoc[k]] = s.messages[k];
      }
      auto d = plan.degree.find(n);
      p["degree"] = d == plan.degree.end() ? 0 : d->second[r];
      p["estimated"] = is_estimated(plan, n);
      j["patterns"][n] = p;
    }
    a.push_back(j);
  }
  return a;
}

json matrix_json(const DryRunPlan& plan) {
  json e = json::array();
  for (int a = 0; a < plan.ranks; ++a)
    for (const auto& [b, bytes] : plan.matrix[a]) e.push_back({a, b, bytes});
  return {{"unit", "bytes per step, world rank to world rank, other ranks only, all patterns"},
          {"format", "[source, destination, bytes]"},
          {"entries", e}};
}

void print_plan(const DryRunPlan& plan, const RunConfig& c, double seconds) {
  fmt::print("beatnik dry run: {} ranks as {} x {}, {} order, mesh {} x {} nodes, {} rank(s) per node ({} nodes), "
             "placement {}\n",
             plan.ranks, c.procs[0], c.procs[1], model::to_string(c.model.order), c.geometry.nodes[0],
             c.geometry.nodes[1], plan.ranks_per_node, plan.node_of_rank.back() + 1, c.placement.spec);
  fmt::print("  fft         {}\n", c.fft.describe());
  if (c.space == exec::Space::Device)
    fmt::print("  transport   {}\n", plan.nccl ? "nccl (grouped send/receive: FFT reshapes unpadded)"
                                              : "MPI (" + c.gpu_transport + ")");
  for (const auto& n : plan.notes) fmt::print("  note        {}\n", n);
  fmt::print("\nPer rank and step (min / median / max over ranks)\n");
  fmt::print("  {:<8} {:>36} {:>36} {:>20} {:>9}\n", "pattern", "bytes on node", "bytes off node", "messages",
             "degree");
  for (const auto& p : pattern_names(plan)) {
    std::vector<double> on, off, msgs, deg;
    for (int r = 0; r < plan.ranks; ++r) {
      const comm::PatternStats s = stats_of(plan, r, p);
      on.push_back(double(s.bytes[1]));
      off.push_back(double(s.bytes[2]));
      msgs.push_back(double(s.messages[0] + s.messages[1] + s.messages[2]));
      auto d = plan.degree.find(p);
      deg.push_back(d == plan.degree.end() ? 0.0 : double(d->second[r]));
    }
    const Spread a = spread(on), b = spread(off), m = spread(msgs), d = spread(deg);
    fmt::print("  {:<8} {:>11.0f} {:>11.0f} {:>12.0f} {:>11.0f} {:>11.0f} {:>12.0f} {:>6.0f} {:>6.0f} {:>6.0f} {:>9.0f}\n",
               is_estimated(plan, p) ? p + "*" : p, a.min, a.median, a.max, b.min, b.median, b.max, m.min, m.median, m.max, d.max);
  }
  std::vector<double> on, off;
  for (int r = 0; r < plan.ranks; ++r) {
    long x = 0, y = 0;
    for (const auto& [n, s] : plan.per_rank[r].stats()) {
      x += s.bytes[1];
      y += s.bytes[2];
    }
    on.push_back(double(x));
    off.push_back(double(y));
  }
  const Spread a = spread(on), b = spread(off);
  fmt::print("  {:<8} {:>11.0f} {:>11.0f} {:>12.0f} {:>11.0f} {:>11.0f} {:>12.0f} {:>20} {:>9}\n", "all", a.min,
             a.median, a.max, b.min, b.median, b.max, "",
             *std::max_element(plan.degree_all.begin(), plan.degree_all.end()));
  if (!plan.estimated.empty())
    fmt::print("  * estimated from the initial surface (exact for the first Birkhoff-Rott call, counted {} times a "
               "step)\n",
               kDryRunBRCallsPerStep);
  if (plan.ranks <= kPerRankLines) {
    fmt::print("\nPer rank and step: bytes self / on node / off node, messages, degree\n");
    for (int r = 0; r < plan.ranks; ++r)
      for (const auto& [n, s] : plan.per_rank[r].stats())
        fmt::print("  rank {:>4} (cell {:>4}, node {:>3}) {:<6} {:>12} {:>12} {:>12} {:>5} {:>4}\n", r,
                   plan.grid_rank_of_rank[r], plan.node_of_rank[r], n, s.bytes[0], s.bytes[1], s.bytes[2],
                   s.messages[0] + s.messages[1] + s.messages[2], plan.degree.count(n) ? plan.degree.at(n)[r] : 0);
  }
  long pairs = 0;
  for (const auto& row : plan.matrix) pairs += static_cast<long>(row.size());
  fmt::print("\n  rank pairs that communicate: {} (sparse matrix in the results file)\n", pairs);
  fmt::print("  planned in {:.3f} s; no mesh allocated, no step run\n", seconds);
}

}  // namespace

json dry_run_communication(const DryRunPlan& plan, long steps) {
  json comm;
  const int rank0 = static_cast<int>(std::find(plan.grid_rank_of_rank.begin(), plan.grid_rank_of_rank.end(), 0) -
                                     plan.grid_rank_of_rank.begin());
  for (const auto& p : pattern_names(plan)) {
    long sum_b[3] = {0, 0, 0}, sum_m[3] = {0, 0, 0}, max_b[3] = {0, 0, 0};
    for (int r = 0; r < plan.ranks; ++r) {
      const comm::PatternStats s = stats_of(plan, r, p);
      for (int k = 0; k < 3; ++k) {
        sum_b[k] += s.bytes[k] * steps;
        sum_m[k] += s.messages[k] * steps;
        max_b[k] = std::max(max_b[k], s.bytes[k] * steps);
      }
    }
    comm[p] = communication_entry(double(stats_of(plan, rank0, p).calls), sum_b, sum_m, max_b, steps);
  }
  return comm;
}

RunConfig dry_run_config(const Options& o, int np) {
  if (o.exec != "cuda" || exec::cuda_built()) return make_run_config(o, np);
  Options h = o;
  h.exec = "host";
  const bool nccl_fft = o.fft_exchange == "nccl";
  if (nccl_fft) h.fft_exchange = "alltoallv";
  RunConfig c = make_run_config(h, np);
  c.options = o;
  c.space = exec::Space::Device;
  c.warnings.clear();  // the host run's ("--gpu-transport is ignored on a host run")
  if (o.gpu_transport != "auto" && o.gpu_transport != "staged" && o.gpu_transport != "cuda-aware" &&
      o.gpu_transport != "nccl")
    throw InputError("unknown --gpu-transport '" + o.gpu_transport + "' (staged, cuda-aware, nccl or auto)");
  c.gpu_transport = o.gpu_transport;
  const bool nccl = dry_run_uses_nccl(c, np);
  try {
    comm::halo::find_strategy(o.halo_strategy, nccl ? comm::TransportKind::Nccl : comm::TransportKind::Staged);
  } catch (const InputError& e) {
    throw InputError(std::string("--halo-strategy: ") + e.what());
  } catch (const NotAvailable& e) {
    throw NotAvailable(std::string("--halo-strategy: ") + e.what());
  }
  if (nccl_fft) {
    if (!nccl)
      throw NotAvailable("--fft-exchange nccl: the reshapes travel over NCCL only with the NCCL GPU transport "
                         "(--gpu-transport nccl; auto picks it only in a build with NCCL, which this is not)");
    c.fft.algorithm = comm::ExchangeAlgorithm::Nccl;
  }
  return c;
}

int run_dry_run(const Options& o, int mpi_size, const std::vector<std::string>& argv) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto fail = [rank](const std::string& msg) {
    if (rank == 0) fmt::print(stderr, "beatnik: error: {}\n", msg);
    return 2;
  };
  if (mpi_size != 1) return fail("--dry-run plans in one process: run it without mpiexec (or with -n 1)");
  if (!o.np) return fail("--dry-run needs the rank count to plan for: --np P (or -np P)");
  if (*o.np < 1) return fail("--np must be at least 1, got " + std::to_string(*o.np));
  if (o.skeleton) return fail("--dry-run runs no step: --skeleton cannot be used with it");
  RunConfig c;
  DryRunPlan plan;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    c = dry_run_config(o, *o.np);
    plan = plan_dry_run(c, *o.np, c.ranks_per_node);
  } catch (const NotAvailable& e) {
    return fail(e.what());
  } catch (const InputError& e) {
    return fail(std::string(e.what()) + "\nRun 'beatnik --help' for the options.");
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  print_plan(plan, c, seconds);
  if (o.results.empty()) return 0;
  const long steps = std::max(c.steps - c.warmup, 1L);
  json doc;
  doc["schema"] = "beatnik-results";
  doc["schema_version"] = io::kResultsSchemaVersion;
  doc["status"] = "dry-run";
  doc["message"] = "planned, not run: no step was taken and no timer ran";
  doc["provenance"] = provenance(argv, {});
  doc["decomposition"] = {{"ranks", plan.ranks},
                          {"grid", c.procs},
                          {"nodes", c.geometry.nodes},
                          {"node_of_rank", plan.node_of_rank},
                          {"node_count", plan.node_of_rank.back() + 1},
                          {"placement", {{"spec", c.placement.spec}, {"grid_rank_of_rank", plan.grid_rank_of_rank}}}};
  doc["steps"] = {{"measured", steps}};
  doc["communication"] = dry_run_communication(plan, steps);
  doc["dry_run"] = {{"ranks", plan.ranks},
                    {"ranks_per_node", plan.ranks_per_node},
                    {"steps", steps},
                    {"notes", plan.notes},
                    {"transport", c.space == exec::Space::Host ? "host" : plan.nccl ? "nccl" : c.gpu_transport},
                    {"estimated", {{"patterns", plan.estimated},
                                   {"from", "initial surface"},
                                   {"br_calls_per_step", kDryRunBRCallsPerStep}}},
                    {"max_degree", *std::max_element(plan.degree_all.begin(), plan.degree_all.end())},
                    {"per_rank_per_step", per_rank_json(plan)},
                    {"matrix", matrix_json(plan)},
                    {"seconds", seconds}};
  try {
    io::write_json_file(o.results, doc);
  } catch (const WriteError& e) {
    fmt::print(stderr, "beatnik: error: {}\n", e.what());
    return kExitWriteFailed;
  }
  fmt::print("results written to {}\n", o.results);
  return 0;
}

}  // namespace beatnik::app
