// Blocking ring: one MPI_Sendrecv per round after the round's computation, as the reference.
// The baseline the overlapping strategies are measured against. With the nccl transport the
// round is one grouped send/receive queued after the round's kernel.
#include <memory>

#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/comm/ring/nccl_round.hpp"
#include "beatnik/comm/ring/ring_strategy.hpp"

namespace beatnik::comm::ring {
namespace {

class Blocking final : public Strategy {
 public:
  explicit Blocking(const Setup& s) : s_(s), nccl_(s.transport->uses_nccl()) {}

  bool overlaps() const override { return false; }

  void start(int r) override {
    if (nccl_) {
      nccl_round(s_, r, true);
      return;
    }
    const Round& x = s_.rounds[r];
    check_mpi(MPI_Sendrecv(x.send, static_cast<int>(x.send_count), MPI_DOUBLE, s_.next, r, x.recv,
                           static_cast<int>(x.recv_count), MPI_DOUBLE, s_.prev, r, s_.comm, MPI_STATUS_IGNORE),
              "MPI_Sendrecv (ring)");
  }

  void finish(int) override {}

 private:
  Setup s_;
  bool nccl_;
};

}  // namespace

std::unique_ptr<Strategy> make_blocking(const Setup& s) { return std::make_unique<Blocking>(s); }

}  // namespace beatnik::comm::ring
