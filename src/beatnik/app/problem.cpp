#include "beatnik/app/problem.hpp"

#include <mpi.h>

#include <cmath>
#include <string>

#include "beatnik/app/tilt.hpp"
#include "beatnik/app/skeleton.hpp"
#include "beatnik/app/grid_choice.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/comm/halo/registry.hpp"
#include "beatnik/comm/let/registry.hpp"
#include "beatnik/comm/migrate/registry.hpp"
#include "beatnik/comm/ring/registry.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/model/br_host_kernel.hpp"
#include "beatnik/model/tree_br_solver.hpp"

namespace beatnik::app {
namespace {

void require(bool ok, const std::string& msg) {
  if (!ok) throw InputError(msg);
}
bool finite(double v) { return std::isfinite(v); }

std::array<int, 2> parse_grid(const std::string& s, int ranks) {
  const auto x = s.find('x');
  int p = 0, q = 0;
  try {
    size_t a = 0, b = 0;
    require(x != std::string::npos, "");
    p = std::stoi(s.substr(0, x), &a);
    q = std::stoi(s.substr(x + 1), &b);
    require(a == x && b == s.size() - x - 1, "");
  } catch (...) {
    throw InputError("--ranks-grid takes PxQ with positive integers, e.g. 2x3 (got '" + s + "')");
  }
  require(p > 0 && q > 0, "--ranks-grid takes PxQ with positive integers (got '" + s + "')");
  require(p * q == ranks, "--ranks-grid " + s + " has " + std::to_string(p * q) +
                              " ranks but the run has " + std::to_string(ranks));
  return {p, q};
}

}  // namespace

const char* to_string(Profile p) { return p == Profile::Consistent ? "consistent" : "beatnik"; }

mesh::Geometry make_geometry(Profile profile, bool periodic, int n, double B) {
  mesh::Geometry g;
  const double L = 2.0 * B;
  for (int d = 0; d < 2; ++d) {
    g.periodic[d] = periodic;
    g.period[d] = L;
    if (periodic && profile == Profile::Consistent) {
      g.nodes[d] = n;
      g.spacing[d] = g.node_spacing[d] = L / n;
      g.origin[d] = -(n / 2) * g.node_spacing[d];
    } else if (periodic) {  // reference: n-1 nodes spaced L/(n-1), operators use L/n
      g.nodes[d] = n - 1;
      g.node_spacing[d] = L / (n - 1);
      g.spacing[d] = L / n;
      g.origin[d] = -((n - 1) / 2) * g.node_spacing[d];
    } else {  // free: n nodes spanning [-B, B]
      g.nodes[d] = n;
      g.spacing[d] = g.node_spacing[d] = L / (n - 1);
      const double s = ((n - 1) % 2 == 1) ? 0.5 : 0.0;
      g.origin[d] = (-(n / 2) + s) * g.node_spacing[d];
    }
  }
  return g;
}

namespace {

// --br-strategy: a name in the ring registry that can use the transport the options name (with
// -x cuda and --gpu-transport auto, the ring pass checks the transport chosen at start-up).
std::string ring_strategy(const Options& o, const RunConfig& c) {
  try {
    comm::ring::find_strategy(o.br_strategy);
  } catch (const InputError& e) {
    throw InputError(std::string("--br-strategy: ") + e.what());
  }
  const bool ring = c.model.order != model::Order::Low && o.solver == "exact";
  if (!ring || (c.space == exec::Space::Device && o.gpu_transport == "auto")) return o.br_strategy;
  const comm::TransportKind t = c.space == exec::Space::Host ? comm::TransportKind::Host
                                : o.gpu_transport == "staged" ? comm::TransportKind::Staged
                                : o.gpu_transport == "cuda-aware" ? comm::TransportKind::CudaAware
                                                                  : comm::TransportKind::Nccl;
  try {
    comm::ring::find_strategy(o.br_strategy, t);
  } catch (const NotAvailable& e) {
    throw NotAvailable(std::string("--br-strategy: ") + e.what());
  }
  return o.br_strategy;
}

}  // namespace

// auto: dual on the host; with -x cuda dual for a periodic surface from 2^18 nodes a rank and a
// free one from a million, where it was measured faster than single with single's own degrees
// (one H200, TOL 1e-6: periodic 512² 0.0414 s a call against 0.0515, 1024² 0.1408 against 0.2487;
// free 1024² 0.0862 against 0.0950), single below, where it is as fast or faster: periodic 256²
// (0.0133 against 0.0135), free 512² (0.019 against 0.028), the paper's single-mode case
// (docs/tree-log.md "The single traversal's degrees"). A choice for speed: the two traversals
// differ within the tolerance, so a problem may take another at another rank count;
// --tree-traversal single or dual fixes it. A million, not 2^20: -w 2 of 1024² gives 1448² nodes,
// 1 048 352 a rank.
bool tree_dual_traversal(const std::string& traversal, exec::Space space, bool periodic, long nodes_per_rank) {
  constexpr long kDualPeriodicNodes = 1L << 18, kDualFreeNodes = 1000000;
  if (traversal != "auto") return traversal == "dual";
  return space != exec::Space::Device || nodes_per_rank >= (periodic ? kDualPeriodicNodes : kDualFreeNodes);
}

namespace {

// -S tree: the traversal, then θ and degree from --br-tolerance's table for it unless given, the
// LET strategy.
void configure_tree(const Options& o, RunConfig& c, int ranks) {
  auto& b = c.model.br;
  require(std::isfinite(o.br_tolerance) && o.br_tolerance > 0 && o.br_tolerance < 1,
          "--br-tolerance must lie between 0 and 1");
  require(o.tree_traversal == "single" || o.tree_traversal == "dual" || o.tree_traversal == "auto",
          "--tree-traversal must be auto, single or dual");
  b.tree_dual = tree_dual_traversal(o.tree_traversal, c.space, c.geometry.periodic[0] && c.geometry.periodic[1],
                                    long(c.geometry.nodes[0]) * c.geometry.nodes[1] / ranks);
  model::tree_parameters(o.br_tolerance, b.tree_dual).apply(b);  // the table's entry; the options override it
  if (o.tree_theta) b.tree_theta = *o.tree_theta;
  if (o.tree_degree) b.tree_degree = *o.tree_degree;
  if (o.tree_edge_margin) b.tree_edge_margin = *o.tree_edge_margin;
  b.tree_leaf = o.tree_leaf ? *o.tree_leaf : 64;
  require(std::isfinite(b.tree_theta) && b.tree_theta >= 0 && b.tree_theta < 1, "--tree-theta must lie in [0, 1)");
  require(b.tree_degree >= 0 && b.tree_degree <= model::kTreeMaxDegree,
          "--tree-degree must lie in 0.." + std::to_string(model::kTreeMaxDegree));
  require(b.tree_leaf >= 1, "--tree-leaf must be at least 1");
  require(o.tree_edge_terms == "on" || o.tree_edge_terms == "off", "--tree-edge-terms must be on or off");
  b.tree_edge = o.tree_edge_terms == "on";
  require(std::isfinite(b.tree_edge_margin) && b.tree_edge_margin >= 1 && b.tree_edge_margin <= 4,
          "--tree-edge-margin must lie in [1, 4]");
  b.tree_solver = o.solver == "tree" && c.model.order != model::Order::Low;
  if (o.solver == "tree" && !b.tree_solver)
    c.warnings.push_back("-S tree is ignored at low order (no Birkhoff-Rott solve)");
  if (!b.tree_solver) return;
  try {
    comm::let::find_strategy(o.let_strategy);
  } catch (const InputError& e) {
    throw InputError(std::string("--let-strategy: ") + e.what());
  } catch (const NotAvailable& e) {
    throw NotAvailable(std::string("--let-strategy: ") + e.what());
  }
  b.let_strategy = o.let_strategy;
}

}  // namespace

RunConfig make_run_config(const Options& o, int ranks) {
  RunConfig c;
  c.options = o;

  // Names
  require(o.profile == "consistent" || o.profile == "beatnik",
          "unknown --profile '" + o.profile + "' (choose consistent or beatnik)");
  c.profile = o.profile == "beatnik" ? Profile::Beatnik : Profile::Consistent;
  require(o.boundary == "periodic" || o.boundary == "free",
          "unknown boundary '" + o.boundary + "' (-b periodic or free)");
  const bool periodic = o.boundary == "periodic";
  if (o.order == "low") c.model.order = model::Order::Low;
  else if (o.order == "medium") c.model.order = model::Order::Medium;
  else if (o.order == "high") c.model.order = model::Order::High;
  else throw InputError("unknown order '" + o.order + "' (-O low, medium or high)");
  require(o.solver == "exact" || o.solver == "cutoff" || o.solver == "tree",
          "unknown solver '" + o.solver + "' (-S exact, cutoff or tree)");
  require(mesh::parse_spatial_partition(o.spatial_partition, c.model.br.partition),
          "unknown --spatial-partition '" + o.spatial_partition + "' (uniform or balanced)");
  try {
    comm::migrate::find_strategy(o.migrate_strategy);
  } catch (const InputError& e) {
    throw InputError(std::string("--migrate-strategy: ") + e.what());
  } catch (const NotAvailable& e) {
    throw NotAvailable(std::string("--migrate-strategy: ") + e.what());
  }
  c.model.br.migrate_strategy = o.migrate_strategy;
  for (long s : o.load_snapshot)
    require(s >= 1, "--load-snapshot takes step numbers of 1 or more (got " + std::to_string(s) + ")");
  c.initial.shape = model::parse_initial_shape(o.initial_condition);
  if (o.exec == "host" || o.exec == "serial" || o.exec == "openmp" || o.exec == "threads")
    c.space = exec::Space::Host;
  else if (o.exec == "cuda")
    c.space = exec::Space::Device;
  else
    throw InputError("unknown execution space '" + o.exec + "' (-x host or cuda)");
  require(o.gpu_transport == "auto" || o.gpu_transport == "staged" || o.gpu_transport == "cuda-aware" ||
              o.gpu_transport == "nccl",
          "unknown --gpu-transport '" + o.gpu_transport + "' (staged, cuda-aware, nccl or auto)");
  require(!o.gpu_id || *o.gpu_id >= 0, "--gpu-id must be a GPU number (0, 1, ...)");
  c.gpu_transport = o.gpu_transport;
  // The halo strategy, against the transport asked for (auto is settled in app/simulation.cpp,
  // where the same check runs again on the transport chosen).
  try {
    const bool nccl = c.space == exec::Space::Device && o.gpu_transport == "nccl";
    const bool device = c.space == exec::Space::Device;
    comm::halo::find_strategy(o.halo_strategy, nccl     ? comm::TransportKind::Nccl
                                               : device ? comm::TransportKind::Staged
                                                        : comm::TransportKind::Host);
  } catch (const InputError& e) {
    throw InputError(std::string("--halo-strategy: ") + e.what());
  } catch (const NotAvailable& e) {
    throw NotAvailable(std::string("--halo-strategy: ") + e.what());
  }
  c.model.halo_strategy = o.halo_strategy;
  c.gpu_id = o.gpu_id.value_or(-1);
  require(!o.ranks_per_gpu || *o.ranks_per_gpu >= 1,
          "--ranks-per-gpu must be 1 or more (got " + std::to_string(o.ranks_per_gpu.value_or(0)) + ")");
  require(!(o.ranks_per_gpu && o.gpu_id), "--ranks-per-gpu and --gpu-id both choose the GPU: give one of them");
  c.ranks_per_gpu = o.ranks_per_gpu.value_or(0);
  exec::check_host_alignment(o.buffer_align);
  c.buffer_align = o.buffer_align;
  if (c.space == exec::Space::Host && (o.gpu_transport != "auto" || o.gpu_id || o.ranks_per_gpu))
    c.warnings.push_back("--gpu-transport, --gpu-id and --ranks-per-gpu are ignored on a host run (-x host)");
  require(o.gpu_timers == "events" || o.gpu_timers == "host",
          "unknown --gpu-timers '" + o.gpu_timers + "' (events or host)");
  c.gpu_event_timers = o.gpu_timers == "events";
  if (c.space == exec::Space::Host && o.gpu_timers != "events")
    c.warnings.push_back("--gpu-timers is ignored on a host run (-x host)");
  require(o.gpu_graph == "auto" || o.gpu_graph == "on" || o.gpu_graph == "off",
          "unknown --gpu-graph '" + o.gpu_graph + "' (auto, on or off)");
  c.gpu_graph = o.gpu_graph;
  if (c.space == exec::Space::Host && o.gpu_graph == "on")
    c.warnings.push_back("--gpu-graph is ignored on a host run (-x host)");
  c.model.br.ring_strategy = ring_strategy(o, c);
  require(o.fftw_plan == "estimate" || o.fftw_plan == "measure" || o.fftw_plan == "patient",
          "unknown --fftw-plan '" + o.fftw_plan + "' (estimate, measure or patient)");

  // Numbers
  require(o.nodes >= 4, "-n/--nodes must be at least 4 (got " + std::to_string(o.nodes) + ")");
  require(finite(o.box) && o.box > 0, "-B/--bounding-box must be a positive number");
  require(o.weak_scale >= 1, "-w/--weak-scale must be at least 1");
  require(finite(o.magnitude), "-m/--magnitude must be a finite number");
  require(finite(o.period) && o.period > 0, "-p/--period must be positive");
  require(finite(o.atwood), "-a/--atwood must be a finite number");
  require(finite(o.gravity) && o.gravity >= 0, "-g/--gravity must be zero or positive");
  require(finite(o.mu) && o.mu >= 0, "-M/--mu must be zero or positive");
  require(finite(o.epsilon) && o.epsilon > 0, "-e/--epsilon must be positive");
  require(finite(o.cutoff) && o.cutoff > 0, "-c/--cutoff must be positive");
  require(o.br_images >= 0, "--br-images must be zero or positive");
  require(!o.steps || *o.steps > 0, "-t/--timesteps must be a positive number of steps");
  require(!o.dt || (finite(*o.dt) && *o.dt > 0), "-d/--dt must be positive");
  require(finite(o.max_stretch) && o.max_stretch >= 0, "--max-stretch must be zero or positive");
  require(o.write_frequency >= 0, "-F/--write-frequency must be zero or positive");
  require(o.write_state_every >= 0, "--write-state-every must be zero or positive");
  require(o.progress_every >= -1, "--progress-every must be zero or positive");
  require(!o.metric_power || finite(*o.metric_power), "--metric-power must be a finite number");
  require(!o.write_state.empty() || o.write_state_every == 0, "--write-state-every needs --write-state FILE");

  // FFT strategy: the reference code first, then the named options.
  c.fft = fft::FftOptions::from_reference_code(o.heffte);
  if (o.fft_exchange) {
    if (!comm::parse_exchange_algorithm(*o.fft_exchange, c.fft.algorithm))
      throw InputError("unknown --fft-exchange '" + *o.fft_exchange + "' (" +
                       comm::exchange_algorithm_names() + ")");
  }
  if (o.fft_intermediate) {
    if (*o.fft_intermediate == "slab") c.fft.intermediate = fft::Intermediate::Slab;
    else if (*o.fft_intermediate == "pencil") c.fft.intermediate = fft::Intermediate::Pencil;
    else throw InputError("unknown --fft-intermediate '" + *o.fft_intermediate + "' (slab or pencil)");
  }
  if (o.fft_reorder) {
    require(*o.fft_reorder == "contiguous" || *o.fft_reorder == "strided",
            "unknown --fft-reorder '" + *o.fft_reorder + "' (contiguous or strided)");
    c.fft.reorder = *o.fft_reorder == "contiguous";
  }
  if (o.fft_spectrum) {
    require(*o.fft_spectrum == "intermediate" || *o.fft_spectrum == "input",
            "unknown --fft-spectrum '" + *o.fft_spectrum + "' (intermediate or input)");
    c.fft.spectrum_in_input_layout = *o.fft_spectrum == "input";
  }
  require(o.fft_transform == "auto" || o.fft_transform == "r2c" || o.fft_transform == "c2c",
          "unknown --fft-transform '" + o.fft_transform + "' (auto, r2c or c2c)");
  require(o.fft_2d == "auto" || o.fft_2d == "on" || o.fft_2d == "off",
          "unknown --fft-2d '" + o.fft_2d + "' (auto, on or off)");
  // auto: the full complex transform where one 2-D plan can replace its two passes (one GPU, or
  // --fft-2d on; on one H200 it beat the half spectrum at n = 1024..4864, docs/gpu-small.md),
  // the half spectrum everywhere else (fewer reshape bytes and flops, docs/fft.md).
  const bool two_d_wanted = o.fft_2d == "on" || (o.fft_2d == "auto" && c.space == exec::Space::Device && ranks == 1);
  c.fft.half_spectrum = o.fft_transform == "r2c" || (o.fft_transform == "auto" && !two_d_wanted);
  // The 2-D plan is one full complex transform: it replaces the c2c passes only (the half
  // spectrum's split and Hermitian rebuild run between its two passes).
  require(!(o.fft_2d == "on" && c.fft.half_spectrum),
          "--fft-2d on needs --fft-transform c2c or auto (the 2-D plan is a full complex transform; r2c keeps its "
          "two passes)");
  c.fft.plan_2d = !c.fft.half_spectrum && (o.fft_2d == "on" || (o.fft_2d == "auto" && c.space == exec::Space::Device));
  require(o.fft_2d_inverse == "auto" || o.fft_2d_inverse == "c2r" || o.fft_2d_inverse == "c2c",
          "unknown --fft-2d-inverse '" + o.fft_2d_inverse + "' (auto, c2r or c2c)");
  c.fft.inverse_2d = o.fft_2d_inverse == "c2r"   ? fft::Inverse2D::C2R
                     : o.fft_2d_inverse == "c2c" ? fft::Inverse2D::C2C
                                                 : fft::Inverse2D::Auto;
  c.fft.effort = o.fftw_plan == "estimate"  ? fft::PlanEffort::Estimate
                 : o.fftw_plan == "measure" ? fft::PlanEffort::Measure
                                            : fft::PlanEffort::Patient;

  // Derived sizes (MODEL.md §2.2): weak scaling multiplies n and B by sqrt(W).
  c.weak_scale = o.weak_scale_by_ranks ? ranks : o.weak_scale;
  const double sw = std::sqrt(static_cast<double>(c.weak_scale));
  c.nodes = static_cast<int>(o.nodes * sw);
  c.half_width = o.box * sw;
  c.geometry = make_geometry(c.profile, periodic, c.nodes, c.half_width);

  // Process grid
  if (o.ranks_grid == "auto") {
    const GridChoice g = choose_grid(c.geometry.nodes, ranks, c.fft, !o.fft_intermediate);
    c.procs = g.procs;
    c.fft.intermediate = g.intermediate;
    c.grid_choice = g.reason;
  } else if (!o.ranks_grid.empty()) {
    c.procs = parse_grid(o.ranks_grid, ranks);
  } else {
    int dims[2] = {0, 0};
    MPI_Dims_create(ranks, 2, dims);
    c.procs = {dims[0], dims[1]};
  }
  for (int d = 0; d < 2; ++d)
    require(c.geometry.nodes[d] >= 2 * c.procs[d],
            "too many ranks for the mesh: " + std::to_string(c.procs[d]) + " ranks along dimension " +
                std::to_string(d) + " but only " + std::to_string(c.geometry.nodes[d]) +
                " nodes; each rank needs at least 2 nodes per dimension (use a larger -n or another --ranks-grid)");

  // Placement: every rank reads and checks a map file itself, so all agree without talking.
  require(!o.ranks_per_node || *o.ranks_per_node >= 1,
          "--ranks-per-node must be 1 or more (got " + std::to_string(o.ranks_per_node.value_or(0)) + ")");
  c.ranks_per_node = o.ranks_per_node.value_or(0);
  c.placement = comm::placement::parse(o.placement, o.placement_seed.value_or(comm::placement::kDefaultSeed));
  if (c.placement.policy == comm::placement::Policy::File)
    c.placement.file_cells = comm::placement::read_map_file(c.placement.path, c.procs);
  if (o.placement_seed && c.placement.policy != comm::placement::Policy::Random)
    c.warnings.push_back("--placement-seed applies to --placement random");

  // Physics
  c.model.atwood = o.atwood;
  c.model.max_stretch = o.max_stretch;
  c.model.halo_overlap = o.halo_overlap;
  c.model.gravity = o.gravity * 9.81;
  const double h = std::sqrt(c.geometry.spacing[0] * c.geometry.spacing[1]);
  c.model.mu = o.mu * h;
  c.model.epsilon = o.epsilon * h;
  // Birkhoff–Rott quadrature and images per profile (DECISIONS.md).
  // Cutoff solver: every image of every source within c (DECISIONS.md), the reference's float32
  // neighbour test in the beatnik profile.
  c.model.br.cutoff_solver = o.solver == "cutoff" && c.model.order != model::Order::Low;
  c.model.br.cutoff = o.cutoff;
  c.model.br.float32_test = c.profile == Profile::Beatnik;
  if (c.model.br.cutoff_solver) {
    for (int d = 0; d < 2; ++d)
      require(!periodic || o.cutoff <= 2.0 * c.geometry.period[d],
              "-c/--cutoff " + std::to_string(o.cutoff) + " spans more than two periods of the box (" +
                  std::to_string(c.geometry.period[d]) + "): every particle would need dozens of images; use -S exact "
                  "(with --br-images K) for long-range sums");
    if (o.br_images != 1) c.warnings.push_back("--br-images applies to the exact solver; -S cutoff sums every image within c");
  } else if (o.solver == "cutoff") {
    c.warnings.push_back("-S cutoff is ignored at low order (no Birkhoff-Rott solve; as the reference)");
  }
  configure_tree(o, c, ranks);
  require(o.br_check >= 0 && o.br_check <= long(c.geometry.nodes[0]) * c.geometry.nodes[1],
          "--br-check takes 0 (off) up to the number of mesh nodes");
  if (o.br_check > 0 && c.model.order != model::Order::Low) {
    c.model.br.check_samples = o.br_check;
  } else if (o.br_check > 0) {
    c.warnings.push_back("--br-check is ignored at low order (no Birkhoff-Rott solve)");
  }
  if (c.profile == Profile::Beatnik) {
    require(o.br_images == 1 || c.model.br.cutoff_solver, "--br-images applies to the consistent profile; --profile beatnik sums the "
                              "reference's fixed 3x3 block of images (drop --br-images)");
    c.model.br.images = 1;
    c.model.br.centred = false;
    c.model.br.simpson_len = c.nodes;  // the reference's -n after weak scaling (MODEL.md §7)
  } else {
    c.model.br.images = o.br_images;
    c.model.br.centred = true;
    c.model.br.simpson_len = 0;
  }
  c.model.metric_power = o.metric_power ? *o.metric_power : (c.profile == Profile::Beatnik ? 1.0 : 0.5);
  const double ag = std::fabs(c.model.atwood) * c.model.gravity;
  if (ag > 0) c.tau = 1.0 / std::sqrt(ag);
  require(ag > 0 || o.dt, "with -a 0 or -g 0 the time scale tau is undefined: give the step with -d/--dt");
  c.dt = o.dt ? *o.dt : c.tau / (c.model.order == model::Order::High ? 50.0 : 25.0);
  // Default length 1.2 tau: the reference's 2 tau blows up at step 33 (VALIDATION O14).
  c.steps = o.steps ? *o.steps : (c.tau > 0 ? std::lround(1.2 * c.tau / c.dt) : 30);
  if (c.steps < 1) c.steps = 1;
  require(o.warmup >= 0 && o.warmup < c.steps,
          "--warmup must be at least 0 and less than the number of steps (" + std::to_string(c.steps) + "), got " +
              std::to_string(o.warmup));
  c.warmup = o.warmup;
  // Explicit RK3 is stable for the viscous term while μ·dt·4/(ΔxΔy) ≤ 2.51 (the 9-point
  // Laplacian's most negative eigenvalue is −4/(ΔxΔy)). μ ∝ Δ, so the default τ/25 crosses it
  // near n = 350 at the default box: say so instead of letting the run blow up unexplained.
  if (c.model.mu > 0) {
    const double limit = 2.51 * c.geometry.spacing[0] * c.geometry.spacing[1] / (4.0 * c.model.mu);
    if (c.dt > limit)
      c.warnings.push_back("dt = " + std::to_string(c.dt) + " exceeds the explicit stability limit of the "
                           "viscous term (" + std::to_string(limit) + "): grid-scale modes will grow; "
                           "pass -d " + std::to_string(0.8 * limit) + " or smaller");
  }

  c.initial.magnitude = o.magnitude;
  c.initial.period = o.period;
  c.initial.seed = o.seed ? *o.seed : static_cast<std::uint64_t>(static_cast<long long>(1e7 * o.period));
  c.initial.reference_ranges = c.profile == Profile::Beatnik;
  apply_tilt(o, periodic, c.initial);

  // Combinations
  if (!periodic && c.model.order != model::Order::High) {
    if (c.profile == Profile::Consistent)
      throw InputError(std::string(model::to_string(c.model.order)) +
                       "-order model with free boundaries: the Riesz transform would treat the "
                       "free surface as periodic. Use -b periodic, -O high, or --profile beatnik to "
                       "reproduce the reference's behaviour");
    c.warnings.push_back("free boundaries at low/medium order: the Riesz transform treats the data as "
                         "periodic (reference behaviour, --profile beatnik)");
  }

  // Valid requests that are not built yet.
  if (c.space == exec::Space::Device && !exec::cuda_built())
    throw NotAvailable("-x cuda: this beatnik was built without the CUDA backend (build the 'cuda' preset)");
  if (const std::string why = comm::exchange_unavailable_reason(c.fft.algorithm, c.space); !why.empty())
    throw NotAvailable(why);
  configure_skeleton(o, c);
  require(!(c.skeleton && c.space == exec::Space::Device && !c.gpu_event_timers),
          "--skeleton measures its stand-ins with the device timers: it cannot run with --gpu-timers host");
  model::br_host_kernel_default();  // BEATNIK_HOST_KERNEL checked before any step (throws on a bad one)
  return c;
}

}  // namespace beatnik::app
