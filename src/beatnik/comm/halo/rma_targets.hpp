#pragma once
// What the one-sided strategies (rma_fence.cpp, rma_pscw.cpp, rma_lock.cpp) share: the window
// over the receive buffer, and where each Put lands in the target's receive buffer, which only
// the target knows (uneven splits give neighbours differently sized ghost strips).
#include <vector>

#include "beatnik/comm/halo/halo_strategy.hpp"

namespace beatnik::comm::halo {

struct RemoteSlots {
  std::vector<long> send_disp;  // per send link: its first double in the peer's receive buffer
  std::vector<int> send_slot;   // per send link: index of the peer's receive link it fills
  std::vector<int> recv_slot;   // per receive link: index of the peer's send link that fills it
};

// Learned once by point-to-point messages tagged with the sender's direction (a neighbour may
// repeat on grids of extent 1 or 2). Collective over setup.comm.
RemoteSlots remote_slots(const Setup& s);

// A window over the receive buffer (displacements count doubles; errors returned, not fatal).
// Collective over setup.comm. NotAvailable on every rank when the MPI library cannot make it
// (Open MPI 4 has no window over user memory on a lone process, for one).
MPI_Win receive_window(const Setup& s, MPI_Info info = MPI_INFO_NULL);

// `err` from a window-making call on this rank -> the window, or NotAvailable on every rank if
// any rank failed. Collective over comm.
MPI_Win agreed_window(int err, MPI_Win win, MPI_Comm comm, const char* what);

// A grid of one rank has no message for MPI (every one is a self copy): the one-sided
// strategies make no window there.
bool lone_rank(const Setup& s);

// MPI_Put of send message k into its slot of the target's receive window (inside an epoch).
void put_message(const Setup& s, const RemoteSlots& slots, std::size_t k, MPI_Win win);

// Frees `win` unless MPI is finalized. Collective.
void free_window(MPI_Win& win) noexcept;

}  // namespace beatnik::comm::halo
