// Persistent ring: the receive and send of every round are set up once, when the ring is built
// (MPI_Recv_init / MPI_Send_init on the fixed wire buffers, with each round's exact block size
// and tag), and each round only starts its pair (MPI_Startall), overlapped with the round's
// computation like `overlap`. Saves the argument checks and matching set-up of P−1 Irecv/Isend
// pairs per call; the messages are the same. MPI transports only (host, staged, cuda-aware).
#include <memory>
#include <vector>

#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/comm/ring/ring_strategy.hpp"

namespace beatnik::comm::ring {
namespace {

class Persistent final : public Strategy {
 public:
  explicit Persistent(const Setup& s) : req_(2 * s.rounds.size(), MPI_REQUEST_NULL) {
    for (std::size_t r = 0; r < s.rounds.size(); ++r) {
      const Round& x = s.rounds[r];
      const int tag = static_cast<int>(r);
      check_mpi(MPI_Recv_init(x.recv, static_cast<int>(x.recv_count), MPI_DOUBLE, s.prev, tag, s.comm, &req_[2 * r]),
                "MPI_Recv_init (ring)");
      check_mpi(MPI_Send_init(x.send, static_cast<int>(x.send_count), MPI_DOUBLE, s.next, tag, s.comm,
                              &req_[2 * r + 1]),
                "MPI_Send_init (ring)");
    }
  }

  ~Persistent() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    for (MPI_Request& q : req_)
      if (q != MPI_REQUEST_NULL) MPI_Request_free(&q);
  }

  Persistent(const Persistent&) = delete;
  Persistent& operator=(const Persistent&) = delete;

  bool overlaps() const override { return true; }

  void start(int r) override {
    current_ = &req_[2 * r];
    check_mpi(MPI_Startall(2, current_), "MPI_Startall (ring)");
  }

  bool test() override {
    int flag = 0;
    check_mpi(MPI_Testall(2, current_, &flag, MPI_STATUSES_IGNORE), "MPI_Testall (ring)");
    return flag != 0;
  }

  // Completed persistent requests turn inactive (not null), so a Waitall after a successful
  // Testall returns at once and the requests can be started again next call.
  void finish(int r) override {
    check_mpi(MPI_Waitall(2, &req_[2 * r], MPI_STATUSES_IGNORE), "MPI_Waitall (ring)");
  }

 private:
  std::vector<MPI_Request> req_;  // [recv, send] of round r at 2r, 2r+1
  MPI_Request* current_ = nullptr;
};

}  // namespace

std::unique_ptr<Strategy> make_persistent(const Setup& s) { return std::make_unique<Persistent>(s); }

}  // namespace beatnik::comm::ring
