// Non-blocking two-sided exchange: MPI_Irecv for every receive, MPI_Isend for every send,
// MPI_Waitall. Messages are matched by the sender's direction as tag, so a neighbour that
// repeats (grids of extent 1 or 2) is no ambiguity. Nothing is set up beforehand.
#include "beatnik/comm/halo/halo_strategy.hpp"
#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::comm::halo {
namespace {

class Isend final : public Strategy {
 public:
  explicit Isend(const Setup& s) : s_(s) { requests_.resize(s.sends.size() + s.recvs.size()); }

  void start() override {
    int n = 0;
    for (const Link& r : s_.recvs)
      check_mpi(MPI_Irecv(s_.recv + r.offset, int_count(r.count, s_), MPI_DOUBLE, r.peer, r.tag, s_.comm,
                          &requests_[n++]),
                "MPI_Irecv (halo)");
    for (const Link& l : s_.sends)
      check_mpi(MPI_Isend(s_.send + l.offset, int_count(l.count, s_), MPI_DOUBLE, l.peer, l.tag, s_.comm,
                          &requests_[n++]),
                "MPI_Isend (halo)");
    pending_ = n;
  }

  void finish() override {
    if (pending_ > 0) check_mpi(MPI_Waitall(pending_, requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall (halo)");
    pending_ = 0;
  }

 private:
  Setup s_;
  std::vector<MPI_Request> requests_;
  int pending_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_isend(const Setup& s) { return std::make_unique<Isend>(s); }

}  // namespace beatnik::comm::halo
