#pragma once
// The run's files besides the results: mesh output (-F), checkpoints (--checkpoint-every),
// starting from a file (-i), and stopping cleanly on SIGTERM/SIGINT. The I/O itself lives in
// io/; this is the policy: when to write, what to copy from the simulation, and the accounting
// (timer regions io.mesh and io.checkpoint, bytes, GB/s). docs/io.md describes it for users.
#include <mpi.h>

#include <memory>
#include <thread>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "beatnik/app/simulation.hpp"
#include "beatnik/io/checkpoint.hpp"
#include "beatnik/io/mesh_output.hpp"

namespace beatnik::app {

// Exit code of a run stopped by SIGTERM or SIGINT after writing its checkpoint.
inline constexpr int kExitStopped = 4;
// A file the run had to write (results, state, mesh output, checkpoint) could not be written.
inline constexpr int kExitWriteFailed = 5;

// Validates the I/O options (every rank alike, no communication): InputError / NotAvailable.
void validate_io_options(const Options& o);

// Will anything be written into -o DIR? (mesh output, checkpoints; SIGTERM checkpoints are
// written only where the directory was prepared).
bool writes_output_dir(const Options& o);

// Rank 0: creates -o DIR if missing; returns what is wrong with it (empty when usable).
std::string prepare_output_dir(const std::string& dir);

// The options a restart must repeat (label -> value), from a run configuration.
nlohmann::json must_match(const RunConfig& c);

// -i FILE: reads what the file is and checks it against the run (collective; InputError on
// every rank, one message). Also checks that -t leaves steps to run.
io::InputFile check_input(const RunConfig& c, MPI_Comm comm);

// Loads -i FILE into the simulation (collective; InputError on every rank on a bad file).
void load_input(Simulation& sim, const io::InputFile& in);

// SIGTERM / SIGINT set a flag; a second signal ends the process at once.
void install_stop_signals();
// Collective: did any rank receive a stop signal? Returns its number (0: none).
int stop_requested(MPI_Comm comm);

class RunIo {
 public:
  RunIo(Simulation& sim, const Options& o, std::vector<std::string> argv);

  // Mesh output of the initial state (fresh runs with -F > 0).
  void at_start();
  // After each step: mesh output and checkpoint when due (`last`: the run's final step).
  void after_step(bool last);
  // Stopped by a signal: a checkpoint of the current step (if not just written).
  std::string at_stop();
  // The run failed: a checkpoint (..._failed.h5, when checkpoints are on) and mesh output
  // (when -F is on) of the failed step. Never throws; returns what was written.
  std::vector<std::string> at_failure();

  // --async-output: waits for the mesh output still being written, and commits it. Called
  // before checkpoints, on failure or stop, and by the program after the last step. Collective.
  void finish();
  ~RunIo();

  // Seconds this rank spent in I/O (excluded from the figure of merit).
  double seconds() const { return mesh_.seconds + ckpt_.seconds; }
  // Collective: the "io" section of the results (complete on rank 0).
  nlohmann::json report() const;
  std::vector<std::string> written;  // paths, rank 0's view

 private:
  struct Account {
    long files = 0, bytes = 0;
    double seconds = 0;     // on the stepping thread
    double background = 0;  // in the writer thread (--async-output)
  };
  // The mesh output a background thread is writing (--async-output).
  struct Pending {
    std::thread writer;
    io::MeshFrame frame;                   // step, time, dt here; the fields filled by the writer
    const double* state = nullptr;         // raw copies of the fields' planes (ghosts included),
    const double* rate = nullptr;          // in snap_state_ / snap_rate_
    GhostedLayout state_layout, rate_layout;
    bool ok = true;
    std::string why;
    double seconds = 0;
  };
  std::unique_ptr<Pending> pending_;
  std::vector<double> snap_state_, snap_rate_;  // reused copies (no page faults per output)
  void write_mesh();
  std::string write_checkpoint(bool failed);
  io::MeshFrame frame(bool with_velocity) const;

  Simulation& sim_;
  Options o_;
  std::vector<std::string> argv_;
  io::Hdf5Mode mode_ = io::Hdf5Mode::Blocks;
  io::BlockBox box_;
  std::unique_ptr<io::MeshOutput> mesh_out_;
  long last_mesh_ = -1, last_ckpt_ = -1;
  std::vector<std::string> kept_;  // checkpoints of this run, oldest first
  Account mesh_, ckpt_;
};

// Rank 0 prints the Output block of the summary from the results' "io" section.
void print_io_summary(const nlohmann::json& io);

}  // namespace beatnik::app
