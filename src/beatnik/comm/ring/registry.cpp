#include "beatnik/comm/ring/registry.hpp"

#include "beatnik/base/error.hpp"
#include "beatnik/comm/strategy_registry.hpp"

namespace beatnik::comm::ring {

// The factories, one per strategy file.
std::unique_ptr<Strategy> make_blocking(const Setup& s);
std::unique_ptr<Strategy> make_overlap(const Setup& s);
std::unique_ptr<Strategy> make_persistent(const Setup& s);
std::unique_ptr<Strategy> make_rma(const Setup& s);

namespace {

std::string any_transport(TransportKind) { return ""; }

// Persistent requests are MPI objects; NCCL has no counterpart (its sends are queued afresh on
// a stream every round).
std::string mpi_transports(TransportKind t) {
  if (t != TransportKind::Nccl) return "";
  return "persistent requests are MPI's and NCCL does not go through MPI (use --gpu-transport staged "
         "or cuda-aware, or --br-strategy overlap or blocking)";
}

// One-sided puts into a window over host memory: MPI windows over device memory are not
// portable across MPI libraries, and NCCL has no one-sided put.
std::string host_windows(TransportKind t) {
  if (t == TransportKind::Host || t == TransportKind::Staged) return "";
  return "its window covers host memory only (use --gpu-transport staged, or --br-strategy overlap, "
         "blocking or persistent)";
}

}  // namespace

const std::vector<StrategyEntry>& registry() {
  static const std::vector<StrategyEntry> all = {
      {"blocking", "one MPI_Sendrecv per round after the round's computation (as the reference)",
       any_transport, make_blocking},
      {"overlap", "MPI_Irecv/MPI_Isend of the next block while the current one is computed "
                  "(double-buffered; the default)",
       any_transport, make_overlap},
      {"persistent", "as overlap, with MPI_Send_init/MPI_Recv_init requests made once and "
                     "MPI_Startall per round",
       mpi_transports, make_persistent},
      {"rma", "MPI_Put of the block into the next rank's window (made once over the receive "
              "buffers), post-start-complete-wait per round, overlapped",
       host_windows, make_rma},
  };
  return all;
}

const StrategyEntry& find_strategy(const std::string& name) {
  for (const StrategyEntry& e : registry())
    if (name == e.name) return e;
  throw InputError("unknown ring strategy '" + name + "': choose " + strategy_names());
}

const StrategyEntry& find_strategy(const std::string& name, TransportKind transport) {
  const StrategyEntry& e = find_strategy(name);
  const std::string why = e.unavailable(transport);
  if (!why.empty())
    throw NotAvailable("ring strategy " + name + " cannot move blocks over the " + to_string(transport) +
                       " transport: " + why);
  return e;
}

std::string strategy_names() { return registry_names(registry()); }

std::string strategy_help() { return registry_help(registry(), 10); }

}  // namespace beatnik::comm::ring
