#include "beatnik/comm/halo_exchange.hpp"

#include <algorithm>

#include "beatnik/comm/halo/registry.hpp"
#include "beatnik/comm/message_trace.hpp"
#include "beatnik/exec/parallel_for.hpp"

namespace beatnik::comm {
namespace {

// Region of direction (di, dj): owned strip next to that side (send) or ghost strip beyond it
// (receive).
void add_region(HaloRegions& r, const GhostedLayout& L, int depth, int di, int dj, bool ghost) {
  auto range = [&](int d, int n, int& lo, int& hi) {
    if (d == 0) {
      lo = 0;
      hi = n;
    } else if (d < 0) {
      lo = ghost ? -depth : 0;
      hi = ghost ? 0 : depth;
    } else {
      lo = ghost ? n : n - depth;
      hi = ghost ? n + depth : n;
    }
  };
  const int k = r.n++;
  range(di, L.ni, r.i0[k], r.i1[k]);
  range(dj, L.nj, r.j0[k], r.j1[k]);
  r.offset[k + 1] = r.offset[k] + long(r.i1[k] - r.i0[k]) * (r.j1[k] - r.j0[k]);
}

// Buffer element k -> (component, local i, local j). The buffer holds one message per region,
// back to back; inside a message, component planes follow each other.
BEATNIK_HOST_DEVICE inline void locate(const HaloRegions& r, int ncomp, long k, int& c, int& i,
                                       int& j, int& s) {
  s = 0;
  while (k >= r.offset[s + 1] * ncomp) ++s;
  const long count = r.offset[s + 1] - r.offset[s];
  long e = k - r.offset[s] * ncomp;
  c = static_cast<int>(e / count);
  e -= c * count;
  const int w = r.j1[s] - r.j0[s];
  i = r.i0[s] + static_cast<int>(e / w);
  j = r.j0[s] + static_cast<int>(e % w);
}

}  // namespace

HaloLinks plan_halo(const std::array<int, 8>& neighbors, GhostedLayout layout, HaloPattern pattern) {
  HaloLinks l;
  for (int d = 0; d < 8; ++d) {
    const auto off = direction_offset(d);
    const bool corner = off[0] != 0 && off[1] != 0;
    if (corner && !pattern.corners) continue;
    const int peer = neighbors[d];
    if (peer == MPI_PROC_NULL) continue;
    // Send towards d the strip next to side d; the neighbour there files it under -d.
    const int s = l.send.n;
    add_region(l.send, layout, pattern.depth, off[0], off[1], false);
    l.send_peer[s] = peer;
    l.send_tag[s] = d;
    const int r = l.recv.n;
    add_region(l.recv, layout, pattern.depth, off[0], off[1], true);
    l.recv_peer[r] = peer;
    l.recv_tag[r] = direction_index(-off[0], -off[1]);
  }
  return l;
}

HaloExchange::HaloExchange(const CartGrid& grid, GhostedLayout layout, HaloPattern pattern,
                           int ncomp, exec::Space space, std::vector<int> locality,
                           CommStats* stats, std::string name, Transport* transport, HaloRun run)
    : grid_(grid),
      layout_(layout),
      pattern_(pattern),
      ncomp_(ncomp),
      space_(space),
      locality_(std::move(locality)),
      stats_(stats),
      name_(std::move(name)),
      transport_(transport ? transport : &basic_transport(space)),
      strategy_name_(std::move(run.strategy)),
      timers_(run.timers) {
  if (transport_->space() != space) throw Error("halo exchange: transport and field live in different spaces");
  if (ncomp < 1 || ncomp > ComponentSet::max) throw Error("halo exchange: bad component count");
  if (pattern.depth > layout.g) throw Error("halo exchange: depth exceeds ghost layers");
  if (layout.ni < pattern.depth || layout.nj < pattern.depth)
    throw Error("halo exchange: a rank owns fewer nodes than the halo depth");
  const HaloLinks links = plan_halo(grid.neighbors(), layout, pattern);
  send_ = links.send;
  recv_ = links.recv;
  std::copy(links.send_peer, links.send_peer + 8, send_peer_);
  std::copy(links.recv_peer, links.recv_peer + 8, recv_peer_);
  std::copy(links.send_tag, links.send_tag + 8, send_tag_);
  std::copy(links.recv_tag, links.recv_tag + 8, recv_tag_);
  const long total = send_.offset[send_.n] * ncomp_;
  send_buf_ = exec::Buffer<double>(space, total);
  recv_buf_ = exec::Buffer<double>(space, total);
  // NCCL has no tags: messages between two ranks match in posting order. Sends go out in
  // direction order, so receives are posted in the order of the sender's direction (the tag).
  int order[8];
  for (int r = 0; r < recv_.n; ++r) order[r] = r;
  std::stable_sort(order, order + recv_.n, [&](int a, int b) { return recv_tag_[a] < recv_tag_[b]; });
  for (int k = 0; k < recv_.n; ++k) {
    const int r = order[k];
    recv_msg_[k] = Message{recv_peer_[r], recv_.offset[r] * ncomp_ * long(sizeof(double)),
                           (recv_.offset[r + 1] - recv_.offset[r]) * ncomp_ * long(sizeof(double))};
  }
  for (int s = 0; s < send_.n; ++s)
    send_msg_[s] = Message{send_peer_[s], send_.offset[s] * ncomp_ * long(sizeof(double)),
                           (send_.offset[s + 1] - send_.offset[s]) * ncomp_ * long(sizeof(double))};
  const int me = grid.rank();
  std::vector<bool> recv_used(recv_.n, false);
  for (int s = 0; s < send_.n; ++s) {
    int match = -1;
    if (send_peer_[s] == me)
      for (int r = 0; r < recv_.n && match < 0; ++r)
        if (!recv_used[r] && recv_peer_[r] == me && recv_tag_[r] == send_tag_[s]) match = r;
    if (match < 0) {
      remote_send_.push_back(s);
      continue;
    }
    recv_used[match] = true;
    self_src_.p[match] = send_buf_.data() + send_.offset[s] * ncomp_;
  }
  for (int r = 0; r < recv_.n; ++r)
    if (!recv_used[r]) remote_recv_.push_back(r);
  // Refused alike on every rank: the transport and the name are the same everywhere.
  const halo::StrategyEntry& entry = halo::find_strategy(strategy_name_, transport_->kind());
  const std::string region = run.region.empty() ? name_ : run.region;
  t_pack_ = region + ".pack";
  t_post_ = region + ".post";
  t_wait_ = region + ".wait";
  t_unpack_ = region + ".unpack";
  direct_ = entry.device_direct;
  nccl_ = transport_->uses_nccl() && !direct_;  // device-ipc replaces the NCCL halo
  if (nccl_) return;
  if (direct_ && space != exec::Space::Device)
    throw NotAvailable("halo strategy " + strategy_name_ + " moves device memory: it runs with -x cuda only");
  // Staging buffers are allocated once here, so the strategy's requests and windows can point
  // at them for the exchange's lifetime.
  if (transport_->kind() == TransportKind::Staged && !direct_) {
    send_host_.reserve(std::max<long>(total, 1) * sizeof(double));
    recv_host_.reserve(std::max<long>(total, 1) * sizeof(double));
    mpi_send_ = reinterpret_cast<const double*>(send_host_.data());
    mpi_recv_ = reinterpret_cast<double*>(recv_host_.data());
  } else {
    mpi_send_ = send_buf_.data();
    mpi_recv_ = recv_buf_.data();
  }
  halo::Setup setup{grid.comm(), {}, {}, mpi_send_, mpi_recv_, total, total, name_};
  for (int s : remote_send_)
    setup.sends.push_back(halo::Link{send_peer_[s], send_tag_[s], send_.offset[s] * ncomp_,
                                     (send_.offset[s + 1] - send_.offset[s]) * ncomp_});
  for (int r : remote_recv_)
    setup.recvs.push_back(halo::Link{recv_peer_[r], recv_tag_[r], recv_.offset[r] * ncomp_,
                                     (recv_.offset[r + 1] - recv_.offset[r]) * ncomp_});
  strategy_ = entry.make(setup);
  if (direct_)
    for (size_t k = 0; k < remote_send_.size(); ++k) remote_.p[remote_send_[k]] = strategy_->remote_target(int(k));
}

HaloExchange::~HaloExchange() = default;

void HaloExchange::start(const ComponentSet& comps) {
  if (comps.n != ncomp_) throw Error("halo exchange '" + name_ + "': component count mismatch");
  const long total = send_.offset[send_.n] * ncomp_;
  double* buf = send_buf_.data();
  {
    Timers::Scope t(timers_, t_pack_);
    // Device-direct strategies: remote messages are packed straight into the peer's buffer,
    // once the peer has read the last ones.
    if (direct_) strategy_->before_pack();
    const RemoteTargets remote = remote_;
    const HaloRegions regions = send_;
    const GhostedLayout L = layout_;
    const ComponentSet cs = comps;
    const int nc = ncomp_;
    exec::parallel_for(space_, total, [=] BEATNIK_HOST_DEVICE(long k) {
      int c, i, j, s;
      locate(regions, nc, k, c, i, j, s);
      double* to = remote.p[s] ? remote.p[s] + (k - regions.offset[s] * nc) : buf + k;
      *to = cs.p[c][L.index(i, j)];
    });
  }
  if (stats_) {
    for (int s = 0; s < send_.n; ++s) stats_->add_message(name_, locality_[send_peer_[s]], send_msg_[s].bytes);
    stats_->add_call(name_);
    if (MessageTrace* tr = stats_->trace()) {  // open until finish()
      const double t = wall_seconds();
      for (int s = 0; s < send_.n; ++s) tr->send(name_, this, grid_.comm(), send_peer_[s], send_msg_[s].bytes, t);
      for (int r = 0; r < recv_.n; ++r) tr->recv(name_, this, grid_.comm(), recv_peer_[r], recv_msg_[r].bytes, t);
    }
  }
  Timers::Scope t(timers_, t_post_);
  if (nccl_) {  // queued on the device; finish() needs no wait
    transport_->nccl_exchange(grid_.comm(), buf, send_msg_, send_.n, recv_buf_.data(), recv_msg_, recv_.n);
    return;
  }
  // Staged: the packed buffer goes to its pinned copy; cuda-aware: the packing kernel finishes.
  if (!remote_send_.empty() && !direct_) {
    const size_t bytes = static_cast<size_t>(total) * sizeof(double);
    if (transport_->mpi_send_buffer(buf, bytes, send_host_) != mpi_send_)
      throw Error("halo exchange '" + name_ + "': the transport moved the MPI send buffer");
  }
  strategy_->start();  // every rank, every exchange: collective strategies need all of them
}

void HaloExchange::finish(const ComponentSet& comps) {
  const long total = recv_.offset[recv_.n] * ncomp_;
  if (!nccl_) {
    Timers::Scope t(timers_, t_wait_);
    strategy_->finish();
    if (!remote_recv_.empty() && !direct_)
      transport_->mpi_received(recv_buf_.data(), mpi_recv_, static_cast<size_t>(total) * sizeof(double));
  }
  if (stats_ && stats_->trace()) stats_->trace()->complete(name_, this, wall_seconds());
  Timers::Scope t(timers_, t_unpack_);
  // Messages to self (MPI transports, device-ipc beside NCCL included) are read from the send
  // buffer where they were packed, in the same pass; they never go through recv_buf_ (which the
  // staged copy-back overwrites).
  const SelfSources self = nccl_ ? SelfSources{} : self_src_;
  const HaloRegions regions = recv_;
  const GhostedLayout L = layout_;
  const ComponentSet cs = comps;
  const int nc = ncomp_;
  const double* buf = recv_buf_.data();
  exec::parallel_for(space_, total, [=] BEATNIK_HOST_DEVICE(long k) {
    int c, i, j, s;
    locate(regions, nc, k, c, i, j, s);
    cs.p[c][L.index(i, j)] = self.p[s] ? self.p[s][k - regions.offset[s] * nc] : buf[k];
  });
  if (direct_) strategy_->after_unpack();
}

}  // namespace beatnik::comm
