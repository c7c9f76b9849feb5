#include "beatnik/app/options.hpp"

#include <CLI/CLI.hpp>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/halo/registry.hpp"
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
  app.add_option("-T,--tilt", o.tilt, "Tilt of the initial interface (not available yet)")->group(P);
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
  app.add_option("-S,--solver", o.solver, "exact or cutoff")->group(R);
  app.add_option("-c,--cutoff", o.cutoff, "Cutoff radius of the cutoff solver")->group(R);
  app.add_option("--br-images", o.br_images, "Periodic images K: (2K+1)^2 images centred on the nearest one (consistent profile; beatnik uses the fixed 3x3 block)")->group(R);
  std::string ring_help = "Ring pass of the exact solver (default overlap):\n" + comm::ring::strategy_help();
  ring_help.pop_back();  // the last line's newline: CLI11 adds its own
  app.add_option("--br-strategy", o.br_strategy, ring_help)->group(R);
  app.add_option("--spatial-partition", o.spatial_partition, "Cutoff solver's spatial cells: uniform (equal boxes) or balanced (cuts at the particles' quantiles, recomputed every call)")->group(R);
  app.add_option("--migrate-strategy", o.migrate_strategy, "How the cutoff solver's particles, ghosts and velocities travel: " + comm::migrate::strategy_names())->group(R);
  app.add_option("--load-snapshot", o.load_snapshot, "Cutoff solver: steps whose full per-rank load the results file keeps (e.g. 80,340)")->delimiter(',')->group(R);

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
                 "How halo and FFT-reshape bytes travel on -x cuda: staged (via pinned host memory), "
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
  app.add_option("--fftw-plan", o.fftw_plan, "FFTW planning effort: estimate, measure, patient")->group(F);

  const char* W = "Output";
  app.add_option("-F,--write-frequency", o.write_frequency, "Mesh output (HDF5 + XDMF) every F steps and at the last step, 0 = none")->group(W);
  app.add_option("-o,--output-dir", o.output_dir, "Directory for mesh output and checkpoints (created if missing)")->group(W);
  app.add_option("--results", o.results, "Write a JSON results file")->group(W);
  app.add_option("--write-state", o.write_state, "Write the final state as CSV (i,j,x,y,z,w1,w2)")->group(W);
  app.add_option("--write-state-every", o.write_state_every, "Also write the state every k steps (FILE gets a _stepNNNNNN suffix)")->group(W);
  app.add_option("--progress-every", o.progress_every, "Progress line every k steps (0 = none; default: automatic)")->group(W);
  app.add_option("--checkpoint-every", o.checkpoint_every, "Checkpoint every K steps and at the last step into -o DIR, 0 = none")->group(W);
  app.add_option("--checkpoint-keep", o.checkpoint_keep, "Checkpoints kept (the oldest are removed)")->group(W);
  app.add_option("--hdf5-mode", o.hdf5_mode, "collective (one shared file, parallel HDF5), blocks (one block per rank), or auto")->group(W);
  app.add_flag("--async-output", o.async_output, "Write mesh output from a copy in a background thread while the steps go on (per-rank blocks)")->group(W);

  try {
    app.parse(argc, argv);
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
  return ParseOutcome::Run;
}

}  // namespace beatnik::app
