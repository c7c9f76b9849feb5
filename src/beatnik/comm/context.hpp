#pragma once
// The MPI world as beatnik sees it: which node each rank is on (for on-node / off-node byte
// accounting and rank placement), the node-local rank (for GPU binding), host names.
// Nodes are what MPI_Comm_split_type(SHARED) says, or, with ranks_per_node K > 0, groups of K
// consecutive ranks (r / K; the last node has fewer when K does not divide the rank count), so
// that placement and accounting can be studied on one machine. K changes only the nodes of
// accounting and placement; GPU binding and memory checks keep the machine's own nodes.
#include <mpi.h>

#include <string>
#include <vector>

namespace beatnik::comm {

// For every rank of `sub`, its rank in `comm` (sub derived from comm; local, no communication).
std::vector<int> ranks_in(MPI_Comm sub, MPI_Comm comm);

class Context {
 public:
  explicit Context(MPI_Comm comm, int ranks_per_node = 0);

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  // On the machine's own node (MPI_Comm_split_type SHARED): GPU binding, memory per node.
  int node_local_rank() const { return local_rank_; }
  int node_local_size() const { return local_size_; }
  const std::vector<int>& machine_node_of_rank() const { return machine_node_of_; }
  // The nodes of accounting and placement (the machine's, or r / ranks_per_node).
  int node_count() const { return node_count_; }
  // Node index (0..node_count-1) of every rank of comm().
  const std::vector<int>& node_of_rank() const { return node_of_; }
  int ranks_per_node() const { return ranks_per_node_; }  // 0: the machine's nodes
  const std::vector<std::string>& host_of_rank() const { return host_of_; }

  // For every rank of `sub` (a communicator derived from comm()): 0 = this rank itself,
  // 1 = another rank on this node, 2 = a rank on another node.
  std::vector<int> locality(MPI_Comm sub) const;

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  int local_rank_ = 0, local_size_ = 1, node_count_ = 1, ranks_per_node_ = 0;
  std::vector<int> node_of_, machine_node_of_;
  std::vector<std::string> host_of_;
};

}  // namespace beatnik::comm
