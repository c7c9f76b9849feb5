#include "beatnik/comm/context.hpp"

#include <algorithm>
#include <map>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::comm {

Context::Context(MPI_Comm comm, int ranks_per_node) : comm_(comm), ranks_per_node_(ranks_per_node) {
  if (ranks_per_node < 0) throw Error("ranks per node must be 1 or more (0: the machine's nodes)");
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");

  MPI_Comm shared;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &shared),
            "MPI_Comm_split_type");
  MPI_Comm_rank(shared, &local_rank_);
  MPI_Comm_size(shared, &local_size_);
  int leader = rank_;  // lowest rank of comm on my node names the node
  MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, shared);
  MPI_Comm_free(&shared);

  std::vector<int> leaders(size_);
  check_mpi(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm), "MPI_Allgather");
  std::map<int, int> dense;
  for (int l : leaders) dense.emplace(l, 0);
  int k = 0;
  for (auto& [l, id] : dense) id = k++;
  machine_node_of_.resize(size_);
  for (int r = 0; r < size_; ++r) machine_node_of_[r] = dense[leaders[r]];
  if (ranks_per_node > 0) {
    node_of_.resize(size_);
    for (int r = 0; r < size_; ++r) node_of_[r] = r / ranks_per_node;
    node_count_ = (size_ + ranks_per_node - 1) / ranks_per_node;
  } else {
    node_of_ = machine_node_of_;
    node_count_ = k;
  }

  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<size_t>(size_) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                comm);
  host_of_.resize(size_);
  for (int r = 0; r < size_; ++r) host_of_[r] = std::string(&all[static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
}

std::vector<int> ranks_in(MPI_Comm sub, MPI_Comm comm) {
  MPI_Group gs, gw;
  int n = 0;
  MPI_Comm_size(sub, &n);
  MPI_Comm_group(sub, &gs);
  MPI_Comm_group(comm, &gw);
  std::vector<int> in(n), out(n);
  for (int r = 0; r < n; ++r) in[r] = r;
  MPI_Group_translate_ranks(gs, n, in.data(), gw, out.data());
  MPI_Group_free(&gs);
  MPI_Group_free(&gw);
  return out;
}

std::vector<int> Context::locality(MPI_Comm sub) const {
  const std::vector<int> out = ranks_in(sub, comm_);
  const int n = static_cast<int>(out.size());
  std::vector<int> loc(n);
  for (int r = 0; r < n; ++r) {
    const int w = out[r];
    loc[r] = (w == rank_) ? 0 : (node_of_[w] == node_of_[rank_] ? 1 : 2);
  }
  return loc;
}

}  // namespace beatnik::comm
