// Neighbourhood collective: one MPI_Ineighbor_alltoallv per exchange on a distributed graph
// communicator made once from the grid's links (faces and, when the pattern has them, corners:
// a Cartesian communicator's neighbourhood would hold the faces only).
//
// Repeated neighbours: on a periodic grid of extent 2 the same rank sits at two or more
// directions. A neighbourhood collective has no tags; the messages between two ranks pair up
// in the order of the edges (the k-th edge p -> q in p's destinations with the k-th edge from
// p in q's sources, as point-to-point messages do). So both lists are sorted by (peer, the
// sender's direction): the sender lists its sends to q by its direction, the receiver its
// receives from p by p's direction (the receive tag), and the k-th of each are the same
// message. Self messages never reach here (HaloExchange copies them).
#include <algorithm>
#include <numeric>

#include "beatnik/comm/halo/halo_strategy.hpp"
#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::comm::halo {
namespace {

// Links in (peer, tag) order: the order both ends of a rank pair agree on.
std::vector<Link> edge_order(std::vector<Link> links) {
  std::stable_sort(links.begin(), links.end(), [](const Link& a, const Link& b) {
    return a.peer != b.peer ? a.peer < b.peer : a.tag < b.tag;
  });
  return links;
}

class Neighbor final : public Strategy {
 public:
  explicit Neighbor(const Setup& s) : send_(s.send), recv_(s.recv) {
    const std::vector<Link> out = edge_order(s.sends), in = edge_order(s.recvs);
    std::vector<int> dst, src;
    for (const Link& l : out) {
      dst.push_back(l.peer);
      sc_.push_back(int_count(l.count, s));
      sd_.push_back(int_count(l.offset, s));
    }
    for (const Link& l : in) {
      src.push_back(l.peer);
      rc_.push_back(int_count(l.count, s));
      rd_.push_back(int_count(l.offset, s));
    }
    // Never a null array or buffer for MPI, even with no neighbour (one rank, free grid).
    for (auto* v : {&dst, &src, &sc_, &sd_, &rc_, &rd_}) v->reserve(1);
    if (!send_) send_ = &dummy_;
    if (!recv_) recv_ = &dummy_;
    // reorder = 0: ranks stay those of the grid, which the links name.
    check_mpi(MPI_Dist_graph_create_adjacent(s.comm, static_cast<int>(src.size()), src.data(), MPI_UNWEIGHTED,
                                             static_cast<int>(dst.size()), dst.data(), MPI_UNWEIGHTED, MPI_INFO_NULL,
                                             0, &graph_),
              "MPI_Dist_graph_create_adjacent (halo)");
  }
  ~Neighbor() override {
    if (mpi_alive() && graph_ != MPI_COMM_NULL) MPI_Comm_free(&graph_);
  }

  void start() override {
    check_mpi(MPI_Ineighbor_alltoallv(send_, sc_.data(), sd_.data(), MPI_DOUBLE, recv_, rc_.data(), rd_.data(),
                                      MPI_DOUBLE, graph_, &request_),
              "MPI_Ineighbor_alltoallv (halo)");
  }

  void finish() override { check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait (halo neighbor)"); }

 private:
  const double* send_;
  double* recv_;
  double dummy_ = 0.0;
  std::vector<int> sc_, sd_, rc_, rd_;
  MPI_Comm graph_ = MPI_COMM_NULL;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace

std::unique_ptr<Strategy> make_neighbor(const Setup& s) { return std::make_unique<Neighbor>(s); }

}  // namespace beatnik::comm::halo
