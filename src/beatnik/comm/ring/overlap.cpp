// Overlapped ring: round r posts MPI_Irecv of the next block and MPI_Isend of the current one,
// the RingPass computes the current block (on the host in chunks, calling test() between them
// so that Open MPI's large-message protocols progress), then finish() waits. With the nccl
// transport the round's grouped send/receive is queued before the round's kernel and joined
// after it, so kernel and transfer may run at the same time.
#include <memory>

#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/comm/ring/nccl_round.hpp"
#include "beatnik/comm/ring/ring_strategy.hpp"

namespace beatnik::comm::ring {
namespace {

class Overlap final : public Strategy {
 public:
  explicit Overlap(const Setup& s) : s_(s), nccl_(s.transport->uses_nccl()) {}

  bool overlaps() const override { return true; }

  void start(int r) override {
    if (nccl_) {
      nccl_round(s_, r, false);
      return;
    }
    const Round& x = s_.rounds[r];
    check_mpi(MPI_Irecv(x.recv, static_cast<int>(x.recv_count), MPI_DOUBLE, s_.prev, r, s_.comm, &req_[0]),
              "MPI_Irecv (ring)");
    check_mpi(MPI_Isend(x.send, static_cast<int>(x.send_count), MPI_DOUBLE, s_.next, r, s_.comm, &req_[1]),
              "MPI_Isend (ring)");
  }

  bool test() override {
    if (nccl_) return false;  // the device waits, not the host
    int flag = 0;
    check_mpi(MPI_Testall(2, req_, &flag, MPI_STATUSES_IGNORE), "MPI_Testall (ring)");
    return flag != 0;
  }

  void finish(int) override {
    if (nccl_) {  // the kernel stream waits for the transfer, the host does not
      s_.transport->nccl_join();
      return;
    }
    // Requests completed by test() are MPI_REQUEST_NULL already: Waitall returns at once.
    check_mpi(MPI_Waitall(2, req_, MPI_STATUSES_IGNORE), "MPI_Waitall (ring)");
  }

 private:
  Setup s_;
  bool nccl_;
  MPI_Request req_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
};

}  // namespace

std::unique_ptr<Strategy> make_overlap(const Setup& s) { return std::make_unique<Overlap>(s); }

}  // namespace beatnik::comm::ring
