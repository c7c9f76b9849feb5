#pragma once
// The communication side of --trace: patterns report each message they post with the peer as a
// rank of their own communicator; this turns it into a rank of the run's communicator (the
// translation of each communicator is asked of MPI once, locally, and kept) and hands it to the
// TraceRecorder. A pattern reaches it through its CommStats (CommStats::trace(), null when
// tracing is off, so the patterns pay one pointer test).
#include <mpi.h>

#include <map>
#include <string>
#include <vector>

#include "beatnik/base/trace.hpp"

namespace beatnik::comm {

class MessageTrace {
 public:
  MessageTrace(TraceRecorder& recorder, MPI_Comm world) : recorder_(recorder), world_(world) {}

  // `peer` is a rank of `comm`; `owner` the pattern object (its open messages end together).
  void send(const std::string& pattern, const void* owner, MPI_Comm comm, int peer, long bytes, double t0) {
    recorder_.message(TraceRecorder::Send, pattern, owner, world_rank(comm, peer), bytes, t0);
  }
  void recv(const std::string& pattern, const void* owner, MPI_Comm comm, int peer, long bytes, double t0) {
    recorder_.message(TraceRecorder::Recv, pattern, owner, world_rank(comm, peer), bytes, t0);
  }
  // A one-sided read of `bytes` from `peer` (a rank of `comm`), posted at t0 and complete at t1.
  void get(const std::string& pattern, MPI_Comm comm, int peer, long bytes, double t0, double t1) {
    recorder_.transfer(TraceRecorder::Get, pattern, world_rank(comm, peer), bytes, t0, t1);
  }
  // The exchange `owner` posted has completed on this rank.
  void complete(const std::string& pattern, const void* owner, double t1) { recorder_.complete(pattern, owner, t1); }

 private:
  int world_rank(MPI_Comm comm, int peer);
  TraceRecorder& recorder_;
  MPI_Comm world_;
  // Keyed by handle: the patterns' communicators live as long as the run.
  std::map<MPI_Comm, std::vector<int>> ranks_;
};

}  // namespace beatnik::comm
