#include "beatnik/app/trace_output.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <climits>
#include <cstring>
#include <map>
#include <sstream>

#include "beatnik/app/simulation.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/io/trace_files.hpp"

namespace beatnik::app {

std::string write_traces(const Simulation& sim, const std::string& json_path, const std::string& goal_path) {
  if (json_path.empty() && goal_path.empty()) return {};
  const TraceRecorder* rec = sim.trace();
  if (!rec) return "internal error: tracing was requested but never recorded";
  const MPI_Comm comm = sim.context().comm();
  const int rank = sim.context().rank(), size = sim.context().size();

  // This rank's events, times from the common origin; its name table as one '\n'-joined text.
  std::vector<TraceRecorder::Event> mine = rec->events();
  for (auto& e : mine) {
    e.t0 -= sim.trace_origin();
    e.t1 -= sim.trace_origin();
  }
  std::string names;
  for (const std::string& n : rec->names()) names += n + "\n";
  long counts[3] = {long(mine.size() * sizeof(TraceRecorder::Event)), long(names.size()), rec->dropped()};
  std::vector<long> all(3 * size_t(size));
  MPI_Gather(counts, 3, MPI_LONG, all.data(), 3, MPI_LONG, 0, comm);
  std::vector<int> ev_bytes(size), ev_displ(size), nm_bytes(size), nm_displ(size);
  long ev_total = 0, nm_total = 0, dropped = 0;
  bool too_big = false;
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      too_big |= ev_total + all[3 * r] > INT_MAX || nm_total + all[3 * r + 1] > INT_MAX;
      ev_displ[r] = int(ev_total);
      nm_displ[r] = int(nm_total);
      ev_bytes[r] = int(all[3 * r]);
      nm_bytes[r] = int(all[3 * r + 1]);
      ev_total += all[3 * r];
      nm_total += all[3 * r + 1];
      dropped += all[3 * r + 2];
    }
  }
  int big = too_big ? 1 : 0;
  MPI_Bcast(&big, 1, MPI_INT, 0, comm);
  if (big) return "--trace: the trace is larger than 2 GiB in all; trace fewer steps (-t)";
  std::vector<char> ev_all(rank == 0 ? size_t(ev_total) : 0), nm_all(rank == 0 ? size_t(nm_total) : 0);
  MPI_Gatherv(mine.data(), int(counts[0]), MPI_BYTE, ev_all.data(), ev_bytes.data(), ev_displ.data(), MPI_BYTE, 0, comm);
  MPI_Gatherv(names.data(), int(counts[1]), MPI_CHAR, nm_all.data(), nm_bytes.data(), nm_displ.data(), MPI_CHAR, 0, comm);

  std::string error;
  if (rank == 0) {
    io::GatheredTrace t;
    t.first_measured_step = sim.first_step() + sim.config().warmup + 1;
    t.dropped = dropped;
    t.max_events_per_rank = rec->max_events();
    t.ranks.resize(size);
    std::map<std::string, int> global;
    for (int r = 0; r < size; ++r) {
      // This rank's names -> the one table.
      std::vector<int> remap;
      std::istringstream in(std::string(nm_all.data() + nm_displ[r], size_t(nm_bytes[r])));
      for (std::string line; std::getline(in, line);) {
        auto [it, fresh] = global.emplace(line, int(t.names.size()));
        if (fresh) t.names.push_back(line);
        remap.push_back(it->second);
      }
      auto& dst = t.ranks[r];
      dst.node = sim.context().node_of_rank()[r];
      dst.events.resize(size_t(ev_bytes[r]) / sizeof(TraceRecorder::Event));
      std::memcpy(dst.events.data(), ev_all.data() + ev_displ[r], size_t(ev_bytes[r]));
      for (auto& e : dst.events) e.name = remap.at(size_t(e.name));
    }
    long unmatched = 0;
    const auto matched = io::match_messages(t, &unmatched);
    try {
      if (!json_path.empty()) {
        io::write_chrome_trace(json_path, t, matched);
        fmt::print("trace written to {} (open it in https://ui.perfetto.dev)\n", json_path);
      }
      if (!goal_path.empty()) {
        io::write_goal(goal_path, t, matched);
        fmt::print("GOAL schedule written to {}\n", goal_path);
      }
    } catch (const WriteError& e) {
      error = e.what();
    }
    if (dropped > 0)
      fmt::print(stderr, "beatnik: warning: --trace kept {} events per rank; {} more were dropped\n",
                 rec->max_events(), dropped);
    if (unmatched > 0)
      fmt::print(stderr, "beatnik: warning: --trace: {} messages found no partner (left out of the GOAL file)\n",
                 unmatched);
  }
  int len = static_cast<int>(error.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, comm);
  error.resize(size_t(len));
  MPI_Bcast(error.data(), len, MPI_CHAR, 0, comm);
  return error;
}

}  // namespace beatnik::app
