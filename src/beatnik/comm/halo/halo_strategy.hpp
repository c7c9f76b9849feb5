#pragma once
// The interface of a halo-exchange strategy (comm/halo_exchange.hpp), one file per strategy
// beside this one, listed in registry.cpp. A strategy decides only how ranks talk: it moves
// the packed messages of the send buffer into the receive buffer. HaloExchange owns everything
// else (packing, self copies, transport staging, unpacking, accounting, timing), so every
// strategy moves the same bytes and only its MPI calls differ.
#include <mpi.h>

#include <climits>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "beatnik/base/error.hpp"

namespace beatnik::comm::halo {

// One message to (from) another rank. Messages a rank sends itself never reach a strategy.
struct Link {
  int peer;     // rank in Setup::comm
  int tag;      // the sender's direction (comm/cart_grid.hpp direction_index): on grids of
                // extent 1 or 2 a neighbour repeats, and only this tells its messages apart
  long offset;  // first double of the message in the send (receive) buffer
  long count;   // doubles
};

// What a strategy is built with (collectively, in HaloExchange's constructor).
struct Setup {
  MPI_Comm comm;            // the Cartesian communicator; a strategy may duplicate it
  std::vector<Link> sends;  // in direction order
  std::vector<Link> recvs;  // in direction order
  // Where MPI reads and writes: the exchange's own buffers or the transport's pinned staging
  // copies, fixed for the exchange's lifetime, so requests and windows are made once.
  const double* send;
  double* recv;
  long send_size, recv_size;  // doubles in each buffer (0 allowed)
  std::string name;           // the exchange's name, for messages
};

// Every rank of Setup::comm calls start() and finish() for every exchange, in the same order
// (neighbourhood collectives and window epochs need all of them).
class Strategy {
 public:
  virtual ~Strategy() = default;
  // The send buffer holds this exchange's messages: post their transfer.
  virtual void start() = 0;
  // Complete it: every receive link's doubles are in the receive buffer, and the send buffer
  // may be packed again.
  virtual void finish() = 0;

  // Device-direct strategies only (StrategyEntry::device_direct: Setup's buffers are device
  // memory, never staged). The pack kernel writes send link s's message straight to
  // remote_target(s) on the peer's GPU when that is not null; before_pack() runs before it (the
  // peer must have read the previous exchange's data), after_unpack() after the unpack kernel
  // has been queued (tells the senders the receive buffer may be written again).
  virtual double* remote_target(int /*send_link*/) const { return nullptr; }
  virtual void before_pack() {}
  virtual void after_unpack() {}
};

// MPI counts are int: `n` as an int, or an Error naming the exchange (never a truncated count).
inline int int_count(long n, const Setup& s) {
  if (n < 0 || n > INT_MAX)
    throw Error("halo exchange '" + s.name + "': a message of " + std::to_string(n) +
                " doubles does not fit an MPI int count; use more ranks");
  return static_cast<int>(n);
}

// May a destructor free the MPI objects a strategy made? Not after MPI_Finalize (they are gone),
// and not while an exception unwinds this rank alone: a collective free (MPI_Win_free) would
// wait there for ranks that never come, where the program should reach MPI_Abort instead.
inline bool mpi_alive() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return !finalized && std::uncaught_exceptions() == 0;
}

}  // namespace beatnik::comm::halo
