// One-sided ring: one window over this rank's two receive slots, made once with the ring; in
// round r a rank MPI_Puts its block straight into slot r mod 2 of the next rank's window before
// computing the round's block, and waits for the previous rank's put into its own window after
// (polling for it between chunks of the computation).
//
// Synchronisation: post-start-complete-wait (PSCW), not fence. The ring's dependencies are
// pairwise: a rank may overwrite the next rank's slot only once that rank has finished the
// round that last read it, which is what the next rank's MPI_Win_post (at the start of its
// round) says, and a rank needs only its previous rank's put before it reads. PSCW names just
// those two partners; MPI_Win_fence is collective over the whole communicator, so every round
// would become a barrier of all P ranks. PSCW also lets the computation poll for the incoming
// block (MPI_Win_test), as overlap polls with MPI_Testall.
//
// The access epoch is closed right after the put (MPI_Win_complete in start(): it returns once
// the put is done at this end, which may wait for the next rank's post), so the next rank sees
// the block as soon as it lands. Closed after the computation instead, every block would be
// reported only when its sender finished computing, and ".ring.hidden" would measure the
// sender's computation rather than the transfer.
//
// Host memory only: host runs, and the staged transport (pinned host wire buffers).
#include <memory>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/comm/ring/ring_strategy.hpp"

namespace beatnik::comm::ring {
namespace {

class Rma final : public Strategy {
 public:
  explicit Rma(const Setup& s) : s_(s) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "true");  // PSCW only: no passive-target epochs
    const MPI_Aint bytes = MPI_Aint(2 * s.capacity) * MPI_Aint(sizeof(double));
    int err;
    {
      ReturnMpiErrors returned(s.comm);  // a refusal is handled below, agreed on every rank
      err = MPI_Win_create(s.wire, bytes, sizeof(double), info, s.comm, &win_);
    }
    MPI_Info_free(&info);
    // A library without one-sided support for this memory refuses here; say so on every rank.
    int ok = err == MPI_SUCCESS, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, s.comm);
    if (!all) {
      if (err == MPI_SUCCESS) MPI_Win_free(&win_);
      win_ = MPI_WIN_NULL;
      char msg[MPI_MAX_ERROR_STRING] = "failed on another rank";
      int len = 0;
      if (err != MPI_SUCCESS) MPI_Error_string(err, msg, &len);
      throw NotAvailable(std::string("ring strategy rma: this MPI library cannot make the window (MPI_Win_create: ") +
                         msg + "); use --br-strategy overlap or persistent");
    }
    MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
    MPI_Group all_ranks;
    MPI_Comm_group(s.comm, &all_ranks);
    MPI_Group_incl(all_ranks, 1, &s.next, &to_next_);
    MPI_Group_incl(all_ranks, 1, &s.prev, &from_prev_);
    MPI_Group_free(&all_ranks);
  }

  ~Rma() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
    if (to_next_ != MPI_GROUP_NULL) MPI_Group_free(&to_next_);
    if (from_prev_ != MPI_GROUP_NULL) MPI_Group_free(&from_prev_);
  }

  Rma(const Rma&) = delete;
  Rma& operator=(const Rma&) = delete;

  bool overlaps() const override { return true; }

  void start(int r) override {
    const Round& x = s_.rounds[r];
    // Expose this rank's slots to the previous rank: this rank has finished round r−1, so the
    // slot the previous rank writes now (read in round r−1) is free.
    check_mpi(MPI_Win_post(from_prev_, 0, win_), "MPI_Win_post (ring)");
    exposed_ = true;
    check_mpi(MPI_Win_start(to_next_, 0, win_), "MPI_Win_start (ring)");
    check_mpi(MPI_Put(x.send, static_cast<int>(x.send_count), MPI_DOUBLE, s_.next,
                      MPI_Aint(x.slot) * MPI_Aint(s_.capacity), static_cast<int>(x.send_count), MPI_DOUBLE, win_),
              "MPI_Put (ring)");
    check_mpi(MPI_Win_complete(win_), "MPI_Win_complete (ring)");  // this rank's put is done
  }

  // True once the previous rank's block has landed here (its access epoch completed); that
  // also ends this rank's exposure epoch.
  bool test() override {
    if (!exposed_) return true;
    int flag = 0;
    check_mpi(MPI_Win_test(win_, &flag), "MPI_Win_test (ring)");
    if (flag) exposed_ = false;
    return flag != 0;
  }

  void finish(int) override {
    if (exposed_) check_mpi(MPI_Win_wait(win_), "MPI_Win_wait (ring)");  // the incoming put is done
    exposed_ = false;
  }

 private:
  Setup s_;
  MPI_Win win_ = MPI_WIN_NULL;
  MPI_Group to_next_ = MPI_GROUP_NULL, from_prev_ = MPI_GROUP_NULL;
  bool exposed_ = false;
};

}  // namespace

std::unique_ptr<Strategy> make_rma(const Setup& s) { return std::make_unique<Rma>(s); }

}  // namespace beatnik::comm::ring
