// Persistent two-sided exchange: MPI_Recv_init / MPI_Send_init once per exchange (the buffers
// never move), then MPI_Startall and MPI_Waitall per exchange. On a duplicate of the grid's
// communicator, so its standing requests never match another pattern's messages. Tags are the
// sender's direction, as in isend.
#include "beatnik/comm/halo/halo_strategy.hpp"
#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::comm::halo {
namespace {

class Persistent final : public Strategy {
 public:
  explicit Persistent(const Setup& s) {
    check_mpi(MPI_Comm_dup(s.comm, &comm_), "MPI_Comm_dup (halo persistent)");
    for (const Link& r : s.recvs) {
      requests_.push_back(MPI_REQUEST_NULL);
      check_mpi(MPI_Recv_init(s.recv + r.offset, int_count(r.count, s), MPI_DOUBLE, r.peer, r.tag, comm_,
                              &requests_.back()),
                "MPI_Recv_init (halo)");
    }
    for (const Link& l : s.sends) {
      requests_.push_back(MPI_REQUEST_NULL);
      check_mpi(MPI_Send_init(s.send + l.offset, int_count(l.count, s), MPI_DOUBLE, l.peer, l.tag, comm_,
                              &requests_.back()),
                "MPI_Send_init (halo)");
    }
  }
  ~Persistent() override {
    if (!mpi_alive()) return;
    for (MPI_Request& r : requests_)
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    MPI_Comm_free(&comm_);
  }

  void start() override {
    if (!requests_.empty())
      check_mpi(MPI_Startall(static_cast<int>(requests_.size()), requests_.data()), "MPI_Startall (halo)");
  }

  void finish() override {
    if (!requests_.empty())
      check_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
                "MPI_Waitall (halo persistent)");
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<MPI_Request> requests_;
};

}  // namespace

std::unique_ptr<Strategy> make_persistent(const Setup& s) { return std::make_unique<Persistent>(s); }

}  // namespace beatnik::comm::halo
