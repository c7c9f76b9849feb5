#pragma once
// The interface of a migration strategy (comm/migrate/migrator.hpp), one file per strategy
// beside this one, listed in registry.cpp. A strategy decides only how ranks talk: it moves
// records between the buffers MPI may read and write. The Migrator owns everything else
// (memory spaces and transports, the self copy, validation, byte accounting), so every
// strategy describes the same pattern and only its messages differ.
#include <mpi.h>

#include <climits>
#include <functional>
#include <string>
#include <vector>

#include "beatnik/base/error.hpp"
#include "beatnik/exec/space.hpp"

namespace beatnik::comm::migrate {

// What a strategy is built with (collectively, in the Migrator's constructor).
struct Setup {
  MPI_Comm comm;          // the Migrator's communicator; a strategy may duplicate it
  exec::Space mpi_space;  // where the buffers handed to MPI live (Device only for cuda-aware)
};

// One record of an exchange: `bytes` bytes travelling as one element of `type`, so MPI's int
// counts and displacements count records, not doubles.
struct Record {
  MPI_Datatype type;
  long bytes;
};

// Called by a strategy once it knows recv_counts (records from every rank, self included):
// returns where MPI writes the received records, grouped by source in rank order.
using PlaceFn = std::function<char*(const std::vector<long>& recv_counts)>;

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Collective over the communicator. `send` holds the records grouped by destination in rank
  // order. Sets recv_counts (size P; the self entry equal to send_counts' self entry), asks
  // `place` for the receive buffer once, and fills it except for the self block, which the
  // Migrator copies. `pattern` names the exchange (strategies that cache per exchange use it).
  virtual void exchange(const std::vector<long>& send_counts, const char* send, Record rec,
                        std::vector<long>& recv_counts, const PlaceFn& place,
                        const std::string& pattern) = 0;
  // The same when every rank knows recv_counts already (no count discovery).
  virtual void exchange_known(const std::vector<long>& send_counts, const char* send, Record rec,
                              const std::vector<long>& recv_counts, char* recv,
                              const std::string& pattern) = 0;
  // Collective set-ups performed so far (graph communicators built); 0 for strategies without.
  virtual long setups() const { return 0; }
};

// MPI counts and displacements are int: `n` as an int, or an Error naming what overflowed
// (never a silently truncated count).
inline int int_count(long n, const char* what) {
  if (n < 0 || n > INT_MAX)
    throw Error(std::string("migration: ") + what + " of " + std::to_string(n) +
                " records does not fit an MPI int count; use more ranks or fewer records per rank");
  return static_cast<int>(n);
}

// First record of each rank's block: offsets[r] = sum of counts[q] for q < r.
inline std::vector<long> block_offsets(const std::vector<long>& counts) {
  std::vector<long> off(counts.size(), 0);
  long sum = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    off[r] = sum;
    sum += counts[r];
  }
  return off;
}

// Frees a communicator this strategy made, unless MPI is already finalized.
inline void free_comm(MPI_Comm& c) noexcept {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (c != MPI_COMM_NULL && !finalized) MPI_Comm_free(&c);
  c = MPI_COMM_NULL;
}

}  // namespace beatnik::comm::migrate
