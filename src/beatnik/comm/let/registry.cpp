#include "beatnik/comm/let/registry.hpp"

#include "beatnik/base/error.hpp"
#include "beatnik/comm/migrate/registry.hpp"
#include "beatnik/comm/strategy_registry.hpp"

namespace beatnik::comm::let {

// The factories, one per strategy file.
std::unique_ptr<Strategy> make_alltoallv(const Setup& s);
std::unique_ptr<Strategy> make_sparse(const Setup& s);
std::unique_ptr<Strategy> make_rma(const Setup& s);

namespace {

// The push strategies run on the migration strategy of the same name: available where it is.
std::string migrate_unavailable(const char* name) {
  for (const auto& e : migrate::registry())
    if (std::string(e.name) == name) return e.unavailable();
  return std::string("no migration strategy ") + name;
}
std::string alltoallv_unavailable() { return migrate_unavailable("alltoallv"); }
std::string sparse_unavailable() { return migrate_unavailable("sparse"); }
// MPI-3 one-sided calls are in every MPI this builds with; a library that cannot make the
// window says so when the strategy makes it (NotAvailable, on every rank).
std::string rma_unavailable() { return ""; }

}  // namespace

const std::vector<StrategyEntry>& registry() {
  static const std::vector<StrategyEntry> all = {
      {"alltoallv", "push: each rank computes every other rank's part of its tree; counts by MPI_Alltoall, "
                    "blocks by MPI_Alltoallv",
       alltoallv_unavailable, make_alltoallv},
      {"sparse", "push: the same blocks by the NBX sparse exchange (MPI_Issend, MPI_Iprobe, MPI_Ibarrier); "
                 "only ranks with data talk",
       sparse_unavailable, make_sparse},
      {"rma", "pull: each rank walks the other ranks' trees itself, level by level, with MPI_Get on windows of "
              "their cluster records, proxies and particles (passive target)",
       rma_unavailable, make_rma, true},
  };
  return all;
}

const StrategyEntry& find_strategy(const std::string& name) {
  for (const StrategyEntry& e : registry()) {
    if (name != e.name) continue;
    const std::string why = e.unavailable();
    if (!why.empty()) throw NotAvailable("LET strategy " + name + ": " + why);
    return e;
  }
  throw InputError("unknown LET strategy '" + name + "': choose " + strategy_names());
}

const char* path(const std::string& strategy, const Transport* transport) {
  for (const StrategyEntry& e : registry())
    if (strategy == e.name) return !e.pulls && push_by_nccl(transport) ? "nccl" : "mpi";
  return "mpi";
}

std::string strategy_names() { return registry_names(registry()); }

std::string strategy_help() { return registry_help(registry(), 10); }

}  // namespace beatnik::comm::let
