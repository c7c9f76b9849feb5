#pragma once
// Command-line options, exactly as the user typed them (validation and derived values live in
// problem.hpp). Short options keep the reference's meaning (DECISIONS.md).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace beatnik::app {

struct Options {
  // Problem
  std::string profile = "consistent";
  std::string initial_condition = "cos";
  double magnitude = 0.05;
  double period = 1.0;
  std::optional<std::uint64_t> seed;
  std::optional<double> tilt;
  std::optional<std::string> input;
  // Mesh and decomposition
  int nodes = 128;
  double box = 1.0;
  std::string boundary = "periodic";
  int weak_scale = 1;
  std::string ranks_grid;
  std::string placement = "linear";
  std::optional<std::uint64_t> placement_seed;
  std::optional<int> ranks_per_node;
  // Physics and model
  std::string order = "low";
  double atwood = 0.5;
  double gravity = 25.0;
  double mu = 1.0;
  double epsilon = 0.25;
  std::optional<double> metric_power;
  // Birkhoff–Rott
  std::string solver = "exact";
  double cutoff = 0.5;
  int br_images = 1;
  std::string br_strategy = "overlap";
  std::string spatial_partition = "uniform";
  std::string migrate_strategy = "alltoallv";
  double br_tolerance = 1e-6;
  std::optional<double> tree_theta;
  std::optional<int> tree_degree;
  std::optional<int> tree_leaf;
  std::string let_strategy = "alltoallv";
  std::string tree_traversal = "auto";
  std::string tree_edge_terms = "on";
  std::optional<double> tree_edge_margin;
  long br_check = 0;
  std::vector<long> load_snapshot;
  // Time stepping
  std::optional<long> steps;
  long warmup = 0;
  double max_stretch = 100.0;
  std::optional<double> dt;
  // Execution
  std::string exec = "host";
  std::string gpu_transport = "auto";
  std::string halo_strategy = "isend";
  std::optional<int> gpu_id;
  std::optional<int> ranks_per_gpu;
  long buffer_align = 4096;
  bool halo_overlap = false;
  std::string gpu_timers = "events";  // --gpu-timers events|host (docs/gpu-small.md)
  std::string gpu_graph = "auto";     // --gpu-graph auto|on|off (docs/gpu-small.md)
  // FFT
  int heffte = 6;
  std::optional<std::string> fft_exchange, fft_intermediate, fft_reorder, fft_spectrum;
  std::string fftw_plan = "measure";
  std::string fft_transform = "auto";  // --fft-transform auto|r2c|c2c (docs/fft.md)
  std::string fft_2d = "auto";  // --fft-2d auto|on|off (docs/gpu-small.md)
  std::string fft_2d_inverse = "auto";  // --fft-2d-inverse auto|c2r|c2c (docs/gpu-small.md)
  // Output
  int write_frequency = 0;
  std::string output_dir = ".";
  std::string results;
  std::string trace;       // --trace FILE: Chrome trace-event JSON (docs/traces.md)
  std::string trace_goal;  // --trace-goal FILE: LogGOPSim GOAL schedule
  std::string bounds;      // --bounds FILE: beatnik-commbench's bounds (docs/commbench.md)
  std::string write_state;
  long write_state_every = 0;
  long progress_every = -1;  // -1: automatic
  // Checkpoints and mesh-output files (io/, app/run_io.hpp)
  long checkpoint_every = 0;
  int checkpoint_keep = 2;
  std::string hdf5_mode = "auto";
  bool async_output = false;
  // Benchmark case (--case, app/cases.hpp): the case's values are already in the fields above.
  std::string case_name;                    // empty: no case
  double case_scale = 1.0;                  // --case-scale
  std::vector<std::string> case_overrides;  // case options the user gave explicitly
  bool weak_scale_by_ranks = false;         // a weak-scaled case: -w is the rank count
  bool setup_only = false;                  // --setup-only: set up, print the banner, exit 0
  // Communication studies (docs/skeleton-and-dry-run.md)
  bool skeleton = false;
  std::string skeleton_compute = "none";
  bool dry_run = false;
  std::optional<int> np;
};

enum class ParseOutcome { Run, Exit };

// Parses argv. On --help / --version fills `text` and returns Exit; on a bad option throws
// InputError with CLI11's message. Identical on every rank (no I/O, no MPI).
ParseOutcome parse_options(int argc, char** argv, Options& out, std::string& text);

}  // namespace beatnik::app
