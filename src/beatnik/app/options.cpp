#include "beatnik/app/options.hpp"

#include <CLI/CLI.hpp>

#include "beatnik/app/cases.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/comm/halo/registry.hpp"
#include "beatnik/comm/let/registry.hpp"
#include "beatnik/comm/migrate/registry.hpp"
#include "beatnik/comm/ring/registry.hpp"
#include "beatnik/build_info.hpp"

namespace beatnik::app {

ParseOutcome parse_options(int argc, char** argv, Options& o, std::string& text) {
  CLI::App app{"beatnik: 3D Rayleigh-Taylor interface instability with the Pandya-Shkoller "
               "Z-model, built to exercise and measure HPC communication patterns.",
               "beatnik"};
  app.set_version_flag("--version", std::string("beatnik ") + build::version + " (" + build::git_revision + ")");
  app.get_formatter()->column_width(34);

  const char* P = "Problem";
  app.add_option("--profile", o.profile, "Discretisation profile: consistent (physically consistent, default) or beatnik (reproduces the reference)")->group(P);
  app.add_option("-I,--initial-condition", o.initial_condition, "Initial height: cos, sech2, random, gaussian")->group(P);
  app.add_option("-m,--magnitude", o.magnitude, "Initial amplitude m")->group(P);
  app.add_option("-p,--period", o.period, "Wavelength of cos (length units) / width parameter of sech2")->group(P);
  app.add_option("--seed", o.seed, "Seed of random/gaussian heights (default: 1e7 * period, as the reference)")->group(P);
  app.add_option("-T,--tilt", o.tilt, "Tilt the initial interface by DEG degrees about the y axis (height + tan(DEG) x; free boundaries only, docs/cases.md)")->group(P);
  std::string case_name;
  double case_scale = 1.0;
  app.add_option("--case", case_name, "Benchmark case of the paper (low-weak, low-strong, cutoff-weak, cutoff-strong): sets its options, each overridable; 'list' prints them (docs/cases.md)")->group(P);
  app.add_option("--case-scale", case_scale, "Multiply the case's -n (per rank for weak cases) by S, e.g. 0.125 on a laptop")->group(P);
  app.add_flag("--setup-only", o.setup_only, "Set the run up, print the banner and exit 0 without a step (no files written)")->group(P);
  app.add_option("-i,--input", o.input, "Start from FILE: a checkpoint (restart) or an HDF5 surface file (docs/io.md)")->group(P);

  const char* M = "Mesh and decomposition";
  app.add_option("-n,--nodes", o.nodes, "Mesh nodes per dimension (before weak scaling)")->group(M);
  app.add_option("-B,--bounding-box", o.box, "Box half-width B: the surface spans [-B, B]^2")->group(M);
  app.add_option("-b,--boundary", o.boundary, "Boundary: periodic or free")->group(M);
  app.add_option("-w,--weak-scale", o.weak_scale, "Weak-scaling factor W: n and B grow by sqrt(W)")->group(M);
  app.add_option("--ranks-grid", o.ranks_grid, "Process grid PxQ, or auto: the grid (and FFT intermediate) that moves the fewest FFT bytes (default: MPI_Dims_create)")->group(M);
  app.add_option("--placement", o.placement,
                 "Which rank takes which grid cell: linear (MPI's order), cart (MPI_Cart_create's reorder), "
                 "node-blocks (each node a compact block), random (seeded), file:PATH (lines 'rank i j')")
      ->group(M);
  app.add_option("--placement-seed", o.placement_seed, "Seed of --placement random (default 1)")->group(M);
  app.add_option("--ranks-per-node", o.ranks_per_node,
                 "Treat ranks r/K as one node for placement and on-/off-node accounting (default: the "
                 "machine's nodes, MPI_Comm_split_type)")
      ->group(M);

  const char* Y = "Physics and model";
  app.add_option("-O,--order", o.order, "Model order: low, medium, high")->group(Y);
  app.add_option("-a,--atwood", o.atwood, "Atwood number A (negative: stable stratification)")->group(Y);
  app.add_option("-g,--gravity", o.gravity, "Gravity in g's (multiplied by 9.81)")->group(Y);
  app.add_option("-M,--mu", o.mu, "Artificial viscosity, in units of sqrt(dx*dy)")->group(Y);
  app.add_option("-e,--epsilon", o.epsilon, "Birkhoff-Rott desingularisation, in units of sqrt(dx*dy)")->group(Y);
  app.add_option("--metric-power", o.metric_power, "p in u_n = -R.w/(2 det(h)^p) (default: 0.5 consistent, 1 beatnik)")->group(Y);

  const char* R = "Birkhoff-Rott solver (medium and high order)";
  app.add_option("-S,--solver", o.solver, "exact, cutoff or tree")->group(R);
  app.add_option("-c,--cutoff", o.cutoff, "Cutoff radius of the cutoff solver")->group(R);
  app.add_option("--br-images", o.br_images, "Periodic images K: (2K+1)^2 images centred on the nearest one (consistent profile; beatnik uses the fixed 3x3 block)")->group(R);
  std::string ring_help = "Ring pass of the exact solver (default overlap):\n" + comm::ring::strategy_help();
  ring_help.pop_back();  // the last line's newline: CLI11 adds its own
  app.add_option("--br-strategy", o.br_strategy, ring_help)->group(R);
  app.add_option("--spatial-partition", o.spatial_partition, "Cutoff and tree solvers' spatial cells: uniform (equal boxes) or balanced (cuts at the particles' quantiles, recomputed every call)")->group(R);
  app.add_option("--migrate-strategy", o.migrate_strategy, "How the cutoff and tree solvers' particles (and the cutoff's ghosts) and velocities travel: " + comm::migrate::strategy_names())->group(R);
  app.add_option("--br-tolerance", o.br_tolerance, "Tree solver: relative 2-norm error of the BR velocity it aims at (default 1e-6; picks theta and degree, docs/tree.md)")->group(R);
  app.add_option("--tree-theta", o.tree_theta, "Tree solver: opening parameter theta (overrides --br-tolerance; 0: every pair directly)")->group(R);
  app.add_option("--tree-degree", o.tree_degree, "Tree solver: interpolation degree (overrides --br-tolerance)")->group(R);
  app.add_option("--tree-leaf", o.tree_leaf, "Tree solver: sources per leaf cluster (default 64)")->group(R);
  app.add_option("--tree-traversal", o.tree_traversal, "Tree solver's far field: single (particle-cluster: each target batch walks the source trees), dual (cluster-cluster: target clusters too; host and -x cuda) or auto (dual on the host; with -x cuda dual from 2^18 nodes a rank on a periodic surface and from a million on a free one, else single, as measured faster) (default auto)")->group(R);
  app.add_option("--tree-edge-terms", o.tree_edge_terms, "Tree solver: on (default) interpolates the clusters cut by the periodic image window's edge through prefix proxy tables (edge terms, host and -x cuda); off splits them to leaves summed directly (for A/B measurements)")->group(R);
  app.add_option("--tree-edge-margin", o.tree_edge_margin, "Tree solver: an edge term's cluster must be separated at theta / M and its proxy set valid at M times its ratio (M from 1 to 4; default from --br-tolerance: 1.0 from 1e-6 up, 1.5 below; docs/tree.md)")->group(R);
  app.add_option("--let-strategy", o.let_strategy, "Tree solver: how the locally essential tree travels: " + comm::let::strategy_names())->group(R);
  app.add_option("--br-check", o.br_check, "Exact BR sum at K sampled nodes after every BR call; the error per step goes to the summary and results (any BR solver)")->group(R);
  app.add_option("--load-snapshot", o.load_snapshot, "Cutoff and tree solvers: steps whose full per-rank load the results file keeps (e.g. 80,340)")->delimiter(',')->group(R);

  const char* S = "Time stepping";
  app.add_option("-t,--timesteps", o.steps, "Number of steps (default: 1.2 tau of simulated time)")->group(S);
  app.add_option("-d,--dt", o.dt, "Time step (default: tau/25 low and medium, tau/50 high)")->group(S);
  app.add_option("--warmup", o.warmup, "Warm-up steps: the first K steps run but are left out of every timer, byte count and statistic (reported apart)")->group(S);
  app.add_option("--max-stretch", o.max_stretch, "Stop the run where the local mesh stretch det(h)^(1/4) exceeds this (0 = never)")->group(S);

  const char* X = "Execution";
  std::string halo_help = comm::halo::strategy_help();
  halo_help.pop_back();  // the last line's newline: CLI11 ends the entry itself
  app.add_option("-x,--exec", o.exec, "Where kernels run: host (synonyms serial, openmp, threads) or cuda")->group(X);
  app.add_option("--gpu-transport", o.gpu_transport,
                 "How halo, FFT-reshape and tree-LET bytes travel on -x cuda: staged (via pinned host memory), "
                 "cuda-aware (device buffers to MPI), nccl, or auto (nccl with one GPU per rank and "
                 "several ranks, else cuda-aware if MPI supports it, else staged)")
      ->group(X);
  app.add_option("--halo-strategy", o.halo_strategy,
                 "How the halo exchanges' messages travel over MPI (not with --gpu-transport nccl):\n" +
                     halo_help)
      ->group(X);
  app.add_option("--gpu-id", o.gpu_id,
                 "GPU every rank uses (default: BEATNIK_GPU_ID if set, else node-local rank modulo "
                 "the GPUs visible)")
      ->group(X);
  app.add_option("--ranks-per-gpu", o.ranks_per_gpu,
                 "K consecutive node-local ranks share one GPU (MPS-style studies; -x cuda): rank r uses GPU "
                 "r / K (default: node-local rank modulo the GPUs visible)")
      ->group(X);
  app.add_option("--buffer-align", o.buffer_align,
                 "Alignment in bytes of host and pinned communication buffers: a power of two from 8 to 1 GiB "
                 "(default 4096, a page; 2097152 for huge pages)")
      ->group(X);
  app.add_option("--gpu-timers", o.gpu_timers,
                 "Timer regions on -x cuda: events (a CUDA event pair per region, device time) or host "
                 "(host clock only: the time to queue the work; fewer API calls per step)")
      ->group(X);
  app.add_option("--gpu-graph", o.gpu_graph,
                 "Capture the RK step once as a CUDA graph and launch it whole every step (-x cuda, one rank, "
                 "low order): auto (where it applies, else plain launches), on (refused where it cannot "
                 "apply), off. Regions inside the step then report calls but no time")
      ->group(X);
  app.add_flag("--halo-overlap", o.halo_overlap,
               "Run the interior of the stencil kernels (and the Riesz transform) while the halo "
               "exchanges are in flight; the border after (same results, bit for bit)")
      ->group(X);

  const char* F = "Distributed FFT (low and medium order)";
  app.add_option("-H,--heffte-configuration", o.heffte, "Reference FFT configuration 0..7 (4 all-to-all, 2 pencils, 1 reorder); the options below override it")->group(F);
  app.add_option("--fft-exchange", o.fft_exchange, "Reshape exchange: alltoallv, alltoall (padded), p2p, p2p-pipelined, nccl (grouped NCCL send/receives, -x cuda only; with --gpu-transport nccl it is the one used)")->group(F);
  app.add_option("--fft-intermediate", o.fft_intermediate, "Intermediate decomposition: slab or pencil")->group(F);
  app.add_option("--fft-reorder", o.fft_reorder, "contiguous (local transpose, contiguous FFTs) or strided")->group(F);
  app.add_option("--fft-spectrum", o.fft_spectrum, "Spectral layout: intermediate (stay in the last layout) or input")->group(F);
  app.add_option("--fft-transform", o.fft_transform, "auto (default: c2c where one 2-D plan replaces its passes, i.e. one GPU or --fft-2d on; r2c otherwise), r2c (the real fields' half spectra, complex-to-real inverse) or c2c (one full complex transform)")->group(F);
  app.add_option("--fft-2d", o.fft_2d, "With the c2c transform: one 2-D transform instead of two 1-D passes when the whole array is on one rank: on, off, auto (on with -x cuda)")->group(F);
  app.add_option("--fft-2d-inverse", o.fft_2d_inverse, "Where the 2-D transform runs: the Riesz transform's inverse complex-to-real from the Hermitian half (c2r), the full complex inverse (c2c), or auto (the faster, timed at start-up)")->group(F);
  app.add_option("--fftw-plan", o.fftw_plan, "FFTW planning effort: estimate, measure, patient")->group(F);

  const char* W = "Output";
  app.add_option("-F,--write-frequency", o.write_frequency, "Mesh output (HDF5 + XDMF) every F steps and at the last step, 0 = none")->group(W);
  app.add_option("-o,--output-dir", o.output_dir, "Directory for mesh output and checkpoints (created if missing)")->group(W);
  app.add_option("--results", o.results, "Write a JSON results file")->group(W);
  app.add_option("--trace", o.trace, "Write every rank's phases and messages of every step as Chrome trace-event JSON (Perfetto; docs/traces.md)")->group(W);
  app.add_option("--trace-goal", o.trace_goal, "Write the measured steps' messages and computation as a LogGOPSim GOAL schedule (docs/traces.md)")->group(W);
  app.add_option("--bounds", o.bounds, "Bounds file of beatnik-commbench: the summary and results give each pattern's GB/s and % of achievable (docs/commbench.md)")->group(W);
  app.add_option("--write-state", o.write_state, "Write the final state as CSV (i,j,x,y,z,w1,w2)")->group(W);
  app.add_option("--write-state-every", o.write_state_every, "Also write the state every k steps (FILE gets a _stepNNNNNN suffix)")->group(W);
  app.add_option("--progress-every", o.progress_every, "Progress line every k steps (0 = none; default: automatic)")->group(W);
  app.add_option("--checkpoint-every", o.checkpoint_every, "Checkpoint every K steps and at the last step into -o DIR, 0 = none")->group(W);
  app.add_option("--checkpoint-keep", o.checkpoint_keep, "Checkpoints kept (the oldest are removed)")->group(W);
  app.add_option("--hdf5-mode", o.hdf5_mode, "collective (one shared file, parallel HDF5), blocks (one block per rank), or auto")->group(W);
  app.add_flag("--async-output", o.async_output, "Write mesh output from a copy in a background thread while the steps go on (per-rank blocks)")->group(W);

  const char* C = "Communication studies (docs/skeleton-and-dry-run.md)";
  app.add_flag("--skeleton", o.skeleton, "Run the step's communication only: every exchange as configured, the computation replaced as --skeleton-compute says")->group(C);
  app.add_option("--skeleton-compute", o.skeleton_compute, "In place of each compute phase: none, measured (spin its time measured in 2 real steps first) or a factor X (X times the measured time)")->group(C);
  app.add_flag("--dry-run", o.dry_run, "Plan every pattern's messages for --np ranks in one process and report them; runs no step")->group(C);
  app.add_option("--np", o.np, "Rank count of --dry-run (-np is accepted too)")->group(C);

  // -np P (mpiexec's spelling) is read as --np P.
  std::vector<std::string> args;
  for (int k = argc - 1; k >= 1; --k) args.push_back(std::string(argv[k]) == "-np" ? "--np" : argv[k]);
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    text = app.help();
    return ParseOutcome::Exit;
  } catch (const CLI::CallForAllHelp&) {
    text = app.help("", CLI::AppFormatMode::All);
    return ParseOutcome::Exit;
  } catch (const CLI::CallForVersion&) {
    text = app.version() + "\n";
    return ParseOutcome::Exit;
  } catch (const CLI::ParseError& e) {
    throw InputError(e.what());
  }
  if (case_name == "list") {
    text = case_list_text();
    return ParseOutcome::Exit;
  }
  if (app.count("--case-scale") > 0 && case_name.empty()) throw InputError("--case-scale needs --case NAME");
  if (!case_name.empty())
    apply_case(find_case(case_name), case_scale, o, [&](const char* flag) { return app.count(flag) > 0; });
  return ParseOutcome::Run;
}

}  // namespace beatnik::app
