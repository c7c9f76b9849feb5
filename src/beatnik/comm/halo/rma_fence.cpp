// One-sided, active target with fences: a window over the receive buffer made once; per
// exchange an opening MPI_Win_fence, one MPI_Put per message into the neighbour's receive
// buffer, a closing fence. The opening fence is collective, and a rank reaches it only after it
// unpacked the previous exchange, so no Put overwrites ghosts still being read.
#include "beatnik/comm/halo/rma_targets.hpp"
#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::comm::halo {
namespace {

class RmaFence final : public Strategy {
 public:
  explicit RmaFence(const Setup& s) : s_(s), slots_(remote_slots(s)) {
    if (lone_rank(s)) return;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "true");  // fences only: lets the library skip lock support
    win_ = receive_window(s, info);
    MPI_Info_free(&info);
  }
  ~RmaFence() override { free_window(win_); }

  void start() override {
    if (win_ == MPI_WIN_NULL) return;  // lone rank
    check_mpi(MPI_Win_fence(MPI_MODE_NOPRECEDE, win_), "MPI_Win_fence (halo, open)");
    for (std::size_t k = 0; k < s_.sends.size(); ++k) put_message(s_, slots_, k, win_);
  }

  void finish() override {
    if (win_ != MPI_WIN_NULL) check_mpi(MPI_Win_fence(MPI_MODE_NOSUCCEED, win_), "MPI_Win_fence (halo, close)");
  }

 private:
  Setup s_;
  RemoteSlots slots_;
  MPI_Win win_ = MPI_WIN_NULL;
};

}  // namespace

std::unique_ptr<Strategy> make_rma_fence(const Setup& s) { return std::make_unique<RmaFence>(s); }

}  // namespace beatnik::comm::halo
