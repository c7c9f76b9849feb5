#pragma once
// Ghost-layer exchange of a 2D block-decomposed field with its 8 (or 4) neighbours.
// Split phase (start, finish) so that later strategies can overlap it with computation.
// The exchange packs, copies messages to itself, stages through the transport and unpacks;
// how the other messages travel over MPI is a strategy (comm/halo/registry.hpp).
#include <mpi.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "beatnik/base/ghosted_layout.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/comm/cart_grid.hpp"
#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/halo/halo_strategy.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/exec/memory.hpp"

namespace beatnik::comm {

// Which ghosts travel: `depth` layers across each face, and the depth x depth corner blocks
// when `corners` is set (the 9-point Laplacian reads corners; first derivatives do not).
struct HaloPattern {
  int depth = 2;
  bool corners = true;
};

// Up to 8 component planes exchanged together in one message per neighbour.
struct ComponentSet {
  static constexpr int max = 8;
  double* p[max] = {};
  int n = 0;
  void add(double* plane) { p[n++] = plane; }
};

// Sub-boxes of the local ghosted index space, one per neighbour, packed back to back.
struct HaloRegions {
  int n = 0;
  int i0[8], i1[8], j0[8], j1[8];
  long offset[9] = {};  // element offset of region r for one component; offset[n] = total
};

// Per send region: where a device-direct strategy has its message written on the peer's GPU
// (null: into this rank's own send buffer).
struct RemoteTargets {
  double* p[8] = {};
};
// Receive regions a rank fills itself: where the message starts in its own send buffer (null:
// the message arrives in the receive buffer).
struct SelfSources {
  const double* p[8] = {};
};
// Who sends what to whom: region, peer (grid rank) and tag (the sender's direction) of every
// message, in direction order. Pure: HaloExchange and the dry run (app/dry_run.hpp) both plan
// their messages here.
struct HaloLinks {
  HaloRegions send, recv;
  int send_peer[8] = {}, recv_peer[8] = {}, send_tag[8] = {}, recv_tag[8] = {};
};
HaloLinks plan_halo(const std::array<int, 8>& neighbors, GhostedLayout layout, HaloPattern pattern);

// How an exchange runs and is measured.
struct HaloRun {
  std::string strategy = "isend";  // MPI strategy by registry name (comm/halo/registry.hpp)
  Timers* timers = nullptr;        // when set, phases are timed as <region>.pack, .post, .wait, .unpack
  std::string region;              // e.g. "halo.state" (the caller times the whole exchange under it)
};

class HaloExchange {
 public:
  // Collective over the grid (the strategy may make requests, communicators or windows).
  HaloExchange(const CartGrid& grid, GhostedLayout layout, HaloPattern pattern, int ncomp,
               exec::Space space, std::vector<int> locality, CommStats* stats, std::string name,
               Transport* transport = nullptr, HaloRun run = {});
  // Collective too when the strategy holds windows.
  ~HaloExchange();
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;

  void start(const ComponentSet& comps);
  void finish(const ComponentSet& comps);
  void exchange(const ComponentSet& comps) {
    start(comps);
    finish(comps);
  }

  const std::string& name() const { return name_; }
  const std::string& strategy() const { return strategy_name_; }
  long bytes_per_exchange() const { return send_.offset[send_.n] * ncomp_ * long(sizeof(double)); }

 private:
  const CartGrid& grid_;
  GhostedLayout layout_;
  HaloPattern pattern_;
  int ncomp_;
  exec::Space space_;
  std::vector<int> locality_;
  CommStats* stats_;
  std::string name_;

  HaloRegions send_, recv_;
  int send_peer_[8], recv_peer_[8], send_tag_[8], recv_tag_[8];
  Transport* transport_;  // how the bytes travel (host, staged, cuda-aware, nccl)
  Message send_msg_[8], recv_msg_[8];
  exec::Buffer<double> send_buf_, recv_buf_;
  // Staged transport: pinned host copies of the buffers, allocated once.
  PinnedBuffer send_host_, recv_host_;
  // Where MPI reads and writes (the buffers above or their pinned copies), fixed once made.
  const double* mpi_send_ = nullptr;
  double* mpi_recv_ = nullptr;
  // MPI transports: messages a rank sends itself (periodic wrap on a grid of extent 1) never go
  // through MPI or the host: the unpack kernel reads them from send_buf_ where they were packed.
  SelfSources self_src_;
  std::vector<int> remote_send_, remote_recv_;
  std::string strategy_name_;
  std::unique_ptr<halo::Strategy> strategy_;  // null with NCCL, which replaces it
  bool direct_ = false;                        // the strategy writes device memory itself
  bool nccl_ = false;                          // grouped NCCL send/receives instead of a strategy
  RemoteTargets remote_;
  Timers* timers_;
  std::string t_pack_, t_post_, t_wait_, t_unpack_;  // phase region names
};

}  // namespace beatnik::comm
