// One-sided, passive target: every rank holds a shared lock on all windows for the exchange's
// lifetime (MPI_Win_lock_all once), Puts into its neighbours' receive buffers, completes them
// with MPI_Win_flush and then raises a flag the target waits on. No collective, no epoch: the
// target learns of its data only from the flags.
//
// The hazard: a fast origin could Put exchange e+1 into a receive buffer its target is still
// unpacking from exchange e. So the target also writes a flag into the origin: "ready for e"
// in its start(e), which comes after it unpacked e-1; the origin puts exchange e to that
// target only once it has read ready >= e. Flags are exchange numbers (never reset), written
// with MPI_Accumulate(MPI_REPLACE) and read with MPI_Fetch_and_op(MPI_NO_OP), the atomic pair
// that may touch one location concurrently. Slots (a small second window):
//   ready[k]   written by the target of this rank's send link k
//   arrived[k] written by the origin of this rank's receive link k
// start() announces readiness and puts to every target that is ready already; finish() puts
// the rest as their targets become ready, then waits for every arrival.
#include <algorithm>
#include <thread>

#include "beatnik/comm/halo/rma_targets.hpp"
#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::comm::halo {
namespace {

constexpr int kLinks = 8;  // at most 8 neighbours
constexpr int kReady = 0, kArrived = kLinks;

class RmaLock final : public Strategy {
 public:
  explicit RmaLock(const Setup& s) : s_(s), slots_(remote_slots(s)), sent_(s.sends.size(), 1) {
    if (s.sends.size() > kLinks || s.recvs.size() > kLinks) throw Error("halo rma-lock: more than 8 neighbours");
    MPI_Comm_rank(s.comm, &me_);
    if (lone_rank(s)) return;  // no message for MPI: start() and finish() find nothing to do
    data_ = receive_window(s);
    long* base = nullptr;
    int err;
    {
      ReturnMpiErrors returned(s.comm);  // a refusal is agreed on every rank below
      err = MPI_Win_allocate(2 * kLinks * sizeof(long), sizeof(long), MPI_INFO_NULL, s.comm, &base, &flags_);
    }
    flags_ = agreed_window(err, flags_, s.comm, "MPI_Win_allocate of the flags");
    for (int k = 0; k < 2 * kLinks; ++k) base[k] = 0;  // before any rank can touch them
    check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, data_), "MPI_Win_lock_all (halo)");
    check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, flags_), "MPI_Win_lock_all (halo flags)");
    MPI_Win_sync(flags_);
    check_mpi(MPI_Barrier(s.comm), "MPI_Barrier (halo rma-lock set-up)");
  }
  ~RmaLock() override {
    if (mpi_alive() && data_ != MPI_WIN_NULL) {
      MPI_Win_unlock_all(flags_);
      MPI_Win_unlock_all(data_);
    }
    free_window(flags_);
    free_window(data_);
  }

  void start() override {
    ++exchange_;
    for (std::size_t k = 0; k < s_.recvs.size(); ++k)
      check_mpi(MPI_Accumulate(&exchange_, 1, MPI_LONG, s_.recvs[k].peer, kReady + slots_.recv_slot[k], 1, MPI_LONG,
                               MPI_REPLACE, flags_),
                "MPI_Accumulate (halo ready flag)");
    if (!s_.recvs.empty()) check_mpi(MPI_Win_flush_all(flags_), "MPI_Win_flush_all (halo ready flags)");
    std::fill(sent_.begin(), sent_.end(), 0);
    put_to_ready_targets();
  }

  void finish() override {
    while (!put_to_ready_targets()) std::this_thread::yield();
    for (std::size_t k = 0; k < s_.recvs.size(); ++k)
      while (flag(kArrived + static_cast<int>(k)) < exchange_) std::this_thread::yield();
    // Make the Puts visible to this rank's loads (the separate memory model needs it).
    if (data_ != MPI_WIN_NULL) check_mpi(MPI_Win_sync(data_), "MPI_Win_sync (halo)");
  }

 private:
  // This rank's flag `slot`, read atomically.
  long flag(int slot) {
    long none = 0, value = 0;
    check_mpi(MPI_Fetch_and_op(&none, &value, MPI_LONG, me_, slot, MPI_NO_OP, flags_), "MPI_Fetch_and_op (halo flag)");
    check_mpi(MPI_Win_flush(me_, flags_), "MPI_Win_flush (halo flag)");
    return value;
  }

  // Puts every message not sent yet whose target is ready; true once all are sent.
  bool put_to_ready_targets() {
    bool all = true, any = false;
    for (std::size_t k = 0; k < s_.sends.size(); ++k) {
      if (sent_[k]) continue;
      if (flag(kReady + static_cast<int>(k)) < exchange_) {
        all = false;
        continue;
      }
      const Link& l = s_.sends[k];
      put_message(s_, slots_, k, data_);
      // The data must be complete at the target before the flag says so.
      check_mpi(MPI_Win_flush(l.peer, data_), "MPI_Win_flush (halo)");
      check_mpi(MPI_Accumulate(&exchange_, 1, MPI_LONG, l.peer, kArrived + slots_.send_slot[k], 1, MPI_LONG,
                               MPI_REPLACE, flags_),
                "MPI_Accumulate (halo arrival flag)");
      sent_[k] = 1;
      any = true;
    }
    if (any) check_mpi(MPI_Win_flush_all(flags_), "MPI_Win_flush_all (halo arrival flags)");
    return all;
  }

  Setup s_;
  RemoteSlots slots_;
  int me_ = 0;
  long exchange_ = 0;       // number of the exchange under way (1, 2, ...)
  std::vector<char> sent_;  // per send link: put in this exchange
  MPI_Win data_ = MPI_WIN_NULL, flags_ = MPI_WIN_NULL;
};

}  // namespace

std::unique_ptr<Strategy> make_rma_lock(const Setup& s) { return std::make_unique<RmaLock>(s); }

}  // namespace beatnik::comm::halo
