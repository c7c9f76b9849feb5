// One-sided, active target with general synchronisation (post-start-complete-wait): only
// neighbours synchronise, not the whole grid. Per exchange a rank exposes its receive buffer
// to the ranks that put into it (MPI_Win_post), opens access to the ranks it puts into
// (MPI_Win_start), puts, and closes both (MPI_Win_complete, MPI_Win_wait). A rank posts only
// after it unpacked the previous exchange, and Puts wait for the post, so no Put overwrites
// ghosts still being read. Groups hold each neighbour once, however often it repeats.
#include <algorithm>

#include "beatnik/comm/halo/rma_targets.hpp"
#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::comm::halo {
namespace {

// The distinct peers of `links` as a group of setup.comm (MPI groups hold a rank once).
MPI_Group peer_group(const Setup& s, const std::vector<Link>& links) {
  std::vector<int> ranks;
  for (const Link& l : links) ranks.push_back(l.peer);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  MPI_Group all, g;
  check_mpi(MPI_Comm_group(s.comm, &all), "MPI_Comm_group (halo)");
  check_mpi(MPI_Group_incl(all, static_cast<int>(ranks.size()), ranks.data(), &g), "MPI_Group_incl (halo)");
  MPI_Group_free(&all);
  return g;
}

class RmaPscw final : public Strategy {
 public:
  explicit RmaPscw(const Setup& s)
      : s_(s), slots_(remote_slots(s)), origins_(peer_group(s, s.recvs)), targets_(peer_group(s, s.sends)) {
    if (lone_rank(s)) return;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "true");
    win_ = receive_window(s, info);
    MPI_Info_free(&info);
  }
  ~RmaPscw() override {
    free_window(win_);
    if (!mpi_alive()) return;
    for (MPI_Group* g : {&origins_, &targets_})
      if (*g != MPI_GROUP_EMPTY) MPI_Group_free(g);
  }

  void start() override {
    if (!s_.recvs.empty()) check_mpi(MPI_Win_post(origins_, 0, win_), "MPI_Win_post (halo)");
    if (s_.sends.empty()) return;
    check_mpi(MPI_Win_start(targets_, 0, win_), "MPI_Win_start (halo)");
    for (std::size_t k = 0; k < s_.sends.size(); ++k) put_message(s_, slots_, k, win_);
  }

  void finish() override {
    if (!s_.sends.empty()) check_mpi(MPI_Win_complete(win_), "MPI_Win_complete (halo)");
    if (!s_.recvs.empty()) check_mpi(MPI_Win_wait(win_), "MPI_Win_wait (halo)");
  }

 private:
  Setup s_;
  RemoteSlots slots_;
  MPI_Group origins_, targets_;  // ranks that put here; ranks this one puts into
  MPI_Win win_ = MPI_WIN_NULL;
};

}  // namespace

std::unique_ptr<Strategy> make_rma_pscw(const Setup& s) { return std::make_unique<RmaPscw>(s); }

}  // namespace beatnik::comm::halo
