#include "beatnik/comm/migrate/registry.hpp"

#include "beatnik/comm/strategy_registry.hpp"

namespace beatnik::comm::migrate {

// The factories, one per strategy file.
std::unique_ptr<Strategy> make_alltoallv(const Setup& s);
std::unique_ptr<Strategy> make_sparse(const Setup& s);
std::unique_ptr<Strategy> make_neighbor(const Setup& s);

namespace {

// The MPI-3 calls every strategy uses (nonblocking barrier, neighbourhood collectives) are in
// any library that passes find_package(MPI); asked at run time, since the header may be newer.
std::string needs_mpi3() {
  int major = 0, minor = 0;
  MPI_Get_version(&major, &minor);
  if (major >= 3) return "";
  return "the MPI library implements MPI " + std::to_string(major) + "." + std::to_string(minor) +
         "; this strategy needs MPI 3";
}

}  // namespace

const std::vector<StrategyEntry>& registry() {
  static const std::vector<StrategyEntry> all = {
      {"alltoallv", "counts by MPI_Alltoall, records by MPI_Alltoallv (every rank pair, empty or not)",
       needs_mpi3, make_alltoallv},
      {"sparse", "only ranks with data talk: NBX (MPI_Issend, MPI_Iprobe, MPI_Ibarrier) discovers "
                 "senders and moves records at once",
       needs_mpi3, make_sparse},
      {"neighbor", "MPI_Neighbor_alltoall(v) on a graph of the partners, cached per pattern and "
                   "rebuilt when the partners change",
       needs_mpi3, make_neighbor},
  };
  return all;
}

const StrategyEntry& find_strategy(const std::string& name) {
  for (const StrategyEntry& e : registry()) {
    if (name != e.name) continue;
    const std::string why = e.unavailable();
    if (!why.empty()) throw NotAvailable("migration strategy " + name + ": " + why);
    return e;
  }
  throw InputError("unknown migration strategy '" + name + "': choose " + strategy_names());
}

std::string strategy_names() { return registry_names(registry()); }

std::string strategy_help() { return registry_help(registry(), 10); }

}  // namespace beatnik::comm::migrate
