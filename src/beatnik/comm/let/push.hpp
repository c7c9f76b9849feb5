#pragma once
// The push strategies' shared body: the blocks travel as an irregular exchange of one-double
// records through the migration pattern's strategy of the same name (comm/migrate/: counts by
// MPI_Alltoall then MPI_Alltoallv, or the NBX sparse exchange), accounted under "let".
#include <memory>

#include "beatnik/comm/let/let_strategy.hpp"
#include "beatnik/comm/migrate/migrator.hpp"

namespace beatnik::comm::let {

class Push final : public Strategy {
 public:
  Push(const Setup& s, const char* migrate_strategy)
      : migrator_(s.comm, exec::Space::Host, migrate_strategy, s.locality, s.stats) {}
  void exchange(const std::vector<long>& send_counts, const double* send, std::vector<long>& recv_counts,
                exec::Buffer<double>& recv) override {
    migrator_.exchange(send_counts, send, 1, recv_counts, recv, "let");
  }

 private:
  Migrator migrator_;
};

}  // namespace beatnik::comm::let
