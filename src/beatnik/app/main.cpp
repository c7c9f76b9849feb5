// beatnik (also installed as rocketrig): parse, validate, run, report.
// Exit codes: 0 success, 2 bad input or unavailable feature, 3 the simulation failed,
// 4 stopped by SIGTERM/SIGINT after writing a checkpoint, 5 a file could not be written,
// 1 an unexpected internal error.
#include <fmt/format.h>
#include <mpi.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "beatnik/app/bounds_report.hpp"
#include "beatnik/app/dry_run.hpp"
#include "beatnik/app/mpi_main.hpp"
#include "beatnik/app/options.hpp"
#include "beatnik/app/problem.hpp"
#include "beatnik/app/report.hpp"
#include "beatnik/app/run_io.hpp"
#include "beatnik/app/simulation.hpp"
#include "beatnik/app/trace_output.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/base/region_delay.hpp"
#include "beatnik/io/results_json.hpp"
#include "beatnik/io/state_csv.hpp"

namespace {

using namespace beatnik;

// Can a file be created at `path`? Checked on rank 0 before anything is written.
std::string unwritable(const std::string& path, const char* what) {
  if (path.empty()) return {};
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  struct stat st{};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return fmt::format("{} {}: directory '{}' does not exist", what, path, dir);
  if (access(dir.c_str(), W_OK) != 0) return fmt::format("{} {}: directory '{}' is not writable", what, path, dir);
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return fmt::format("{} {}: is a directory", what, path);
  return {};
}

std::string numbered(const std::string& path, long step) {
  const auto dot = path.find_last_of('.');
  const auto slash = path.find_last_of('/');
  const bool ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  const std::string tag = fmt::format("_step{:06d}", step);
  return ext ? path.substr(0, dot) + tag + path.substr(dot) : path + tag;
}

int run(int argc, char** argv, int rank, int size) {
  auto say_error = [&](const std::string& msg) {
    if (rank == 0) fmt::print(stderr, "beatnik: error: {}\n", msg);
  };

  // 1. Options and configuration: deterministic on every rank, no communication.
  app::Options opts;
  app::RunConfig cfg;
  std::function<double(const std::string&)> slowdown;  // test hook (app/bounds_report.hpp)
  try {
    std::string text;
    if (app::parse_options(argc, argv, opts, text) == app::ParseOutcome::Exit) {
      if (rank == 0) fmt::print("{}", text);
      return 0;
    }
    if (opts.np && !opts.dry_run) throw InputError("--np is the rank count of --dry-run; add --dry-run (a run's ranks are mpiexec's)");
    if (opts.dry_run) {  // plans for --np ranks in this one process; runs no step
      if (const std::string why = unwritable(opts.results, "--results"); !why.empty() && size == 1) {
        say_error(why);
        return 2;
      }
      return app::run_dry_run(opts, size, std::vector<std::string>(argv, argv + argc));
    }
    cfg = app::make_run_config(opts, size);
    app::validate_io_options(opts);
    slowdown = app::test_slowdown_from_environment();
  } catch (const NotAvailable& e) {
    say_error(e.what());
    return 2;
  } catch (const InputError& e) {
    say_error(std::string(e.what()) + "\nRun 'beatnik --help' for the options.");
    return 2;
  }

  // 2. Output paths: rank 0 looks, everyone hears the verdict.
  std::string bad_path;
  if (rank == 0 && !opts.setup_only) {  // --setup-only writes nothing
    if (app::writes_output_dir(opts)) bad_path = app::prepare_output_dir(opts.output_dir);
    if (bad_path.empty()) bad_path = unwritable(opts.results, "--results");
    if (bad_path.empty()) bad_path = unwritable(opts.write_state, "--write-state");
    if (bad_path.empty()) bad_path = unwritable(opts.trace, "--trace");
    if (bad_path.empty()) bad_path = unwritable(opts.trace_goal, "--trace-goal");
    if (bad_path.empty() && !opts.bounds.empty()) bad_path = app::bounds_file_problem(opts.bounds);
  }
  int bad = bad_path.empty() ? 0 : 1;
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (bad) {
    say_error(bad_path);
    return 2;
  }

  // -i FILE: what it holds and whether it fits this run, agreed before any other collective work.
  io::InputFile input;
  if (opts.input) {
    try {
      input = app::check_input(cfg, MPI_COMM_WORLD);
    } catch (const InputError& e) {
      say_error(e.what());
      return 2;
    }
  }

  std::vector<std::string> args(argv, argv + argc);
  app::Simulation sim(MPI_COMM_WORLD, cfg);
  if (slowdown) region_delay_hook = slowdown;
  if (opts.input) {
    try {
      app::load_input(sim, input);
    } catch (const InputError& e) {
      say_error(e.what());
      return 2;
    }
  }
  app::print_banner(sim);
  if (rank == 0 && opts.input)
    fmt::print("  input       {} ({}), starting at step {}\n", *opts.input,
               input.checkpoint ? "checkpoint" : "surface file", sim.steps_done());
  if (opts.setup_only) return 0;  // --setup-only: the banner is the product
  app::RunIo files(sim, opts, args);
  app::install_stop_signals();

  // 3. Time stepping with progress and health checks.
  const long steps = cfg.steps;
  const long every = opts.progress_every >= 0 ? opts.progress_every : (steps <= 50 ? 1 : (steps + 49) / 50);
  app::RunOutcome outcome;
  const double t0 = wall_seconds();
  // The figure of merit's clock starts after the --warmup steps (and their output).
  double measure_t0 = t0, measure_io0 = 0;
  int code = 0;
  int stop_signal = 0;
  try {
    files.at_start();
    while (sim.steps_done() < steps) {
      sim.step();
      const long s = sim.steps_done();
      files.after_step(s == steps);
      if (cfg.warmup > 0 && sim.steps_this_run() == cfg.warmup) {
        measure_t0 = wall_seconds();
        measure_io0 = files.seconds();
      }
      if (opts.write_state_every > 0 && s % opts.write_state_every == 0 && s < steps)
        io::write_state_csv(numbered(opts.write_state, s), sim.mesh(), sim.state());
      if (rank == 0 && every > 0 && (s % every == 0 || s == steps)) {
        const double el = wall_seconds() - t0;
        const long done = sim.steps_this_run();
        fmt::print("step {:>6}/{}  t = {:.6g}{}  {:.3e} s/step  elapsed {:.2f} s  left {:.2f} s\n", s, steps,
                   sim.time(), cfg.tau > 0 ? fmt::format(" ({:.3f} tau)", sim.time() / cfg.tau) : "", el / done, el,
                   el / done * (steps - s));
        std::fflush(stdout);
      }
      if (s < steps && (stop_signal = app::stop_requested(MPI_COMM_WORLD)) != 0) {
        const std::string ck = files.at_stop();
        outcome.completed = false;
        outcome.message = fmt::format("stopped by signal {} after step {}; checkpoint {} (restart with -i {})",
                                      stop_signal, s, ck, ck);
        if (rank == 0) fmt::print(stderr, "beatnik: {}\n", outcome.message);
        code = app::kExitStopped;
        break;
      }
    }
    files.finish();
  } catch (const SimulationError& e) {
    outcome.completed = false;
    outcome.message = e.what();
    say_error(outcome.message);
    code = 3;
    for (const auto& f : files.at_failure())
      if (rank == 0) fmt::print(stderr, "beatnik: wrote {}\n", f);
  } catch (const WriteError& e) {  // an output or checkpoint file could not be written (agreed on all ranks)
    outcome.completed = false;
    outcome.message = e.what();
    say_error(outcome.message);
    code = app::kExitWriteFailed;
  }
  // Output is not part of the figure of merit.
  double wall = wall_seconds() - measure_t0 - (files.seconds() - measure_io0);
  MPI_Allreduce(MPI_IN_PLACE, &wall, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  outcome.wall_seconds = wall;

  // 4. What the run produced, also after a failure.
  if (!opts.write_state.empty()) {
    try {
      io::write_state_csv(opts.write_state, sim.mesh(), sim.state());
    } catch (const WriteError& e) {  // agreed on all ranks
      say_error(e.what());
      code = app::kExitWriteFailed;
    }
  }
  if (const std::string e = app::write_traces(sim, opts.trace, opts.trace_goal); !e.empty()) {
    say_error(e);
    code = app::kExitWriteFailed;
  }
  auto doc = app::results_document(sim, outcome, args);
  const auto io_report = files.report();
  // The reports are complete on grid rank 0, which --placement may give to any rank.
  const bool writer = sim.mesh().grid().rank() == 0;
  if (writer) {
    doc["io"] = io_report;
    doc["steps"]["first"] = sim.first_step();
    if (!opts.bounds.empty()) app::add_bounds(doc, cfg, size, opts.bounds);
    if (opts.input) doc["input"] = {{"file", *opts.input}, {"kind", input.checkpoint ? "checkpoint" : "surface"}};
    if (code == app::kExitStopped) doc["status"] = "stopped";
    if (outcome.completed && !cfg.skeleton && doc["checksums"]["nonfinite_values"].get<long>() > 0) code = 3;
    bool written = false;
    if (!opts.results.empty()) {
      try {
        io::write_json_file(opts.results, doc);
        written = true;
      } catch (const WriteError& e) {
        fmt::print(stderr, "beatnik: error: {}\n", e.what());
        code = app::kExitWriteFailed;
      }
    }
    app::print_summary(doc);
    app::print_io_summary(doc["io"]);
    if (written) fmt::print("results written to {}\n", opts.results);
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, sim.mesh().grid().comm());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  return beatnik::app::mpi_main(argc, argv, "beatnik",
                                [&](int rank, int size) { return run(argc, argv, rank, size); });
}
