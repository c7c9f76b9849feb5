#pragma once
// From the user's options to a validated, fully derived run configuration (MODEL.md §2.2,
// DECISIONS.md). Pure function of (options, rank count): every rank reaches the same verdict
// without communicating, so a bad input never leaves a rank waiting.
#include <array>
#include <string>
#include <vector>

#include "beatnik/app/options.hpp"
#include "beatnik/comm/placement/placement.hpp"
#include "beatnik/exec/space.hpp"
#include "beatnik/fft/fft_options.hpp"
#include "beatnik/mesh/geometry.hpp"
#include "beatnik/model/initial_conditions.hpp"
#include "beatnik/model/parameters.hpp"

namespace beatnik::app {

enum class Profile { Consistent, Beatnik };

struct RunConfig {
  Options options;  // as given
  Profile profile = Profile::Consistent;
  int weak_scale = 1;  // -w, or the rank count for a weak-scaled --case
  int nodes = 0;       // n after weak scaling
  double half_width = 0;  // B after weak scaling
  mesh::Geometry geometry;
  std::array<int, 2> procs{1, 1};
  std::string grid_choice;  // --ranks-grid auto: what it chose and why (empty otherwise)
  comm::placement::Options placement;  // the file's map already read and checked
  int ranks_per_node = 0;              // 0: the machine's nodes
  model::ModelParameters model;
  model::InitialCondition initial;
  double tau = 0, dt = 0;
  long steps = 0;
  long warmup = 0;  // first steps of this run left out of every statistic (--warmup)
  exec::Space space = exec::Space::Host;
  std::string gpu_transport = "auto";  // staged | cuda-aware | nccl | auto (resolved at run time)
  int gpu_id = -1;                     // -1: by node-local rank (or BEATNIK_GPU_ID)
  int ranks_per_gpu = 0;               // --ranks-per-gpu K: K node-local ranks share a GPU (0: round robin)
  long buffer_align = 4096;            // bytes; every host buffer, communication buffers included
  bool gpu_event_timers = true;        // --gpu-timers events (false: host)
  std::string gpu_graph = "auto";     // --gpu-graph auto|on|off (resolved by Simulation: app/step_graph.hpp)
  fft::FftOptions fft;
  std::vector<std::string> warnings;
  // --skeleton (app/skeleton.hpp): communication only; the compute phases stand in for
  // skeleton_scale x their measured time (0: nothing, no measurement).
  bool skeleton = false;
  double skeleton_scale = 0;
};

// Throws InputError (bad value) or NotAvailable (valid request this build cannot do yet).
RunConfig make_run_config(const Options& options, int ranks);

// --tree-traversal: whether `traversal` (auto, single or dual, already checked) runs the dual
// traversal in `space` for a surface (periodic in both dimensions or not) of `nodes_per_rank`
// mesh nodes a rank (auto's rule: problem.cpp).
bool tree_dual_traversal(const std::string& traversal, exec::Space space, bool periodic, long nodes_per_rank);

// Geometry of the surface mesh for -n nodes (after weak scaling) and half-width B.
mesh::Geometry make_geometry(Profile profile, bool periodic, int nodes, double half_width);

const char* to_string(Profile p);

}  // namespace beatnik::app
