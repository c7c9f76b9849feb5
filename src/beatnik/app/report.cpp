#include "beatnik/app/report.hpp"

#include <fmt/format.h>
#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "beatnik/app/bounds_report.hpp"
#include "beatnik/app/cases.hpp"
#include "beatnik/app/br_check_report.hpp"
#include "beatnik/app/load_report.hpp"
#include "beatnik/app/placement_report.hpp"
#include "beatnik/app/provenance.hpp"
#include "beatnik/app/skeleton.hpp"
#include "beatnik/app/step_statistics.hpp"
#include "beatnik/comm/halo/registry.hpp"
#include "beatnik/comm/let/registry.hpp"
#include "beatnik/exec/space.hpp"
#include "beatnik/io/results_json.hpp"
#include "beatnik/model/br_host_kernel.hpp"
#include "beatnik/model/riesz.hpp"
#include "beatnik/model/tree_br_solver.hpp"

namespace beatnik::app {
namespace {

using nlohmann::json;

// Names known to rank 0, broadcast so that every rank reduces the same list.
std::vector<std::string> common_names(std::vector<std::string> names, MPI_Comm c) {
  std::string joined;
  for (const auto& n : names) joined += n + '\n';
  int len = static_cast<int>(joined.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, c);
  joined.resize(len);
  MPI_Bcast(joined.data(), len, MPI_CHAR, 0, c);
  std::vector<std::string> out;
  size_t a = 0;
  for (size_t b; (b = joined.find('\n', a)) != std::string::npos; a = b + 1) out.push_back(joined.substr(a, b - a));
  return out;
}

// All ranks' values of x, on rank 0.
std::vector<double> gather(double x, MPI_Comm c) {
  int size = 1, rank = 0;
  MPI_Comm_size(c, &size);
  MPI_Comm_rank(c, &rank);
  std::vector<double> all(size);
  MPI_Gather(&x, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, c);
  return all;
}

json min_median_max(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return json{{"min", v.front()}, {"median", med}, {"max", v.back()}};
}

// Element-wise maximum over ranks of a series every rank holds at the same length (on rank 0).
std::vector<double> max_over_ranks(std::vector<double> v, MPI_Comm c) {
  int rank = 0;
  MPI_Comm_rank(c, &rank);
  const int n = static_cast<int>(v.size());
  if (rank == 0) MPI_Reduce(MPI_IN_PLACE, v.data(), n, MPI_DOUBLE, MPI_MAX, 0, c);
  else MPI_Reduce(v.data(), nullptr, n, MPI_DOUBLE, MPI_MAX, 0, c);
  return v;
}

json spread_json(const Spread& s) {
  return json{{"count", s.count}, {"min", s.min},   {"p50", s.p50},   {"p90", s.p90},
              {"p99", s.p99},     {"max", s.max},   {"mean", s.mean}, {"mad", s.mad}};
}

// Step-time statistics, the two-step window and the outlier steps (rank 0's reduced series).
// `first` is the step number of the first measured step, as the progress lines count.
void add_step_statistics(json& steps, const std::vector<double>& times,
                         std::map<std::string, std::vector<double>> regions, long first) {
  const Spread s = spread_of(times);
  steps["statistics"] = spread_json(s);
  steps["statistics"]["outlier_threshold"] = outlier_threshold(s);
  steps["window2"] = spread_json(spread_of(window_sums(times, 2)));
  regions.erase("step");  // the whole step: always slow in a slow step, says nothing
  json out = json::array();
  for (const Outlier& o : find_outliers(times, regions)) {
    json slow = json::array();
    for (const RegionExcess& r : o.regions)
      slow.push_back({{"region", r.name}, {"seconds", r.seconds}, {"median", r.median}});
    out.push_back({{"step", first + o.index}, {"seconds", o.seconds}, {"regions", slow}});
  }
  steps["outliers"] = out;
}

// The BR image rule as the banner and results name it: `centred` after "(2K+1)x(2K+1) " for the
// consistent profile, `fixed` for the reference's block; none on a surface with no periodic
// dimension, where the solvers take no images (tree_rules, the exact solver: period 0).
std::string br_images_text(const RunConfig& c, const char* centred, const char* fixed) {
  if (!c.geometry.periodic[0] && !c.geometry.periodic[1]) return "no periodic images (free)";
  const auto& b = c.model.br;
  return b.centred ? fmt::format("{0}x{0} {1}", 2 * b.images + 1, centred) : std::string(fixed);
}

// Whether the halo went as grouped NCCL send/receives: NCCL replaces every MPI strategy but
// device-ipc, which moves its bytes itself.
bool halo_over_nccl(const Simulation& sim, const RunConfig& c) {
  return sim.transport().uses_nccl() &&
         !comm::halo::find_strategy(c.model.halo_strategy, sim.transport().kind()).device_direct;
}

long max_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<long>(u.ru_maxrss) * 1024;
}

// What the tree solver runs where with -x cuda (config.br.tree and the banner): the build and
// the migration on the device unless their environment switches keep them on the host
// (model::tree_device_build, model::tree_device_migration).
struct TreePhases {
  std::string device, host;
};
TreePhases tree_phases(const model::BRSettings& b) {
  const bool build = model::tree_device_build(), migrate = build && model::tree_device_migration();
  TreePhases t;
  t.device = std::string(build ? "tree build, " : "") + (migrate ? "migration, " : "") +
             "upward pass, lower-degree sets' strengths, near, far and edge sums, edge tables" +
             (b.tree_dual ? ", cluster-cluster sums, downward pass" : "");
  t.host = std::string(migrate ? "" : "migration, ") + (build ? "" : "tree build, ") +
           "LET walk, interaction lists, lower-degree sets' layout";
  return t;
}

json config_json(const Simulation& sim) {
  const RunConfig& c = sim.config();
  const Options& o = c.options;
  json j;
  j["profile"] = to_string(c.profile);
  j["order"] = model::to_string(c.model.order);
  j["initial_condition"] = model::to_string(c.initial.shape);
  j["magnitude"] = o.magnitude;
  j["period"] = o.period;
  j["seed"] = c.initial.seed;
  j["tilt_degrees"] = o.tilt ? json(*o.tilt) : json(nullptr);
  j["tilt_slope"] = c.initial.tilt_slope;
  j["case"] = o.case_name.empty() ? json(nullptr)
                                  : json{{"name", o.case_name}, {"scale", o.case_scale}, {"overridden", o.case_overrides}};
  j["nodes_option"] = o.nodes;
  j["weak_scale"] = c.weak_scale;
  j["nodes_after_weak_scaling"] = c.nodes;
  j["half_width"] = c.half_width;
  j["boundary"] = o.boundary;
  j["mesh_nodes"] = c.geometry.nodes;
  j["operator_spacing"] = c.geometry.spacing;
  j["node_spacing"] = c.geometry.node_spacing;
  j["atwood"] = c.model.atwood;
  j["gravity"] = c.model.gravity;
  j["mu_option"] = o.mu;
  j["mu"] = c.model.mu;
  j["epsilon_option"] = o.epsilon;
  j["epsilon"] = c.model.epsilon;
  j["metric_power"] = c.model.metric_power;
  j["solver"] = o.solver;
  if (c.model.order != model::Order::Low) {
    const auto& b = c.model.br;
    j["br"] = {{"strategy", b.ring_strategy},
               {"images", br_images_text(c, "centred on the nearest image", "fixed 3x3 block")},
               {"weights", b.simpson_len > 0 ? fmt::format("Simpson-3/8, len {}", b.simpson_len)
                                             : std::string("uniform (periodic) / trapezoid (free)")}};
    if (!b.cutoff_solver && c.space == exec::Space::Host)
      j["br"]["host_kernel"] = model::to_string(model::br_host_kernel_default());
    if (b.cutoff_solver)
      j["br"]["cutoff"] = {{"radius", b.cutoff},
                           {"neighbour_test", b.float32_test ? "float32 (reference)" : "double"},
                           {"images", "every periodic image within the cutoff"},
                           {"spatial_partition", mesh::to_string(b.partition)},
                           {"spatial_grid", c.procs},
                           {"migrate_strategy", b.migrate_strategy},
                           {"bytes_per_particle", {{"to_spatial", 48}, {"ghost", 48}, {"to_surface", 24}}}};
    if (b.tree_solver)
      j["br"]["tree"] = {// the --br-tolerance that picked θ or the degree; null when both were given
                         {"tolerance", o.tree_theta && o.tree_degree ? json(nullptr) : json(o.br_tolerance)},
                         {"theta", b.tree_theta},
                         {"degree", b.tree_degree},
                         {"leaf", b.tree_leaf},
                         {"spatial_partition", mesh::to_string(b.partition)},
                         {"migrate_strategy", b.migrate_strategy},
                         {"let_strategy", b.let_strategy},
                         {"let_path", comm::let::path(b.let_strategy, c.space == exec::Space::Device ? &sim.transport() : nullptr)},
                         {"traversal", b.tree_dual ? "dual" : "single"},
                         {"edge_terms", b.tree_edge},
                         {"edge_margin", b.tree_edge_margin},
                         {"device_phases", c.space == exec::Space::Device ? tree_phases(b).device : "none"},
                         {"host_phases", c.space == exec::Space::Device ? tree_phases(b).host : "all"}};
  }
  j["tau"] = c.tau;
  j["dt"] = c.dt;
  j["steps"] = c.steps;
  j["exec"] = exec::to_string(c.space);
  j["host_threads"] = exec::host_threads();
  j["transport"] = comm::to_string(sim.transport().kind());
  j["transport_description"] = sim.transport().describe();
  j["gpu_transport_option"] = o.gpu_transport;
  // NCCL replaces the MPI strategy (device-ipc runs beside it): the results say what ran.
  j["halo_strategy"] = halo_over_nccl(sim, c) ? std::string("nccl") : c.model.halo_strategy;
  j["halo_overlap"] = c.model.halo_overlap;
  j["buffer_align"] = c.buffer_align;
  if (c.space == exec::Space::Device) j["ranks_per_gpu"] = c.ranks_per_gpu;
  if (c.space == exec::Space::Device) j["gpu_timers"] = c.gpu_event_timers ? "events" : "host";
  // --gpu-graph: what was asked, and whether the step ran as a CUDA graph (docs/gpu-small.md).
  if (c.space == exec::Space::Device) {
    j["gpu_graph"] = c.gpu_graph;
    j["gpu_graph_used"] = sim.graph_in_use();
  }
  j["fft"] = c.fft.describe();
  // --fft-2d: whether rank 0's two local passes ran as one 2-D transform (docs/gpu-small.md).
  if (const model::RieszTransform* r = sim.model().riesz()) {
    j["fft_2d_plan"] = r->fft().whole_array_2d();
    // --fft-2d-inverse: whether that 2-D plan's inverse ran complex to real (auto: timed).
    j["fft_2d_inverse_c2r"] = r->fft().inverse_from_half_2d();
    // Host half spectrum: whether rank 0's last inverse transform ran FFTW's c2r (docs/fft.md).
    j["fft_inverse_c2r"] = r->fft().inverse_c2r();
  }
  j["heffte_configuration"] = o.heffte;
  j["ranks_grid_choice"] = c.grid_choice.empty() ? nlohmann::json() : nlohmann::json(c.grid_choice);
  j["warnings"] = c.warnings;
  return j;
}

// The step-time block: quantiles per step and per two steps, then the outlier steps.
void print_step_statistics(const json& doc) {
  const json& st = doc["steps"];
  if (st["statistics"]["count"].get<long>() == 0) return;
  fmt::print("\nStep time (slowest rank, {} measured step(s))\n", st["statistics"]["count"].get<long>());
  fmt::print("  {:<10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "", "min", "p50", "p90", "p99", "max",
             "mean", "MAD");
  auto row = [](const char* label, const json& s) {
    if (s["count"].get<long>() == 0) return;
    fmt::print("  {:<10} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e}\n", label,
               s["min"].get<double>(), s["p50"].get<double>(), s["p90"].get<double>(), s["p99"].get<double>(),
               s["max"].get<double>(), s["mean"].get<double>(), s["mad"].get<double>());
  };
  row("step", st["statistics"]);
  row("two steps", st["window2"]);
  const json& out = st["outliers"];
  if (out.empty()) {
    fmt::print("  outliers   none (step time > p50 + 5 MAD = {:.3e} s)\n", st["statistics"]["outlier_threshold"].get<double>());
    return;
  }
  fmt::print("  outliers   {} step(s) > p50 + 5 MAD = {:.3e} s\n", out.size(),
             st["statistics"]["outlier_threshold"].get<double>());
  constexpr size_t kShown = 5;
  for (size_t k = 0; k < std::min(out.size(), kShown); ++k) {
    std::string slow;
    for (const json& r : out[k]["regions"])
      slow += fmt::format("{}{} +{:.2e}", slow.empty() ? "" : ", ", r["region"].get<std::string>(),
                          r["seconds"].get<double>() - r["median"].get<double>());
    fmt::print("    step {:>6} {:.3e} s{}{}\n", out[k]["step"].get<long>(), out[k]["seconds"].get<double>(),
               slow.empty() ? "" : ": ", slow);
  }
  if (out.size() > kShown) fmt::print("    ... {} more in the results file\n", out.size() - kShown);
}

}  // namespace

json results_document(Simulation& sim, const RunOutcome& outcome, const std::vector<std::string>& argv) {
  MPI_Comm c = sim.mesh().grid().comm();
  const int rank = sim.mesh().grid().rank();
  const long measured = sim.measured_steps();
  const long steps = std::max(measured, 1L);
  json doc;
  doc["schema"] = "beatnik-results";
  doc["schema_version"] = io::kResultsSchemaVersion;
  doc["status"] = outcome.completed ? "completed" : "failed";
  doc["message"] = outcome.message;
  doc["provenance"] = provenance(argv, sim.context().host_of_rank());
  doc["config"] = config_json(sim);

  // Decomposition and placement
  const auto boxes = sim.mesh().decomposition().all_owned();
  json dec;
  dec["ranks"] = sim.mesh().grid().size();
  dec["grid"] = sim.config().procs;
  dec["nodes"] = sim.config().geometry.nodes;
  json jb = json::array();
  for (const auto& b : boxes) jb.push_back({b.lo[0], b.hi[0], b.lo[1], b.hi[1]});
  dec["owned_boxes"] = jb;  // per grid rank, i.e. per cell i * Py + j
  // Ranks as mpiexec numbers them; placement.grid_rank_of_rank leads to their boxes.
  dec["node_of_rank"] = sim.context().node_of_rank();
  dec["node_count"] = sim.context().node_count();
  dec["placement"] = placement_json(sim);
  doc["decomposition"] = dec;

  // Timer regions: per-step seconds on each rank, then min / median / max over ranks.
  std::vector<std::string> names;
  for (const auto& [n, s] : sim.timers().stats()) names.push_back(n);
  names = common_names(names, c);
  const auto& st = sim.timers().stats();
  json regions;
  double step_median = 0;
  for (const auto& n : names) {
    auto it = st.find(n);
    const double per_step = it == st.end() ? 0.0 : it->second.seconds / steps;
    const double calls = it == st.end() ? 0.0 : double(it->second.calls) / steps;
    const auto all = gather(per_step, c);
    if (rank == 0) {
      regions[n] = min_median_max(all);
      regions[n]["calls_per_step"] = calls;
      if (n == "step") step_median = regions[n]["median"].get<double>();
    }
  }
  if (rank == 0)
    for (auto& [n, r] : regions.items()) r["share"] = step_median > 0 ? r["median"].get<double>() / step_median : 0.0;
  // Each region's seconds in each measured step, slowest rank per step.
  std::map<std::string, std::vector<double>> series;
  for (const auto& n : names) {
    auto it = sim.region_series().find(n);
    auto all = max_over_ranks(it == sim.region_series().end() ? std::vector<double>(measured, 0.0) : it->second, c);
    if (rank == 0) series[n] = std::move(all);
  }
  doc["timers"] = {{"unit", "seconds per step"}, {"regions", regions}, {"series", series}};

  // Communication: totals over ranks and the busiest rank, per pattern and locality.
  std::vector<std::string> patterns;
  for (const auto& [n, s] : sim.comm_stats().stats()) patterns.push_back(n);
  patterns = common_names(patterns, c);
  json comm;
  for (const auto& p : patterns) {
    auto it = sim.comm_stats().stats().find(p);
    comm::PatternStats s = it == sim.comm_stats().stats().end() ? comm::PatternStats{} : it->second;
    long sum_b[3], sum_m[3], max_b[3];
    MPI_Reduce(s.bytes, sum_b, 3, MPI_LONG, MPI_SUM, 0, c);
    MPI_Reduce(s.messages, sum_m, 3, MPI_LONG, MPI_SUM, 0, c);
    MPI_Reduce(s.bytes, max_b, 3, MPI_LONG, MPI_MAX, 0, c);
    if (rank == 0) comm[p] = communication_entry(double(s.calls) / steps, sum_b, sum_m, max_b, steps);
  }
  doc["communication"] = comm;
  if (sim.config().skeleton && rank == 0) doc["skeleton"] = skeleton_json(sim);

  // Per-step wall time, slowest rank: measured steps and, apart, the warm-up steps.
  const std::vector<double> times = max_over_ranks(sim.step_seconds(), c);
  const std::vector<double> warm = max_over_ranks(sim.warmup_seconds(), c);
  if (rank == 0) {
    double warm_total = 0;
    for (double t : warm) warm_total += t;
    doc["warmup"] = {{"steps", static_cast<long>(warm.size())}, {"seconds", warm_total}, {"step_seconds", warm}};
    doc["steps"] = {{"done", sim.steps_done()}, {"measured", measured}, {"seconds", times}};
    add_step_statistics(doc["steps"], times, series, sim.first_step() + static_cast<long>(warm.size()) + 1);
  }

  // Performance and memory.
  const double nodes = double(sim.mesh().global_nodes());
  double buf = double(sim.buffer_bytes()), rss = double(max_rss_bytes());
  const double owned = double(sim.mesh().owned().count());
  double buf_per_node = buf / owned, rss_per_node = rss / owned;
  MPI_Allreduce(MPI_IN_PLACE, &buf_per_node, 1, MPI_DOUBLE, MPI_MAX, c);
  MPI_Allreduce(MPI_IN_PLACE, &rss_per_node, 1, MPI_DOUBLE, MPI_MAX, c);
  MPI_Allreduce(MPI_IN_PLACE, &rss, 1, MPI_DOUBLE, MPI_MAX, c);
  json perf;
  perf["wall_seconds"] = outcome.wall_seconds;
  perf["seconds_per_step"] = outcome.wall_seconds / steps;
  const double fom = outcome.wall_seconds > 0 ? nodes * measured / outcome.wall_seconds : 0.0;
  perf["node_updates_per_second"] = fom;
  perf["grind_time_ns"] = fom > 0 ? 1e9 / fom : 0.0;
  perf["buffer_bytes_per_node_max_rank"] = buf_per_node;
  if (sim.config().space == exec::Space::Device) {
    // Device memory the run took (driver's count: buffers, cuFFT plans and work areas, NCCL).
    double dev_per_node = double(sim.device_bytes()) / owned, dev = double(sim.device_bytes());
    MPI_Allreduce(MPI_IN_PLACE, &dev_per_node, 1, MPI_DOUBLE, MPI_MAX, c);
    MPI_Allreduce(MPI_IN_PLACE, &dev, 1, MPI_DOUBLE, MPI_MAX, c);
    perf["device_bytes_max_rank"] = dev;
    perf["device_bytes_per_node_max_rank"] = dev_per_node;
    std::vector<int> gpus(sim.context().size());  // per rank as mpiexec numbers them, like node_of_rank
    const int g = sim.gpu_id();
    MPI_Allgather(&g, 1, MPI_INT, gpus.data(), 1, MPI_INT, sim.context().comm());
    doc["decomposition"]["gpu_of_rank"] = gpus;
  }
  perf["max_rss_bytes_max_rank"] = rss;
  perf["rss_bytes_per_node_max_rank"] = rss_per_node;
  if (const auto* tree = dynamic_cast<const model::TreeBRSolver*>(sim.model().br_solver())) {
    // Tree BR: interactions per BR call (all ranks), directly and through cluster proxies; the
    // LET bytes a rank sent per call (the largest rank).
    const auto& t = tree->totals();
    const double calls = t.calls > 0 ? double(t.calls) : 1.0;
    double sums[10] = {double(t.direct_pairs), double(t.cluster_terms),    double(t.proxy_pairs),
                       double(t.edge_terms),   double(t.edge_proxy_pairs), double(t.edge_direct_pairs),
                       double(t.cc_terms),     double(t.cc_pairs),         double(t.down_pairs),
                       double(t.down_merged)};
    double let_max = double(t.let_bytes);
    MPI_Allreduce(MPI_IN_PLACE, sums, 10, MPI_DOUBLE, MPI_SUM, c);
    MPI_Allreduce(MPI_IN_PLACE, &let_max, 1, MPI_DOUBLE, MPI_MAX, c);
    perf["br_tree"] = {{"calls", t.calls},
                       {"direct_pairs_per_call", sums[0] / calls},
                       {"cluster_terms_per_call", sums[1] / calls},
                       {"proxy_pairs_per_call", sums[2] / calls},
                       {"edge_terms_per_call", sums[3] / calls},
                       {"edge_proxy_pairs_per_call", sums[4] / calls},
                       {"edge_direct_pairs_per_call", sums[5] / calls},
                       {"cluster_cluster_terms_per_call", sums[6] / calls},
                       {"cluster_cluster_pairs_per_call", sums[7] / calls},
                       {"down_pairs_per_call", sums[8] / calls},
                       {"down_merged_grids_per_call", sums[9] / calls},
                       {"let_bytes_per_call_max_rank", let_max / calls}};
  }
  if (!sim.br_check_series().empty()) doc["br_check"] = br_check_json(sim.br_check_series());
  json load = load_balance_json(sim);
  if (sim.config().model.br.cutoff_solver && sim.config().model.order != model::Order::Low) {
    // Cutoff BR: the pairs within the cutoff that the kernels evaluated, all ranks, per step.
    double pairs = 0;
    const LoadSeries& load_rows = sim.load_series();
    const int col = load_rows.column("pairs");
    if (col >= 0)
      for (const auto& row : load_rows.steps) pairs += row[col];
    MPI_Allreduce(MPI_IN_PLACE, &pairs, 1, MPI_DOUBLE, MPI_SUM, c);
    perf["br_pairs_per_step"] = pairs / steps;
    perf["br_pairs_per_second"] = outcome.wall_seconds > 0 ? pairs / outcome.wall_seconds : 0.0;
  } else if (sim.config().model.order != model::Order::Low && !sim.config().model.br.tree_solver) {
    // Exact BR: every node with every node and image, 3 evaluations per step (RK3).
    const auto& g = sim.config().geometry;
    const int k = sim.config().model.br.images;
    double images = 1;
    for (int d = 0; d < 2; ++d) images *= g.periodic[d] ? 2 * k + 1 : 1;
    const double per_step = 3.0 * nodes * nodes * images;
    perf["br_interactions_per_step"] = per_step;
    perf["br_interactions_per_second"] = outcome.wall_seconds > 0 ? per_step * measured / outcome.wall_seconds : 0.0;
  }
  doc["performance"] = perf;
  if (!load.is_null()) doc["load_balance"] = load;

  const GlobalDiagnostics d = sim.diagnostics();
  doc["checksums"] = {{"sum_z3", d.sum_z3},         {"sum_abs_w", d.sum_abs_w}, {"max_z3", d.max_z3},
                      {"min_z3", d.min_z3},         {"max_abs_w1", d.max_abs_w1}, {"max_abs_w2", d.max_abs_w2},
                      {"nonfinite_values", d.nonfinite}};
  return doc;
}

json communication_entry(double exchanges_per_step_rank0, const long bytes_total[3], const long messages_total[3],
                         const long bytes_busiest_rank[3], long steps) {
  const char* loc[3] = {"self", "on_node", "off_node"};
  json j;
  j["exchanges_per_step_rank0"] = exchanges_per_step_rank0;
  for (int k = 0; k < 3; ++k) {
    j["bytes_total"][loc[k]] = bytes_total[k];
    j["messages_total"][loc[k]] = messages_total[k];
    j["bytes_busiest_rank"][loc[k]] = bytes_busiest_rank[k];
    j["bytes_per_step_total"][loc[k]] = double(bytes_total[k]) / steps;
  }
  return j;
}

void print_banner(const Simulation& sim) {
  if (sim.context().rank() != 0) return;  // as the progress lines: the first rank mpiexec started
  const RunConfig& c = sim.config();
  const auto& g = c.geometry;
  fmt::print("beatnik: Z-model, {} order, profile {}\n", model::to_string(c.model.order), to_string(c.profile));
  if (!c.options.case_name.empty()) fmt::print("  case        {}\n", case_banner(c.options));
  fmt::print("  mesh        {} x {} nodes ({}), box [-{:g}, {:g}]^2, weak scale {}\n", g.nodes[0], g.nodes[1],
             c.options.boundary, c.half_width, c.half_width, c.weak_scale);
  fmt::print("  ranks       {} as {} x {}, {} node(s), exec {} ({} thread(s) per rank)\n", sim.mesh().grid().size(),
             c.procs[0], c.procs[1], sim.context().node_count(), exec::to_string(c.space), exec::host_threads());
  fmt::print("{}", placement_banner(sim));
  fmt::print("  physics     A = {:g}, g = {:g} ({:g} g's), M = {:g} (mu = {:.6g}), e = {:g} (eps = {:.6g}), p = {:g}\n",
             c.model.atwood, c.model.gravity, c.options.gravity, c.options.mu, c.model.mu, c.options.epsilon,
             c.model.epsilon, c.model.metric_power);
  if (c.model.order != model::Order::Low) {
    const auto& b = c.model.br;
    if (b.tree_solver) {
      fmt::print("  BR          tree solver, theta = {:g}, degree {}, leaf {}, {}; {} spatial partition on {} x {}, "
                 "migration {}, LET {} over {}, {} traversal, edge terms {}\n",
                 b.tree_theta, b.tree_degree, b.tree_leaf,
                 br_images_text(c, "images centred on the nearest", "fixed 3x3 images"),
                 mesh::to_string(b.partition), c.procs[0], c.procs[1], b.migrate_strategy, b.let_strategy,
                 comm::let::path(b.let_strategy, c.space == exec::Space::Device ? &sim.transport() : nullptr),
                 b.tree_dual ? "dual" : "single",
                 b.tree_edge ? fmt::format("on (margin {:g})", b.tree_edge_margin) : std::string("off"));
      if (c.space == exec::Space::Device) {
        const TreePhases t = tree_phases(b);
        fmt::print("  BR on GPU   {} on the device; {} on the host (the sums overlap the lists)\n", t.device, t.host);
      }
    } else if (b.cutoff_solver)
      fmt::print("  BR          cutoff solver, c = {:g} ({} test), every image within c, {} weights; {} spatial "
                 "partition on {} x {}, migration {}\n",
                 b.cutoff, b.float32_test ? "float32" : "double", b.simpson_len > 0 ? "Simpson-3/8" : "uniform/trapezoid",
                 mesh::to_string(b.partition), c.procs[0], c.procs[1], b.migrate_strategy);
    else
      fmt::print("  BR          {} solver, ring {}, {}, {} weights{}\n", c.options.solver, b.ring_strategy,
                 br_images_text(c, "images centred on the nearest", "fixed 3x3 images"),
                 b.simpson_len > 0 ? "Simpson-3/8" : "uniform/trapezoid",
                 c.space == exec::Space::Host ? fmt::format(", host kernel {}", model::to_string(model::br_host_kernel_default()))
                                              : std::string());
  }
  fmt::print("  initial     {} m = {:g} p = {:g}{}\n", model::to_string(c.initial.shape), c.initial.magnitude,
             c.initial.period,
             c.options.tilt ? fmt::format(", tilted {:g} degrees (slope {:.6g} along x)", *c.options.tilt,
                                          c.initial.tilt_slope)
                            : std::string());
  fmt::print("  time        {} steps of dt = {:.6g} (tau = {:.6g}, t_final = {:.6g})\n", c.steps, c.dt, c.tau,
             c.steps * c.dt);
  const Options& o = c.options;
  const bool overridden = o.fft_exchange || o.fft_intermediate || o.fft_reorder || o.fft_spectrum;
  fmt::print("  fft         {} ({})\n", c.fft.describe(),
             overridden ? fmt::format("-H {} with --fft-* overrides", o.heffte)
                        : fmt::format("-H {}{}", o.heffte, c.grid_choice.empty() ? "" : ", intermediate from --ranks-grid auto"));
  if (!c.grid_choice.empty()) fmt::print("  grid auto   {}\n", c.grid_choice);
  fmt::print("  halo        {}{}\n",
             halo_over_nccl(sim, c) ? std::string("grouped NCCL send/receives (--gpu-transport nccl)")
                                    : "strategy " + c.model.halo_strategy,
             c.model.halo_overlap ? ", overlapped with interior work (--halo-overlap)" : ", no overlap");
  if (c.space == exec::Space::Device)
    fmt::print("  gpu         rank 0 on GPU {} ({}), {} GPU(s) visible{}; transport {}\n", sim.gpu_id(),
               exec::device_name(), exec::device_count(),
               c.ranks_per_gpu > 0 ? fmt::format(", {} rank(s) per GPU (--ranks-per-gpu)", c.ranks_per_gpu)
                                   : std::string(),
               sim.transport().describe());
  if (sim.step_graph())
    fmt::print("  gpu graph   the RK step captured once as a CUDA graph and launched whole (--gpu-graph {}); "
               "regions inside it report calls, no time\n", c.gpu_graph);
  if (c.buffer_align != 4096) fmt::print("  buffers     host and pinned buffers aligned to {} bytes\n", c.buffer_align);
  if (c.skeleton) fmt::print("  skeleton    {}\n", skeleton_banner(sim));
  for (const auto& w : c.warnings) fmt::print("  warning     {}\n", w);
  std::fflush(stdout);
}

void print_summary(const json& doc) {
  const json& regions = doc["timers"]["regions"];
  std::vector<std::pair<double, std::string>> order;
  for (auto& [n, r] : regions.items())
    if (n != "step") order.emplace_back(-r["median"].get<double>(), n);
  std::sort(order.begin(), order.end());
  fmt::print("\nTimer regions (seconds per step over ranks)\n");
  fmt::print("  {:<18} {:>11} {:>11} {:>11} {:>7} {:>7}\n", "region", "min", "median", "max", "share", "calls");
  auto row = [&](const std::string& n) {
    const json& r = regions[n];
    fmt::print("  {:<18} {:>11.4e} {:>11.4e} {:>11.4e} {:>6.1f}% {:>7.1f}\n", n, r["min"].get<double>(),
               r["median"].get<double>(), r["max"].get<double>(), 100.0 * r["share"].get<double>(),
               r["calls_per_step"].get<double>());
  };
  if (regions.contains("step")) row("step");
  for (auto& [neg, n] : order) row(n);

  fmt::print("\nCommunication (all ranks, per step)\n");
  fmt::print("  {:<10} {:>14} {:>14} {:>14} {:>12}{}\n", "pattern", "self B", "on-node B", "off-node B", "msgs",
             bounds_header(doc));
  const long steps = std::max(static_cast<long>(doc["steps"]["seconds"].size()), 1L);
  for (auto& [p, s] : doc["communication"].items()) {
    long msgs = 0;
    for (auto& [k, v] : s["messages_total"].items()) msgs += v.get<long>();
    fmt::print("  {:<10} {:>14.0f} {:>14.0f} {:>14.0f} {:>12.1f}{}\n", p, s["bytes_per_step_total"]["self"].get<double>(),
               s["bytes_per_step_total"]["on_node"].get<double>(), s["bytes_per_step_total"]["off_node"].get<double>(),
               double(msgs) / steps, bounds_columns(s));
  }
  print_step_statistics(doc);
  const json& perf = doc["performance"];
  const json& ck = doc["checksums"];
  fmt::print("\nPerformance\n");
  fmt::print("  steps                 {}\n", doc["steps"]["done"].get<long>());
  if (doc["warmup"]["steps"].get<long>() > 0)
    fmt::print("  warm-up               {} step(s), {:.4f} s, left out of every figure below and above\n",
               doc["warmup"]["steps"].get<long>(), doc["warmup"]["seconds"].get<double>());
  fmt::print("  wall time             {:.4f} s ({:.4e} s per step)\n", perf["wall_seconds"].get<double>(),
             perf["seconds_per_step"].get<double>());
  fmt::print("  figure of merit       {:.4e} node updates per second\n", perf["node_updates_per_second"].get<double>());
  fmt::print("  grind time            {:.3f} ns per node update\n", perf["grind_time_ns"].get<double>());
  fmt::print("  memory per node       {:.0f} B in beatnik buffers, {:.0f} B max RSS (busiest rank)\n",
             perf["buffer_bytes_per_node_max_rank"].get<double>(), perf["rss_bytes_per_node_max_rank"].get<double>());
  if (perf.contains("device_bytes_per_node_max_rank"))
    fmt::print("  device memory         {:.0f} B per node ({:.3f} GiB on the busiest rank)\n",
               perf["device_bytes_per_node_max_rank"].get<double>(),
               perf["device_bytes_max_rank"].get<double>() / 1073741824.0);
  if (perf.contains("br_interactions_per_second"))
    fmt::print("  Birkhoff-Rott         {:.4e} pair-image interactions per second ({:.4e} per step)\n",
               perf["br_interactions_per_second"].get<double>(), perf["br_interactions_per_step"].get<double>());
  if (perf.contains("br_pairs_per_second"))
    fmt::print("  Birkhoff-Rott         {:.4e} pairs within the cutoff per second ({:.4e} per step)\n",
               perf["br_pairs_per_second"].get<double>(), perf["br_pairs_per_step"].get<double>());
  if (regions.contains("br.exact.ring.hidden") && regions.contains("br.exact.ring")) {
    const double hidden = regions["br.exact.ring.hidden"]["median"].get<double>();
    const double exposed = regions["br.exact.ring"]["median"].get<double>();
    if (hidden + exposed > 0)
      fmt::print("  ring pass             {:.1f}% of the transfer time hidden behind computation (median rank)\n",
                 100.0 * hidden / (hidden + exposed));
  }
  if (perf.contains("br_tree"))
    fmt::print("  Birkhoff-Rott tree    {:.4e} direct pairs, {:.4e} target-proxy pairs ({:.4e} cluster terms) per BR call\n",
               perf["br_tree"]["direct_pairs_per_call"].get<double>(), perf["br_tree"]["proxy_pairs_per_call"].get<double>(),
               perf["br_tree"]["cluster_terms_per_call"].get<double>());
  if (perf.contains("br_tree"))
    fmt::print("  tree window edge      {:.4e} target-proxy pairs, {:.4e} direct pairs ({:.4e} edge terms) per BR call\n",
               perf["br_tree"]["edge_proxy_pairs_per_call"].get<double>(),
               perf["br_tree"]["edge_direct_pairs_per_call"].get<double>(),
               perf["br_tree"]["edge_terms_per_call"].get<double>());
  if (perf.contains("br_tree") && perf["br_tree"]["cluster_cluster_terms_per_call"].get<double>() > 0)
    fmt::print("  tree cluster-cluster  {:.4e} target point-proxy pairs ({:.4e} terms), {:.4e} downward products per BR call\n",
               perf["br_tree"]["cluster_cluster_pairs_per_call"].get<double>(),
               perf["br_tree"]["cluster_cluster_terms_per_call"].get<double>(),
               perf["br_tree"]["down_pairs_per_call"].get<double>());
  if (doc.contains("br_check")) print_br_check_summary(doc["br_check"]);
  if (doc.contains("load_balance")) print_load_summary(doc["load_balance"]);
  fmt::print("\nState: max z3 = {:.15g}, min z3 = {:.15g}, max|w1| = {:.15g}\n", ck["max_z3"].get<double>(),
             ck["min_z3"].get<double>(), ck["max_abs_w1"].get<double>());
  std::fflush(stdout);
}

}  // namespace beatnik::app
