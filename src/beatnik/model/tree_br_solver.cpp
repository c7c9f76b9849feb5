#include "beatnik/model/tree_br_solver.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iterator>
#include <limits>
#include <string>

#include "beatnik/base/env.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/exec/scratch.hpp"
#include "beatnik/model/br_kernel.hpp"
#include "beatnik/model/br_particles.hpp"
#include "beatnik/model/tree_lagrange.hpp"
#include "beatnik/model/br_migrate.hpp"
#include "beatnik/model/tree_pull.hpp"
#include "beatnik/model/br_targets_host.hpp"

namespace beatnik::model {

using tree::grid_degrees;
using tree::interpolate;

TreeParameters tree_parameters(double tolerance, bool dual) {
  if (tolerance < 1e-9) return {0.3, 16};
  // The single traversal's error on a free sech² surface sits at 0.8–1.3 of TOL from 256² to
  // 2048² with the dual's column (docs/tree-log.md "The single traversal's degrees"; the dual's stays
  // 10–30 below): it takes θ 0.35 at 1e-3 and 1e-6, faster on the GPU than two degrees more at θ
  // 0.4 and at least 3.8 below TOL from 256² to 2048² ("The single column at θ 0.35"), and two
  // degrees more at 1e-9.
  // The dual's θ 0.45 at 1e-3: 25 % fewer pairs than 0.4, at least 20 below TOL from 48² to 1024²
  // periodic and free on 1–4 ranks ("The LET and the dual traversal"; 0.5 left 6 at 48²).
  // The edge terms' margin 1.0 (the plain rule) from 1e-6 up (1.5 below, where it was needed at
  // 48² on 3 ranks): 40 % fewer edge pairs than 1.5, errors within 1.2× of 1.5's from 256² to
  // 2048² and up to 4.6× at 48², at least 13 below TOL from 48² to 2048² on 1–4 ranks (docs/tree-log.md
  // "The edge terms' margin"; 1.1 until 2026-12-02, fourth session: 3–8 % slower at 1024² on one
  // H200).
  constexpr double m = 1.0;
  if (tolerance >= 1e-3) return dual ? TreeParameters{0.45, 4, m} : TreeParameters{0.35, 4, m};
  if (tolerance >= 1e-6) return dual ? TreeParameters{0.4, 8, m} : TreeParameters{0.35, 8, m};
  return {0.4, dual ? 12 : 16};
}

bool tree_device_build() {
  static const bool device = env::choice("BEATNIK_TREE_BUILD", {"host", "device"}) != "host";
  return device;
}

bool tree_device_migration() {
  return env::choice("BEATNIK_TREE_MIGRATE", {"host", "device"}) != "host";
}

// (tree_overlap(): tree_upward.cpp, where the passes read it too.)

namespace {
// Where a solver in `space` migrates (TreeBRSolver::mig_space_).
exec::Space migration_space(exec::Space space) {
  if (space == exec::Space::Host) return space;
  return tree_device_build() && tree_device_migration() ? space : exec::Space::Host;
}

// BEATNIK_TREE_MARKS=1 (measurement only): the host's timeline of each call, wall-clock marks
// in ms from the call's start, printed to stderr when the call ends (main thread only).
struct Marks {
  bool on = env::integer("BEATNIK_TREE_MARKS", 0, 1).value_or(0) == 1;
  double t0 = 0.0;
  std::string line;
  void start() {
    if (on) t0 = wall_seconds(), line.clear();
  }
  void operator()(const char* what, int k = -1) {
    if (!on) return;
    char b[64];
    if (k >= 0) std::snprintf(b, sizeof b, " %s%d=%.2f", what, k, 1e3 * (wall_seconds() - t0));
    else std::snprintf(b, sizeof b, " %s=%.2f", what, 1e3 * (wall_seconds() - t0));
    line += b;
  }
  void print() {
    if (on) std::fprintf(stderr, "tree marks:%s\n", line.c_str());
  }
};
Marks& marks() {
  static Marks m;
  return m;
}
}  // namespace

void tree_mark(const char* what) { marks()(what); }

TreeBRSolver::TreeBRSolver(const mesh::SurfaceMesh& mesh, exec::Space space, const BRSettings& settings,
                           double epsilon, comm::CommStats* stats, Timers* timers, const ComputeGate* gate)
    : mesh_(mesh),
      space_(space),
      settings_(settings),
      eps_(epsilon),
      timers_(timers),
      gate_(gate),
      spatial_(mesh.grid().comm(), mesh.grid().dims(),
               {-0.5 * mesh.geometry().period[0], -0.5 * mesh.geometry().period[1]},
               {0.5 * mesh.geometry().period[0], 0.5 * mesh.geometry().period[1]}, settings.partition,
               migration_space(space)),
      by_dest_(migration_space(space)),
      mig_space_(migration_space(space)),
      recv_(migration_space(space), 0) {
  if (settings.tree_degree < 0 || settings.tree_degree > kTreeMaxDegree)
    throw InputError("--tree-degree must lie in 0.." + std::to_string(kTreeMaxDegree));
  rank_ = mesh.grid().rank();
  size_ = mesh.grid().size();
  if (const std::optional<std::string> v = env::choice("BEATNIK_TREE_DUAL_LISTS", {"reference", "fast"}))
    dual_reference = *v == "reference";
  rules_ = tree_rules(settings_, mesh.geometry());
  settings_.tree_edge = rules_.edge;
  n_ = mesh.layout().owned_count();
  // The host copy of the packed particles, only where the migration runs on the host: -x host
  // packs there; -x cuda downloads into it, and the velocities pass through it on their way up.
  // One rank with the device build migrates nothing (velocity(): local_): no buffers.
  const size_t m = space_ == exec::Space::Device && tree_device_build() && size_ == 1 ? 0 : size_t(n_);
  if (mig_space_ == exec::Space::Host) pts_.resize(6 * n_);
  keys_ = exec::Buffer<int>(mig_space_, m);
  send_ = exec::Buffer<double>(mig_space_, 6 * m);
  back_send_ = exec::Buffer<double>(mig_space_, 0);
  back_recv_ = exec::Buffer<double>(mig_space_, 3 * m);
  // Migrating on the device, the records travel with the run's GPU transport (staged,
  // cuda-aware or NCCL), as the cutoff solver's; on the host with host MPI.
  migrator_ = std::make_unique<comm::Migrator>(mesh.grid().comm(), mig_space_, settings.migrate_strategy,
                                               mesh.locality(), stats,
                                               mig_space_ == exec::Space::Device ? mesh.transport() : nullptr);
  // On -x cuda the LET's blocks travel with the run's GPU transport (push strategies over NCCL).
  let_ = std::make_unique<comm::LetExchange>(mesh.grid().comm(), settings.let_strategy, mesh.locality(), stats,
                                             space_ == exec::Space::Device ? mesh.transport() : nullptr);
  if (space_ == exec::Space::Device) {
    device_ = std::make_unique<TreeSumsDevice>();
    upward_dev_ = std::make_unique<TreeUpward>(space_);
    low_dev_ = std::make_unique<TreeLowPass>(space_);
    let_copy_ = exec::SegmentCopy(space_);
    dev_pts_ = exec::Buffer<double>(space_, 6 * n_);
    if (tree_device_build()) build_dev_ = std::make_unique<TreeBuildDevice>(space_);
  }
}

std::vector<TreeLoad> TreeBRSolver::take_loads() {
  std::vector<TreeLoad> out;
  out.swap(loads_);
  return out;
}

size_t TreeBRSolver::buffer_bytes() const {
  size_t b = (pts_.size() + send_.size() + recv_.size() + own_.size() + acc_near_.size() + acc_far_.size() +
              back_send_.size() + back_recv_.size()) *
             sizeof(double);
  b += let_->buffer_bytes();
  b += keys_.size() * sizeof(int);
  for (const auto& t : sources_) {
    b += (t.pts.size() + t.proxies.size()) * sizeof(double) + t.clusters.size() * sizeof(search::Cluster);
    b += t.proxy_start.size() * sizeof(long) + t.proxy_count.size() * sizeof(int) + t.full.size();
  }
  for (const auto& l : low_)
    b += (l.pts.size() + l.theta.size()) * sizeof(double) + l.start.size() * sizeof(long) +
         (l.first.size() + l.count.size() + l.degrees.size()) * sizeof(int);
  for (const auto* l : {&near_, &far_, &edge_})
    for (const auto& v : *l) b += v.size() * sizeof(Term);
  for (const auto& t : tables_) b += t.bytes();
  for (const auto& v : cc_) b += v.size() * sizeof(Term);
  b += grid_u_.size() * sizeof(double);
  return b;
}

void TreeBRSolver::velocity(const mesh::Field& state, const mesh::Field& omega, const mesh::Field& out) {
  load_ = TreeLoad{};
  load_.surface = n_;
  low0_ = false;
  marks().start();
  {
    Timers::Scope t(timers_, "br.tree.to_spatial");
    local_ = false;
    if (device_) {  // positions from the device state
      pack_br_particles(mesh_, settings_, space_, state, omega, dev_pts_.data());
      if (build_dev_ && size_ == 1) {
        // One rank, the tree built on the device: every particle stays here in surface order
        // (the migration would be the identity), the tree is built straight from dev_pts_.
        local_ = true;
        broken_ = !build_dev_->finite(dev_pts_.data(), 3 * n_);
        nown_ = n_;
      } else if (mig_space_ == space_) {  // several ranks, migrated on the device
        to_spatial(dev_pts_.data());
      } else {  // BEATNIK_TREE_MIGRATE=host or BEATNIK_TREE_BUILD=host: through the host
        exec::copy(pts_.data(), exec::Space::Host, dev_pts_.data(), space_, 6 * n_);
        to_spatial(pts_.data());
      }
    } else {
      pack_br_particles(mesh_, settings_, exec::Space::Host, state, omega, pts_.data());
      to_spatial(pts_.data());
    }
  }
  if (broken_ && device_) {
    tree_nan_field(mesh_, out);
    loads_.push_back(load_);
    return;
  }
  if (broken_) {
    // Non-finite positions (the health check stops the run after this step): NaN velocities.
    const mesh::FieldView o = out.view();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int i = 0; i < mesh_.layout().ni; ++i)
      for (int j = 0; j < mesh_.layout().nj; ++j) o(0, i, j) = o(1, i, j) = o(2, i, j) = nan;
    loads_.push_back(load_);
    return;
  }
  load_.particles = nown_;
  // The device passes overlapped with the host's work (docs/tree-log.md "One overlap design"): the
  // sets not waited for at any rank count; the upward pass where nothing reads its proxies on the
  // host (upward_queues).
  overlap_ = device_ && computes(gate_) && tree_overlap();
  {
    Timers::Scope t(timers_, "br.tree.build");
    build();
  }
  marks()("built");
  {
    Timers::Scope t(timers_, "br.tree.upward");
    upward();
  }
  marks()("upward");
  {
    Timers::Scope t(timers_, "br.tree.let");
    exchange_let();
    if (size_ > 1) upward_finish();  // (in exchange_let already when the LET is gathered on the device)
  }
  marks()("let");
  {
    Timers::Scope t(timers_, "br.tree.low");
    low_.resize(sources_.size());
    if (!computes(gate_)) gate_->stand_in("br.tree.low");
    else if (device_) low_device();
    else for (int k = 0; k < static_cast<int>(sources_.size()); ++k) low_sets(k);
  }
  marks()("low");
  {
    Timers::Scope t(timers_, "br.tree.compute");
    if (device_ && computes(gate_)) {  // a skeleton's stand-ins are the host phases'
      compute_device();
    } else {
      {
        Timers::Scope l(timers_, "br.tree.compute.lists");
        if (settings_.tree_dual) dual_lists();
        else lists(0, batches());
      }
      {
        Timers::Scope l(timers_, "br.tree.compute.near");
        near();
      }
      {
        Timers::Scope l(timers_, "br.tree.compute.far");
        far();
      }
    }
    if (!(device_ && computes(gate_))) {  // compute_device() sums the edge terms on the device
      Timers::Scope l(timers_, "br.tree.compute.edge");
      edges();
    }
    if (settings_.tree_dual && !(device_ && computes(gate_))) {  // (-x cuda: on the device, compute_device)
      Timers::Scope l(timers_, "br.tree.compute.down");
      down();
    }
  }
  marks()("computed");
  {
    Timers::Scope t(timers_, "br.tree.to_surface");
    to_surface(out);
  }
  marks()("end");
  marks().print();
  loads_.push_back(load_);
  ++totals_.calls;
  totals_.direct_pairs += load_.direct_pairs;
  totals_.cluster_terms += load_.cluster_terms;
  totals_.low_terms += load_.low_terms;
  totals_.proxy_pairs += load_.proxy_pairs;
  totals_.let_bytes += load_.let_bytes;
  totals_.edge_terms += load_.edge_terms;
  totals_.edge_proxy_pairs += load_.edge_proxy_pairs;
  totals_.edge_direct_pairs += load_.edge_direct_pairs;
  totals_.cc_terms += load_.cc_terms;
  totals_.cc_pairs += load_.cc_pairs;
  totals_.down_pairs += load_.down_pairs;
  totals_.down_merged += load_.down_merged;
}

// Cuts from the current positions, then every particle to the owner of its cell (as the cutoff
// solver: records of 6 grouped by destination). p: the packed particles in mig_space_, where
// everything here runs (br_migrate.hpp).
void TreeBRSolver::to_spatial(const double* p) {
  const long n = n_;
  broken_ = !spatial_.update(p, p + n, n);
  if (broken_) return;
  br_owner_keys(mig_space_, spatial_.view(), p, n, keys_.data());
  by_dest_.sort(keys_.data(), n, size_);
  const std::vector<long>& off = by_dest_.host_offsets();
  send_counts_.assign(size_, 0);
  for (int r = 0; r < size_; ++r) send_counts_[r] = off[r + 1] - off[r];
  br_pack_records(mig_space_, by_dest_.order(), p, n, 6, send_.data());
  migrator_->exchange(send_counts_, send_.data(), 6, recv_counts_, recv_, "migrate");
  nown_ = 0;
  for (long c : recv_counts_) nown_ += c;
}

void build_source_tree(search::ClusterTree& tree, const double* own, long n, int leaf, tree::SourceTree& t) {
  tree.build(own, own + n, own + 2 * n, n, leaf);
  const std::vector<long>& order = tree.order();
  t.n = n;
  t.remote = false;
  t.clusters = tree.clusters();
  t.full.assign(t.clusters.size(), 1);
  t.pts.resize(6 * n);
#pragma omp parallel for
  for (long q = 0; q < n; ++q)
    for (int c = 0; c < 6; ++c) t.pts[c * n + q] = own[c * n + order[q]];
}

tree::Rules tree_rules(const BRSettings& settings, const mesh::Geometry& geo) {
  const bool edge = settings.tree_edge;
  BRImages images;
  images.k = settings.images;
  images.centred = settings.centred;
  for (int d = 0; d < 2; ++d) images.period[d] = geo.periodic[d] ? geo.period[d] : 0.0;
  tree::Rules r = tree::make_rules(images, settings.tree_theta, edge, settings.tree_dual);
  r.edge_margin = settings.tree_edge_margin;
  return r;
}

std::vector<int> layout_proxies(tree::SourceTree& t, int p, double theta) {
  const auto& cl = t.clusters;
  const int nc = static_cast<int>(cl.size());
  t.proxy_start.assign(nc, -1);
  t.proxy_count.assign(nc, 0);
  long total = 0;
  std::vector<int> deg(3 * size_t(nc)), grid(nc);
  // The degrees over every thread (a few logarithms per side: most of the layout's time), the
  // offsets in cluster order. BEATNIK_TREE_OVERLAP=0: one thread, as before (the A/B).
  const double log_theta = tree::grid_log_theta(theta);
#pragma omp parallel for schedule(static) if (tree_overlap())
  for (int c = 0; c < nc; ++c) grid[c] = grid_degrees(cl[c], p, theta, log_theta, &deg[3 * size_t(c)]);
  for (int c = 0; c < nc; ++c) {
    const int m = grid[c];
    if (theta > 0.0 && cl[c].count() > m) {
      t.proxy_start[c] = total;
      t.proxy_count[c] = m;
      total += 6L * m;
    }
  }
  // Sized, not cleared: the upward pass writes every value (on the host, or the download with
  // several ranks); one rank on the device reads only the array's address. Clearing tens of MB
  // a call cost more than the upward pass's host work.
  t.proxies.resize(total);
  return deg;
}

// The tree over the owned particles, and the particles in tree order (sources_[0]).
void TreeBRSolver::build() {
  const long n = nown_;
  if (sources_.empty()) sources_.resize(1);  // the LET parts after it are unpacked into again (exchange_let)
  if (build_dev_) {  // -x cuda: on the device (tree_build_device.hpp)
    double up_s = 0.0;
    const double* src = dev_pts_.data();  // one rank: surface order, as packed
    if (!local_) {  // several ranks: the received records as columns
      const double t0 = wall_seconds();
      exec::grow(dev_own_, space_, std::max<size_t>(6 * n, 1));
      if (mig_space_ == space_) {  // received on the device: transposed there
        br_unpack_records(space_, recv_.data(), n, 6, dev_own_.data());
      } else {  // BEATNIK_TREE_MIGRATE=host: transposed on the host, up
        own_.resize(6 * n);
        br_unpack_records(exec::Space::Host, recv_.data(), n, 6, own_.data());
        exec::copy(dev_own_.data(), space_, own_.data(), exec::Space::Host, 6 * n);
        up_s = wall_seconds() - t0;
      }
      src = dev_own_.data();
    }
    // The tree's order (tree position -> particle) on the host only where the host reads it: the
    // velocities' return through the host (to_surface). The device path reads the device copy.
    const bool host_order = mig_space_ != space_ || !tree_overlap();
    build_dev_->run(src, n, settings_.tree_leaf, tree_, host_order);
    tree::SourceTree& t = sources_[0];
    t.n = n;
    t.remote = false;
    {  // (in parallel into the storage kept from the last call: on the host's path to the upward pass)
      const std::vector<search::Cluster>& from = tree_.clusters();
      const long nc = static_cast<long>(from.size());
      t.clusters.resize(from.size());
      t.full.resize(from.size());
#pragma omp parallel for schedule(static)
      for (long c = 0; c < nc; ++c) t.clusters[c] = from[c], t.full[c] = 1;
    }
    // The host copy of the particles in tree order: the LET's blocks packed on the host (several
    // ranks, unless let_on_device) and a skeleton's host phases read it; otherwise only its
    // address and length are (the sums' pools and the device pack read the device build's array).
    const double t1 = wall_seconds();
    t.pts.resize(6 * n);
    if ((size_ > 1 && !let_on_device()) || !computes(gate_)) build_dev_->download(t.pts.data());
    const double down_s = wall_seconds() - t1;
    if (timers_) {
      timers_->add("br.tree.build.copy", up_s + build_dev_->copy_s + down_s);
      timers_->add("br.tree.build.kernel", build_dev_->kernel_s);
    }
    load_.clusters = static_cast<long>(t.clusters.size());
    return;
  }
  own_.resize(6 * n);
  br_unpack_records(exec::Space::Host, recv_.data(), n, 6, own_.data());
  build_source_tree(tree_, own_.data(), n, settings_.tree_leaf, sources_[0]);
  load_.clusters = static_cast<long>(sources_[0].clusters.size());
}

namespace {
// BEATNIK_TREE_LET_FILL=trees: -x cuda copies the LET parts into their trees' host arrays and
// the device pools from those (the path before the parts went to the pools as received).
bool let_fill_from_trees() {
  static const bool trees = env::choice("BEATNIK_TREE_LET_FILL", {"trees", "pools"}) == "trees";
  return trees;
}
// BEATNIK_TREE_LET_PACK=host: the LET over NCCL packed on the host and copied up and back whole
// (the path before the device pack; the A/B).
bool let_pack_on_host() {
  static const bool host = env::choice("BEATNIK_TREE_LET_PACK", {"host", "device"}) == "host";
  return host;
}
}  // namespace

// -x cuda with the LET pushed by NCCL: the blocks' particles and proxies are gathered on the
// device from the upward pass's copies (exchange_let), so the proxies do not come back to the
// host, nor the received particles and proxies.
bool TreeBRSolver::let_on_device() const {
  return device_ && computes(gate_) && size_ > 1 && let_->sends_from_device() && !let_fill_from_trees() &&
         !let_pack_on_host();
}

// Whether this call's upward pass is queued without waiting (overlap_): on one rank nothing reads
// its proxies on the host (no LET), so it is finished only after the sums (compute_device): the
// sets' layout, their descriptors and the first lists are made beside it. With several ranks
// and the LET gathered on the device, the LET's owner walk and nodes, the target boxes'
// all-gather and the own tree's lower-degree layout need only the tree and the proxies' layout,
// not their strengths: they run beside it, and exchange_let finishes it before the gather of
// the proxies. A LET packed or pulled on the host reads the proxies there: waited for.
bool TreeBRSolver::upward_queues() const {
  return overlap_ && upward_dev_ && (size_ == 1 || let_on_device());
}

// Proxy sources of every cluster with more sources than proxies, straight from its sources.
void TreeBRSolver::upward() {
  tree::SourceTree& t = sources_[0];
  const auto& cl = t.clusters;
  const int nc = static_cast<int>(cl.size());
  const std::vector<int> deg = layout_proxies(t, settings_.tree_degree, settings_.tree_theta);
  marks()("uplayout");
  if (!computes(gate_)) return gate_->stand_in("br.tree.upward");  // the LET needs only the layout
  if (upward_dev_) {  // -x cuda: the same sums on the device, depth by depth (tree_upward.hpp)
    // The proxies stay on the device (the far pool copies them there); only a LET packed on the
    // host needs them back. With the device build its sources are already there in tree order
    // (no upload).
    // Overlapped (upward_queues): queued, not waited for; finished (its kernel time read) in
    // exchange_let with several ranks, after the sums with one.
    upward_dev_->run(build_dev_ ? build_dev_->sources() : t.pts.data(), t.n, cl, t.proxy_start, t.proxy_count, deg,
                     settings_.tree_degree, t.proxies.data(), static_cast<long>(t.proxies.size()),
                     size_ > 1 && !let_on_device(), build_dev_ != nullptr, !upward_queues());
    if (timers_) {
      timers_->add("br.tree.upward.copy", upward_dev_->upload_s + upward_dev_->download_s);
      if (!upward_dev_->pending()) timers_->add("br.tree.upward.kernel", upward_dev_->kernel_s);
    }
    return;
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (int c = 0; c < nc; ++c)
    if (t.proxy_start[c] >= 0)
      interpolate(cl[c], &deg[3 * c], t.pts.data(), t.n, cl[c].begin, cl[c].end, &t.proxies[t.proxy_start[c]],
                  t.proxy_count[c]);
}

// The end of an upward pass queued without waiting (nothing otherwise): its passes' device time
// (events), the download, and the time the host waited for it (br.tree.upward.wait: what the
// host's work beside it did not cover; ~0 on one rank, where it is finished after the sums).
void TreeBRSolver::upward_finish() {
  if (!upward_dev_ || !upward_dev_->pending()) return;
  upward_dev_->finish();
  if (!timers_) return;
  timers_->add("br.tree.upward.copy", upward_dev_->download_s);
  timers_->add("br.tree.upward.kernel", upward_dev_->kernel_s);
  timers_->add("br.tree.upward.wait", upward_dev_->wait_s);
}

// Lower-degree proxy sets of every cluster of tree s that has its sources or its degree-p
// proxies, on the host (tree_low.hpp).
void TreeBRSolver::low_sets(int s) {
  tree::low_layout(sources_[s], settings_.tree_degree, settings_.tree_theta, low_[s]);
  tree::low_strengths(sources_[s], settings_.tree_degree, settings_.tree_theta, low_[s]);
}

// -x cuda: the sets' layout on the host, their strengths on the device straight into the far
// pool (tree_low_device.hpp). So the pools are placed here: the near pool holds every tree's
// sources, the far pool its degree-p proxies, then its sets (compute_device's ranges point into
// the same arrays); this tree's sources and proxies are copied from the upward pass's device
// buffers, the LET parts' from the host.
void TreeBRSolver::low_device() {
  const int nt = static_cast<int>(sources_.size());
  const int p = settings_.tree_degree;
  const double theta = settings_.tree_theta;
  TreeSumsDevice::Arrays near, far;
  if (size_ > 1) upward_finish();  // (several ranks: in exchange_let already; one rank: after the sums)
  marks()("lowstart");
  const double t0 = wall_seconds();
  for (int s = low0_ ? 1 : 0; s < nt; ++s) tree::low_layout(sources_[s], p, theta, low_[s]);
  low0_ = false;
  if (timers_) timers_->add("br.tree.low.layout", wall_seconds() - t0);
  for (int s = 0; s < nt; ++s) {
    near.emplace_back(sources_[s].pts.data(), static_cast<long>(sources_[s].pts.size()));
    far.emplace_back(sources_[s].proxies.data(), static_cast<long>(sources_[s].proxies.size()));
  }
  for (const LowSets& l : low_) far.emplace_back(l.pts.data(), static_cast<long>(l.pts.size()));
  marks()("lowlayout");
  const double t = wall_seconds();
  device_->pools(near, far);
  marks()("pools");
  device_->fill(false, 0, upward_dev_->device_sources());
  device_->fill(true, 0, upward_dev_->device_proxies());
  // The LET parts from the blocks as received (device to device from the NCCL receive buffer,
  // else from the host blocks), or with BEATNIK_TREE_LET_FILL=trees from their host arrays as
  // before (the A/B).
  const bool from_trees = let_fill_from_trees();
  for (int s = 1; s < nt; ++s) {
    const LetArrays& a = let_in_.at(s - 1);
    device_->fill(false, s, from_trees ? nullptr : a.pts, a.space);
    device_->fill(true, s, from_trees ? nullptr : a.proxies, a.space);
  }
  // (One rank, overlapped: the fills are device to device, behind the upward pass still in
  // flight; nothing waits for the device here, .copy is then the host's time to queue them.
  // Several ranks keep the fence: the LET parts' copies come from the exchange's buffers.)
  if (!overlap_ || size_ > 1) exec::fence(space_);
  const double copy_s = wall_seconds() - t;
  marks()("fills");
  std::vector<TreeLowPass::Tree> trees;
  for (int s = 0; s < nt; ++s)
    trees.push_back({&sources_[s], &low_[s], device_->base(false, s), device_->base(true, s), device_->base(true, nt + s)});
  // Overlapped: queued, not waited for (the sums' streams follow it, TreeSumsDevice::begin);
  // its kernel time is read after the sums (compute_device).
  low_dev_->run(trees, p, theta, device_->pool(false), device_->pool(true), !overlap_);
  if (timers_) {
    timers_->add("br.tree.low.copy", copy_s + low_dev_->upload_s);
    timers_->add("br.tree.low.setup", low_dev_->setup_s);
    if (!low_dev_->pending()) timers_->add("br.tree.low.kernel", low_dev_->kernel_s);
  }
}

// The locally essential tree: every rank's target boxes to every rank, this rank's part for each
// other rank (from that rank's boxes), the parts for this rank in, one SourceTree per sending rank.
void TreeBRSolver::exchange_let() {
  constexpr int kWidth = tree::kLetBoxes * tree::kBoxWidth;
  std::vector<double> mine(kWidth);
  box_of_ = tree::target_box_records(sources_[0], mine.data());
  std::vector<double> boxes;
  {
    Timers::Scope t(timers_, "br.tree.let.exchange");
    boxes = let_->allgather(mine.data(), kWidth);
  }
  boxes_ = tree::target_boxes(&boxes[size_t(rank_) * kWidth]);
  let_send_counts_.assign(size_, 0);
  const double* in = nullptr;  // the received blocks, rank order
  if (let_->pulls()) {
    // Pulled (--let-strategy rma, model/tree_pull.hpp): this rank walks the others' trees
    // itself and ends with the blocks they would have pushed; let_bytes counts what it fetched.
    Timers::Scope t(timers_, "br.tree.let.exchange");
    std::vector<double> records;
    tree::LetPull walk(boxes_, rules_, size_);
    in = let_->pull(tree::expose(sources_[0], records), walk, let_recv_counts_);
    load_.let_bytes += walk.fetched() * long(sizeof(double));
  } else {
    double* send = nullptr;
    bool on_device = false;
    {
      // Every destination's block planned (each walk over every thread), placed in rank order,
      // then written in place (in parallel) in the strategy's send buffer.
      Timers::Scope t(timers_, "br.tree.let.pack");
      std::vector<tree::LetBlock> blocks(size_);
      for (int r = 0; r < size_; ++r)
        if (r != rank_) blocks[r] = tree::plan_let(sources_[0], tree::target_boxes(&boxes[size_t(r) * kWidth]), rules_);
      std::vector<long> at(size_ + 1, 0);
      for (int r = 0; r < size_; ++r) {
        let_send_counts_[r] = blocks[r].size;
        at[r + 1] = at[r] + blocks[r].size;
      }
      send = let_->send_buffer(at[size_]);
      // The nodes per destination; the particles' and proxies' copies, most of the bytes, then
      // over every thread (a destination each left most threads idle with few ranks).
      std::vector<std::vector<tree::LetCopy>> copies(size_);
#pragma omp parallel for schedule(dynamic, 1)
      for (int r = 0; r < size_; ++r) tree::write_let_nodes(sources_[0], blocks[r], send + at[r], copies[r]);
      for (int r = 1; r < size_; ++r) copies[0].insert(copies[0].end(), copies[r].begin(), copies[r].end());
      if (upward_dev_ && upward_dev_->pending()) {
        // Still beside the upward pass: the own tree's lower-degree layout (low_device skips it).
        Timers::Scope l(timers_, "br.tree.let.low_layout");
        if (low_.empty()) low_.resize(1);
        tree::low_layout(sources_[0], settings_.tree_degree, settings_.tree_theta, low_[0]);
        low0_ = true;
      }
      if (size_ > 1) upward_finish();  // the proxies' strengths, which the gather reads (one rank gathers none)
      on_device = let_on_device() && upward_dev_->device_sources();
      if (on_device) pack_let_device(send, at, copies[0]);
      else tree::copy_pieces(copies[0]);
    }
    Timers::Scope t(timers_, "br.tree.let.exchange");
    in = on_device ? let_->exchange_device(let_send_counts_, let_recv_counts_, tree::kLetHeader, tree::let_host_doubles)
                   : let_->exchange(let_send_counts_, send, let_recv_counts_);
  }
  Timers::Scope t(timers_, "br.tree.let.unpack");
  std::vector<long> from;  // the received blocks' offsets, rank order
  long off = 0;
  for (int r = 0; r < size_; ++r) {
    if (let_recv_counts_[r] > 0) from.push_back(off);
    off += let_recv_counts_[r];
  }
  // The last call's LET parts are reused in order: their arrays keep their capacity and pages.
  const size_t first = 1;
  sources_.resize(first + from.size());
  std::exception_ptr bad;  // a malformed block: thrown after the loop (not out of a parallel region)
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t k = 0; k < from.size(); ++k) {
    const long end = k + 1 < from.size() ? from[k + 1] : off;  // (empty blocks between add nothing)
    try {
      tree::unpack_let(in + from[k], end - from[k], sources_[first + k], false);
    } catch (...) {
#pragma omp critical(let_unpack)
      bad = std::current_exception();
    }
  }
  if (bad) std::rethrow_exception(bad);
  // Where each part's particles and proxies lie as received: with NCCL also on the device.
  const double* dev = let_->device_blocks();
  let_in_.clear();
  for (size_t k = 0; k < from.size(); ++k) {
    const auto [parts, prox] = tree::let_arrays(in + from[k]);
    if (dev) let_in_.push_back({dev + from[k] + parts, dev + from[k] + prox, exec::Space::Device});
    else let_in_.push_back({in + from[k] + parts, in + from[k] + prox, exec::Space::Host});
  }
  // -x cuda: the device pools copy the parts from there (low_device) and the host reads only
  // the parts' arrays' addresses (the ranges find their pool offsets by them), so the values
  // are not copied into those arrays.
  if (!(device_ && computes(gate_)) || let_fill_from_trees()) {
    // The particles and proxies, in pieces over every block at once (a few blocks would leave
    // most threads idle).
    std::vector<tree::LetCopy> copies;
    for (size_t k = 0; k < from.size(); ++k) {
      tree::SourceTree& t = sources_[first + k];
      const auto [parts, prox] = tree::let_arrays(in + from[k]);
      tree::add_copy(in + from[k] + parts, t.pts.data(), long(t.pts.size()), copies);
      tree::add_copy(in + from[k] + prox, t.proxies.data(), long(t.proxies.size()), copies);
    }
    tree::copy_pieces(copies);
  }
  for (size_t s = first; s < sources_.size(); ++s) {
    load_.let_clusters += static_cast<long>(sources_[s].clusters.size());
    load_.let_particles += sources_[s].n;
  }
  for (long c : let_send_counts_) load_.let_bytes += c * long(sizeof(double));
}

// The blocks in the device send buffer: the header and nodes written on the host (`send`, the
// blocks at `at`) go up, and the particles' and proxies' pieces are gathered on the device from
// the upward pass's copies of this rank's sources and proxies (the host arrays' layout).
void TreeBRSolver::pack_let_device(const double* send, const std::vector<long>& at, std::vector<tree::LetCopy>& copies) {
  double* dev = let_->device_send_buffer(at[size_]);
  for (int r = 0; r < size_; ++r)
    if (at[r + 1] > at[r])
      exec::copy(dev + at[r], space_, send + at[r], exec::Space::Host, size_t(tree::let_host_doubles(send + at[r])));
  const tree::SourceTree& t = sources_[0];
  const double *pts = t.pts.data(), *dev_pts = upward_dev_->device_sources();
  const double *prox = t.proxies.data(), *dev_prox = upward_dev_->device_proxies();
  const std::less<const double*> before;
  std::vector<exec::SegmentCopy::Piece> pieces;
  pieces.reserve(copies.size());
  for (const tree::LetCopy& c : copies) {
    const bool particles = !before(c.src, pts) && before(c.src, pts + t.pts.size());
    pieces.push_back({particles ? dev_pts + (c.src - pts) : dev_prox + (c.src - prox), dev + (c.dst - send), c.n});
  }
  let_copy_.run(pieces);
}

int TreeBRSolver::batches() const { return nown_ > 0 ? static_cast<int>(tree_.leaves().size()) : 0; }

// The centres and radii of every cluster of every source tree and of the target boxes, which the
// walks test against many times per call (tree::Ball: the same doubles).
void TreeBRSolver::balls() {
  balls_.resize(sources_.size());
  for (size_t s = 0; s < sources_.size(); ++s) {
    const auto& cl = sources_[s].clusters;
    balls_[s].resize(cl.size());
    const long n = static_cast<long>(cl.size());
#pragma omp parallel for schedule(static)
    for (long c = 0; c < n; ++c) balls_[s][c] = tree::ball(cl[c]);
  }
  box_balls_.resize(boxes_.size());
  for (size_t k = 0; k < boxes_.size(); ++k) box_balls_[k] = tree::ball(boxes_[k]);
}

TreeBRSolver::Target TreeBRSolver::target(int leaf) const {
  const int box = box_of_[leaf];
  return {sources_[0].clusters[leaf], boxes_[box], balls_[0][leaf], box_balls_[box]};
}

// The interaction lists of batches [b0, b1): each image the batch's pairs can take, down this
// rank's tree and each LET part, in the order (tree, mx, my) and depth first within an image.
void TreeBRSolver::lists(int b0, int b1) {
  if (!computes(gate_)) return gate_->stand_in("br.tree.compute.lists");
  const std::vector<int>& leaves = tree_.leaves();
  const int nt = static_cast<int>(sources_.size());
  const int ny = rules_.hi[1] - rules_.lo[1] + 1, ni = (rules_.hi[0] - rules_.lo[0] + 1) * ny;
  if (b0 == 0) balls();
  near_.resize(batches());
  far_.resize(batches());
  edge_.resize(batches());
#pragma omp parallel
  {
    Walk w;
    w.images.resize(ni);
#pragma omp for schedule(dynamic, 1)
    for (int b = b0; b < b1; ++b) {
      near_[b].clear();
      far_[b].clear();
      edge_[b].clear();
      Lists out{near_[b], far_[b], edge_[b]};
      const Target tg = target(leaves[b]);
      for (int s = 0; s < nt; ++s) {
        if (!settings_.tree_walk_images) {
          for (int mx = rules_.lo[0]; mx <= rules_.hi[0]; ++mx)
            for (int my = rules_.lo[1]; my <= rules_.hi[1]; ++my) visit(tg, s, 0, mx, my, false, out);
          continue;
        }
        if (w.levels.empty()) w.levels.resize(1);
        w.levels[0].clear();
        for (int i = 0; i < ni; ++i) w.levels[0].push_back({i, false});
        walk(tg, s, 0, 0, w);
        for (ImageLists& l : w.images) {  // image by image: the order of one walk per image
          out.near.insert(out.near.end(), l.near.begin(), l.near.end());
          out.far.insert(out.far.end(), l.far.begin(), l.far.end());
          out.edge.insert(out.edge.end(), l.edge.begin(), l.edge.end());
          l.near.clear();
          l.far.clear();
          l.edge.clear();
        }
      }
    }
  }
}

// The images w.levels[depth] at cluster C: each one's decision, then C's children with those
// that split it. Restricted to one image, the terms come in visit's order (pre-order, child 0 first).
void TreeBRSolver::walk(const Target& tg, int s, int cluster, int depth, Walk& w) const {
  const search::Cluster& C = sources_[s].clusters[cluster];
  const int ny = rules_.hi[1] - rules_.lo[1] + 1;
  if (static_cast<int>(w.levels.size()) <= depth + 1) w.levels.resize(depth + 2);
  const std::vector<Active>& in = w.levels[depth];
  std::vector<Active>& next = w.levels[depth + 1];
  next.clear();
  tree::ImageSpan sp;
  for (const Active& a : in)
    if (!a.full) {
      sp = tree::span(tg.B, C, rules_.images);
      break;
    }
  for (const Active& a : in) {
    ImageLists& l = w.images[a.image];
    Lists out{l.near, l.far, l.edge};
    bool full_next = false;
    if (decide(tg, s, cluster, rules_.lo[0] + a.image / ny, rules_.lo[1] + a.image % ny, a.full, sp, out, full_next))
      next.push_back({a.image, full_next});
  }
  if (next.empty()) return;
  for (int k : C.child) walk(tg, s, k, depth + 1, w);
}

void TreeBRSolver::visit(const Target& tg, int s, int cluster, int mx, int my, bool full, Lists& out) const {
  const search::Cluster& C = sources_[s].clusters[cluster];
  const tree::ImageSpan sp = full ? tree::ImageSpan{} : tree::span(tg.B, C, rules_.images);
  bool full_next = false;
  if (decide(tg, s, cluster, mx, my, full, sp, out, full_next))
    for (int k : C.child) visit(tg, s, k, mx, my, full_next, out);
}

// A LET part never needs more than was sent: a cluster the receiver cannot take through its
// proxies was opened by its owner, or came with all its sources (tree_let.hpp).
bool TreeBRSolver::decide(const Target& tg, int s, int cluster, int mx, int my, bool full, const tree::ImageSpan& span,
                          Lists& out, bool& full_next) const {
  const tree::SourceTree& S = sources_[s];
  const search::Cluster& C = S.clusters[cluster];
  const tree::Ball& c = balls_[s][cluster];
  auto direct = [&](bool partial) {
    if (!S.full[cluster]) throw Error("tree solver: a LET part lacks the sources of a cluster it needs");
    out.near.push_back({s, cluster, mx, my, partial});
    return false;
  };
  // The separation test on the shifted cluster (for a LET part, also the owner's test against
  // the batch's target box T); with `edge`, the edge terms' stricter one.
  auto separated = [&](bool edge) {
    return tree::separated(tg.b, c, mx, my, rules_, edge) ||
           (tree::box_rule(rules_, S.remote, C.leaf()) && tree::separated(tg.t, c, mx, my, rules_, edge));
  };
  if (!full) {
    int cut = 0;
    const tree::Cover cv = tree::cover(span, mx, my, rules_.images, &cut);
    if (cv == tree::Cover::None) return false;
    if (cv == tree::Cover::Partial) {
      // Cut by the window's edge in one dimension: an edge term through the cheapest set valid
      // at kEdgeMargin·ρ when separated at θ / kEdgeMargin and all its sources are here
      // (tree_edge.hpp); else split (at a corner down to leaves, each pair tested).
      const int axis = tree::edge_axis(cut);
      if (rules_.edge && axis >= 0 && S.full[cluster] && separated(true)) {
        const int low = cheapest_low(tg.b, s, cluster, mx, my, rules_.edge_margin);
        if (low >= 0 || S.proxies_of(cluster)) {
          out.edge.push_back({s, cluster, mx, my, false, low, axis});
          return false;
        }
      }
      if (C.leaf()) return direct(true);
      full_next = false;
      return true;
    }
  }
  // Every pair takes this image.
  if (separated(false)) {
    // The cheapest proxy set valid at this batch's ratio ρ: degree p (ρ < θ), or a lower degree.
    const int low = cheapest_low(tg.b, s, cluster, mx, my);
    if (low >= 0 || S.proxies_of(cluster)) {
      out.far.push_back({s, cluster, mx, my, false, low});
      return false;
    }
    if (S.full[cluster] && C.leaf()) return direct(false);
    // No set fits: the children may (a smaller ρ), else their sources are summed directly.
  } else if (C.leaf()) {
    return direct(false);
  }
  full_next = true;
  return true;
}

// The lower-degree set of cluster c of tree s with the fewest proxies that is valid for batch B
// at image (mx, my) (at margin·ρ) and has fewer than the degree-p set (−1: none).
int TreeBRSolver::cheapest_low(const tree::Ball& B, int s, int c, int mx, int my, double margin) const {
  const LowSets& l = low_[s];
  if (l.first[c] == l.first[c + 1]) return -1;
  const tree::Ball& C = balls_[s][c];
  const double rho = margin * (B.r + C.r) / tree::distance(B, C, mx, my, rules_.images);
  int best = -1;
  for (int k = l.first[c]; k < l.first[c + 1]; ++k)  // fewer proxies as k grows
    if (rho < l.theta[k]) best = k;
  return best;
}

std::vector<long> TreeBRSolver::list_terms() const {
  std::vector<long> out;
  for (int b = 0; b < batches(); ++b)
    for (const auto* v : {&near_[b], &far_[b], &edge_[b]}) {
      out.push_back(static_cast<long>(v->size()));
      for (const Term& e : *v) out.insert(out.end(), {e.tree, e.cluster, e.mx, e.my, e.partial, e.low, e.axis});
    }
  return out;
}

// Direct sums: every target of a batch against the sources of its near clusters, by the pair
// kernel over targets (br_targets_host.hpp). Terms adjacent in tree order with the same image
// (and no window test) become one source range: each target's sum keeps the list order.
void TreeBRSolver::near_ranges(int b, std::vector<BRSourceRange>& ranges) const {
  ranges.clear();
  const Term* prev = nullptr;
  for (const Term& e : near_[b]) {
    const tree::SourceTree& S = sources_[e.tree];
    const search::Cluster& C = S.clusters[e.cluster];
    if (prev && !e.partial && !prev->partial && prev->tree == e.tree && prev->mx == e.mx && prev->my == e.my &&
        ranges.back().k1 == C.begin)
      ranges.back().k1 = C.end;
    else
      ranges.push_back({S.pts.data(), S.n, C.begin, C.end, e.mx, e.my, e.partial});
    prev = &e;
  }
}

void TreeBRSolver::near() {
  acc_near_.assign(3 * sources_[0].n, 0.0);
  if (!computes(gate_)) return gate_->stand_in("br.tree.compute.near");  // zero velocities go back
  load_.direct_pairs = sums_host(false, acc_near_.data());
}

// A far or cluster–cluster term's sources: a lower-degree proxy set (low_sets), C's own
// particles (kSources, cluster–cluster terms only) or C's proxies.
BRSourceRange TreeBRSolver::term_range(const Term& e) const {
  const tree::SourceTree& S = sources_[e.tree];
  if (e.low >= 0) {
    const LowSets& l = low_[e.tree];
    const int m = l.count[e.low];
    return {&l.pts[l.start[e.low]], m, 0, m, e.mx, e.my, false};
  }
  if (e.low == kSources) {
    const search::Cluster& C = S.clusters[e.cluster];
    return {S.pts.data(), S.n, C.begin, C.end, e.mx, e.my, false};
  }
  const int m = S.proxy_count[e.cluster];
  return {&S.proxies[S.proxy_start[e.cluster]], m, 0, m, e.mx, e.my, false};
}

void TreeBRSolver::far_ranges(int b, std::vector<BRSourceRange>& ranges) const {
  ranges.clear();
  for (const Term& e : far_[b]) ranges.push_back(term_range(e));
}

// Far field: every target of a batch against the proxies of its far clusters (the same kernel).
void TreeBRSolver::far() {
  const tree::SourceTree& T = sources_[0];
  const long n = T.n;
  acc_far_.assign(3 * n, 0.0);
  if (!computes(gate_)) return gate_->stand_in("br.tree.compute.far");
  load_.cluster_terms = cluster_terms();
  load_.proxy_pairs = sums_host(true, acc_far_.data());
  if (settings_.tree_dual) cc_sums();  // the cluster–cluster terms at the target points (down() adds them)
}

// (target, cluster image) terms of the far lists.
long TreeBRSolver::cluster_terms() const {
  const auto& cl = sources_[0].clusters;
  const std::vector<int>& leaves = tree_.leaves();
  long terms = 0;
  for (int b = 0; b < static_cast<int>(far_.size()); ++b)
    terms += cl[leaves[b]].count() * static_cast<long>(far_[b].size());
  return terms;
}

// Of batch b's far terms, (target, cluster image) pairs through a lower-degree set (counted
// where the ranges are made: a separate walk over the lists costs 0.08 s at 1024²).
long TreeBRSolver::low_terms(int b) const {
  long k = 0;
  for (const Term& e : far_[b]) k += e.low >= 0;
  return k * sources_[0].clusters[tree_.leaves()[b]].count();
}

// The (tree, cluster, axis, set) of every edge term of the lists, each once, sorted; and per
// batch the key index of each of its terms (edge_table_). Every possible key has a slot, laid
// out in the keys' sorted order (tree, then cluster, then axis 0 and 1, each with the degree-p
// proxies first and then the cluster's lower-degree sets): the terms mark their slots in
// parallel, a running count over the slots numbers the marked ones, and a term's index is its
// slot's number. The same sorted set as sorting the terms' keys (which this replaced: 3–52 ms
// against 0.8–0.9 per call at 256² on one rank of 2 threads), in O(terms + slots).
std::vector<std::array<int, 4>> TreeBRSolver::edge_keys() {
  using Key = std::array<int, 4>;
  const int nb = static_cast<int>(edge_.size());
  const int nt = static_cast<int>(sources_.size());
  edge_layout();
  edge_slot_.assign(edge_base_[nt], 0);
  int* mark = edge_slot_.data();
#pragma omp parallel for schedule(dynamic, 64)
  for (int b = 0; b < nb; ++b)
    for (const Term& e : edge_[b]) std::atomic_ref<int>(mark[edge_slot(e)]).store(1, std::memory_order_relaxed);
  // Numbers the marked slots in order (each slot then holds its key's index, or −1) and lists their keys.
  std::vector<Key> keys;
  for (int s = 0; s < nt; ++s) {
    const std::vector<int>& first = low_[s].first;
    const int nc = first.empty() ? 0 : static_cast<int>(first.size()) - 1;
    long q = edge_base_[s];
    for (int c = 0; c < nc; ++c)
      for (int axis = 0; axis < 2; ++axis)
        for (int low = first[c] - 1; low < first[c + 1]; ++low, ++q) {
          if (!mark[q]) {
            mark[q] = -1;
            continue;
          }
          mark[q] = static_cast<int>(keys.size());
          keys.push_back({s, c, axis, low < first[c] ? -1 : low});
        }
  }
  edge_table_.resize(nb);
#pragma omp parallel for schedule(dynamic, 64)
  for (int b = 0; b < nb; ++b) {
    edge_table_[b].clear();
    for (const Term& e : edge_[b]) edge_table_[b].push_back(mark[edge_slot(e)]);
  }
  return keys;
}

// edge_keys()'s slot layout: tree s's slots start at edge_base_[s]; cluster c's at
// edge_base_[s] + 2·(c + first[c]), 1 + its sets per axis.
void TreeBRSolver::edge_layout() {
  const int nt = static_cast<int>(sources_.size());
  edge_base_.assign(nt + 1, 0);
  for (int s = 0; s < nt; ++s) {
    const std::vector<int>& first = low_[s].first;
    const long nc = first.empty() ? 0 : static_cast<long>(first.size()) - 1;
    edge_base_[s + 1] = edge_base_[s] + 2 * (nc + (nc > 0 ? first[nc] : 0));
  }
}

// An edge term's slot in edge_keys()'s layout (edge_layout() done).
long TreeBRSolver::edge_slot(const Term& e) const {
  const std::vector<int>& first = low_[e.tree].first;
  const int c = e.cluster, sets = first[c + 1] - first[c];
  if (e.axis < 0 || e.axis > 1) throw Error("tree solver: an edge term cuts neither x nor y");
  return edge_base_[e.tree] + 2L * (c + first[c]) + e.axis * (1L + sets) + (e.low < 0 ? 0 : 1 + e.low - first[c]);
}

// The proxy set of an edge key: its grid degrees dg, its m proxies' positions (returned).
const double* TreeBRSolver::edge_set(const std::array<int, 4>& key, int* dg, int& m) const {
  const auto [s, c, axis, low] = key;
  const tree::SourceTree& S = sources_[s];
  if (low >= 0) {
    const LowSets& l = low_[s];
    std::copy_n(&l.degrees[3 * low], 3, dg);
    m = l.count[low];
    return &l.pts[l.start[low]];
  }
  m = grid_degrees(S.clusters[c], settings_.tree_degree, settings_.tree_theta, dg);
  if (m != S.proxy_count[c]) throw Error("tree solver: a cluster's proxy grid differs from its owner's");
  return &S.proxies[S.proxy_start[c]];
}

// Edge terms (tree_edge.hpp): one prefix table per (tree, cluster, dimension, proxy set) the
// lists use, built here (in parallel); then every batch's terms in list order into the far
// field. -x cuda: edges_device().
void TreeBRSolver::edges() {
  if (!computes(gate_)) return gate_->stand_in("br.tree.compute.edge");
  const int nb = static_cast<int>(edge_.size());
  std::vector<std::array<int, 4>> keys;
  {
    Timers::Scope t(timers_, "br.tree.compute.edge.keys");
    keys = edge_keys();
  }
  const int nk = static_cast<int>(keys.size());
  tables_.resize(nk);
  {
    Timers::Scope t(timers_, "br.tree.compute.edge.tables");
#pragma omp parallel for schedule(dynamic, 1)
    for (int k = 0; k < nk; ++k) {
      const tree::SourceTree& S = sources_[keys[k][0]];
      int dg[3], m;
      const double* proxies = edge_set(keys[k], dg, m);
      tree::build_edge_table(S.clusters[keys[k][1]], S.pts.data(), S.n, keys[k][2], dg, proxies, m, tables_[k]);
    }
  }
  Timers::Scope sums_scope(timers_, "br.tree.compute.edge.sums");
  const tree::SourceTree& T = sources_[0];
  const long n = T.n;
  const double *xt = T.pts.data(), *yt = xt + n, *zt = yt + n;
  double *ux = acc_far_.data(), *uy = ux + n, *uz = uy + n;
  const auto& cl = T.clusters;
  const std::vector<int>& leaves = tree_.leaves();
  long terms = 0, proxy_pairs = 0, direct_pairs = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : terms, proxy_pairs, direct_pairs)
  for (int b = 0; b < nb; ++b) {
    const search::Cluster& B = cl[leaves[b]];
    const long t = B.begin;
    tree::EdgeCounts counts;
    // The batch's targets in order of x and of y, sorted once for all its terms (edge_sum's cuts).
    thread_local std::vector<long> by[2];
    bool sorted[2] = {false, false};
    for (size_t i = 0; i < edge_[b].size(); ++i) {
      const tree::EdgeTable& tab = tables_[edge_table_[b][i]];
      const int ax = tab.axis;
      if (!sorted[ax]) {
        tree::order_by_coordinate((ax == 0 ? xt : yt) + t, B.count(), by[ax]);
        sorted[ax] = true;
      }
      tree::edge_sum(tab, edge_[b][i].mx, edge_[b][i].my, xt + t, yt + t, zt + t, B.count(), rules_.images, eps_,
                     ux + t, uy + t, uz + t, counts, by[ax].data());
    }
    terms += B.count() * static_cast<long>(edge_[b].size());
    proxy_pairs += counts.proxy_pairs;
    direct_pairs += counts.direct_pairs;
  }
  load_.edge_terms = terms;
  load_.edge_proxy_pairs = proxy_pairs;
  load_.edge_direct_pairs = direct_pairs;
  load_.edge_tables = nk;
  for (const auto& x : tables_) load_.edge_bytes += static_cast<long>(x.bytes());
}

// Every target of a batch against the ranges of its near (sources) or far (proxies) terms, one
// multi-target kernel call per batch; returns the pairs summed.
long TreeBRSolver::sums_host(bool far_field, double* acc) {
  const tree::SourceTree& T = sources_[0];
  const long n = T.n;
  const double *xt = T.pts.data(), *yt = xt + n, *zt = yt + n;
  double *ux = acc, *uy = ux + n, *uz = uy + n;
  const auto& cl = T.clusters;
  const std::vector<int>& leaves = tree_.leaves();
  const int nb = static_cast<int>(near_.size());
  const BRImages img = rules_.images;
  const double eps = eps_;
  long pairs = 0, low = 0;
#pragma omp parallel reduction(+ : pairs, low)
  {
    std::vector<BRSourceRange> ranges;
#pragma omp for schedule(dynamic, 1)
    for (int b = 0; b < nb; ++b) {
      const search::Cluster& B = cl[leaves[b]];
      if (far_field) far_ranges(b, ranges), low += low_terms(b);
      else near_ranges(b, ranges);
      const long t = B.begin;
      pairs += br_targets_host(xt + t, yt + t, zt + t, B.count(), ranges.data(), static_cast<int>(ranges.size()), img,
                               eps, ux + t, uy + t, uz + t);
    }
  }
  if (far_field) load_.low_terms = low;
  return pairs;
}

// -x cuda: the lists in runs of batches, each run's near and far sums queued on the device
// (tree_sums_device.hpp) while the host builds the next run's lists; the same lists, ranges and
// order of the additions per target as the host's near() and far().
void TreeBRSolver::compute_device() {
  const tree::SourceTree& T = sources_[0];
  const auto& cl = T.clusters;
  const std::vector<int>& leaves = tree_.leaves();
  const int nb = batches();
  std::vector<long> batch(2 * size_t(nb));
  for (int b = 0; b < nb; ++b) {
    batch[2 * b] = cl[leaves[b]].begin;
    batch[2 * b + 1] = cl[leaves[b]].end;
  }
  near_.resize(nb);
  far_.resize(nb);
  edge_.resize(nb);
  dev_near_.resize(nb);
  dev_far_.resize(nb);
  // The pools were placed and filled with the lower-degree sets (low_device); the targets are
  // this tree's sources' first three components, already in the near pool.
  device_->begin(device_->pool(false) + device_->base(false, 0), T.n, rules_.images, eps_, true);
  marks()("sumsbegin");
  // Enough runs that the device's share of the last one is short, few enough that each fills the GPU.
  // BEATNIK_TREE_RUNS sets their number for measurements (default 16).
  static const int wanted_runs = int(env::integer("BEATNIK_TREE_RUNS", 1, 1 << 20).value_or(16));
  const int run = std::max(min_run, (nb + wanted_runs - 1) / wanted_runs);
  // The first `run` batches in `ramp` runs, so that the device has its first sums sooner after
  // the build, the upward pass and the sets.
  static const int ramp_knob = int(env::integer("BEATNIK_TREE_RAMP", 1, 64).value_or(1));
  const int split = ramp >= 1 ? ramp : ramp_knob;
  const RunCut cut{run, std::max(1, (run + split - 1) / split)};
  double list_s = 0.0, edge_s = 0.0, edge_keys_s = 0.0;
  long low = 0;
  // The edge stage (tree_br_edges_device.cpp), pipelined: every `pipe` runs, the tables of the
  // keys those runs add and their sums, queued on the edge stream behind the runs' near and far
  // sums, so the last run leaves little edge work. Timed on the host: a timer scope's device
  // timestamp goes to the default stream, which waits for the sums in flight, and the edge
  // stream (a blocking one) would then wait for it too.
  // The lists on the device (tree_br_lists_device.cpp): built at once, their ranges read by one
  // launch of the sums; the edge stage then one-shot.
  const bool dev_lists = device_lists();
  const int pipe = dev_lists ? 0 : edge_pipe_runs();
  if (pipe > 0) {
    const double t = wall_seconds();
    edge_pipe_begin();
    edge_s += wall_seconds() - t;
  }
  marks()("pipebegin");
  // The dual traversal (tree_br_dual.cpp): the target tree's top levels first (their cluster–
  // cluster terms summed at once on the device), then its subtrees of at most `run` batches,
  // grouped into runs: each run's lists, then its batches' sums and its clusters' grid sums
  // queued. The same lists as the host's dual_lists().
  const bool dual = settings_.tree_dual;
  std::vector<DualPart> parts;
  std::vector<int> run_end;  // the runs' batch ends (dual: whole subtrees per run)
  std::vector<size_t> run_parts;  // dual: the runs' first part
  double cc_s = 0.0;
  long far_terms = -1;  // device lists: the far (target, cluster image) terms
  // The dual's leaves walked on the device (tree_br_lists_device.cpp): the host's traversal
  // stops at the leaves, which keep their pairs (pend_); each run's are walked there.
  const bool dual_dev = dual && device_dual_leaves();
  double leaves_s = 0.0;
  if (dual) {
    const double t0 = wall_seconds();
    dual_device_begin(cut, parts);
    list_s += wall_seconds() - t0;
    marks()("top");
    if (dual_dev) {
      const double t1 = wall_seconds();
      dual_leaves_begin();
      far_terms = 0;
      leaves_s += wall_seconds() - t1;
      list_s += wall_seconds() - t1;
    }
    const double t1 = wall_seconds();
    cc_device(dual_top_);
    cc_s += wall_seconds() - t1;
    marks()("topcc");
    int bb = 0;
    for (size_t k = 0; k < parts.size(); ++k) {
      if (run_parts.size() == run_end.size()) run_parts.push_back(k);
      bb = parts[k].b1;
      const int at = run_end.empty() ? 0 : run_end.back();
      if (bb - at >= cut.at(at) || k + 1 == parts.size()) run_end.push_back(bb);
    }
    run_parts.push_back(parts.size());
  } else if (dev_lists) {
    const double t0 = wall_seconds();
    far_terms = lists_device(batch);
    low = lists_dev_->low_terms();
    list_s += wall_seconds() - t0;
    device_->launch_device(nb, lists_dev_->batch(), lists_dev_->near_first(), lists_dev_->near_ranges(),
                           lists_dev_->first(1), lists_dev_->far_ranges());
  } else {
    for (int b0 = 0; b0 < nb; b0 += cut.at(b0)) run_end.push_back(std::min(nb, b0 + cut.at(b0)));
  }
  int runs = 0, edge_b0 = 0;
  // The pieces' host part (keys, specs, term lists, the queueing) on the edge worker's thread
  // when there is one (edge_worker()), beside the next runs' lists: it only reads their batches'
  // finished lists and writes the edge object and its own slots, and the pieces run in order, so
  // the tables and bits are the same. Waited for (errors rethrown) before the sums are finished;
  // on the way out of an exception too, since its jobs hold this frame's timers.
  HostWorker* worker = pipe > 0 ? edge_worker() : nullptr;
  struct Join {
    HostWorker* w;
    ~Join() {
      if (w) try { w->wait(); } catch (...) {}  // (an exception is already on its way)
    }
  } join{worker};
  // The edge stage's piece every `pipe` runs, once the batches up to b1 have their edge terms.
  // The last run's piece alone (a piece also ends before it), so that less edge work is left
  // after the last lists: the same tables and bits; at 1024² on one H200 103.5 against 106.4 ms a
  // call (medians of four interleaved rounds, docs/tree-log.md "The host's path to the first sums,
  // the last edge piece"). BEATNIK_TREE_EDGE_LAST=0: the pieces every `pipe` runs to the end.
  static const bool last_alone = env::integer("BEATNIK_TREE_EDGE_LAST", 0, 1).value_or(1) == 1;
  auto edge_step = [&](int b1, bool before_last = false) {
    if (pipe > 0 && (++runs % pipe == 0 || b1 == nb || (last_alone && before_last))) {
      const int b0 = edge_b0;
      edge_b0 = b1;
      auto piece = [this, b0, b1, &edge_keys_s, &edge_s] {
        const double t = wall_seconds();
        edge_keys_s += edge_pipe_run(b0, b1);
        edge_s += wall_seconds() - t;
      };
      if (worker) worker->post(piece);
      else piece();
    }
  };
  // Dual leaves on the device: run r's leaves are queued after its host work and finished (their
  // sums queued) after run r + 1's, so that the host never waits for the GPU's queue.
  auto leaves_finish = [&](size_t r) {
    const int b0 = r == 0 ? 0 : run_end[r - 1], b1 = run_end[r];
    const double t = wall_seconds();
    far_terms += dual_leaves_finish(static_cast<int>(r), b0, b1, batch, low);
    leaves_s += wall_seconds() - t;
    list_s += wall_seconds() - t;
    edge_step(b1);
  };
  for (size_t r = 0; r < run_end.size(); ++r) {
    const int b0 = r == 0 ? 0 : run_end[r - 1], b1 = run_end[r];
    const double t0 = wall_seconds();
    dual_collect_ = dual_dev;
    if (dual) dual_device_run(parts, run_parts[r], run_parts[r + 1]);
    else lists(b0, b1);
    dual_collect_ = false;
    marks()("L", static_cast<int>(r));
    if (dual_dev) {
      const double t1 = wall_seconds();
      dual_leaves_queue(static_cast<int>(r), b0, b1, batch);
      leaves_s += wall_seconds() - t1;
      list_s += wall_seconds() - t0;
    } else {
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : low)
      for (int b = b0; b < b1; ++b) {
        near_ranges(b, dev_near_[b]);
        far_ranges(b, dev_far_[b]);
        low += low_terms(b);
      }
      list_s += wall_seconds() - t0;
      device_->launch(b0, b1, batch, dev_near_, dev_far_);
      marks()("S", static_cast<int>(r));
    }
    if (dual) {  // this run's target clusters' grids
      const double t1 = wall_seconds();
      std::vector<int> clusters;
      for (size_t k = run_parts[r]; k < run_parts[r + 1]; ++k) dual_internal(parts[k].root, clusters);
      cc_device(clusters);
      cc_s += wall_seconds() - t1;
    }
    if (!dual_dev) edge_step(b1, r + 2 == run_end.size());
    else if (r > 0) leaves_finish(r - 1);
    marks()("E", static_cast<int>(r));
  }
  if (dual_dev && !run_end.empty()) leaves_finish(run_end.size() - 1);
  double edge_join_s = 0.0;
  if (worker) {  // the last piece (and any still queued) before the sums are finished
    const double t = wall_seconds();
    worker->wait();
    edge_join_s = wall_seconds() - t;
  }
  // One-shot: the edge terms' keys and term lists on the host while the device drains the last
  // runs' sums, their tables and sums queued on a stream of their own beside those sums. Either
  // way the edge velocities are added to the far field on the device once both are done, before
  // it comes back (the same addition, far + edge per target, as the host's edges()).
  if (pipe == 0) {
    const double edge_t0 = wall_seconds();
    if (dev_lists) edges_device_lists();
    else edges_device();
    edge_s = wall_seconds() - edge_t0;
  }
  marks()("loop");
  double down_s = 0.0;
  if (dual) {  // the downward pass, run by finish() after the edge terms
    const double t = wall_seconds();
    down_device(batch);
    down_s = wall_seconds() - t;
  }
  // With the device build and migration the velocities stay on the device for to_surface (one
  // rank: straight into the field by tree order; several: the return trip in device memory),
  // unless the sums' bench replays them on the host.
  acc_on_device_ = build_dev_ && mig_space_ == space_ && tree_sums_bench_call() == 0;
  if (!acc_on_device_) {
    acc_near_.resize(3 * size_t(T.n));
    acc_far_.resize(3 * size_t(T.n));
  }
  double edge_wait_s = 0.0;
  device_->finish(acc_on_device_ ? nullptr : acc_near_.data(), acc_on_device_ ? nullptr : acc_far_.data(),
                  load_.direct_pairs, load_.proxy_pairs, [&] {
    const double t = wall_seconds();
    edge_dev_->wait();
    edge_wait_s = wall_seconds() - t;
    return edge_dev_->velocity();
  });
  load_.cluster_terms = far_terms >= 0 ? far_terms : cluster_terms();
  load_.low_terms = low;
  if (dual) load_.cc_pairs = device_->cc_pairs;
  load_.edge_proxy_pairs = edge_dev_->proxy_pairs;
  load_.edge_direct_pairs = edge_dev_->direct_pairs;
  // The passes queued without waiting (upward on one rank, the sets): long done; their events.
  upward_finish();
  if (low_dev_->pending()) {
    low_dev_->finish();
    if (timers_) timers_->add("br.tree.low.kernel", low_dev_->kernel_s);
  }
  if (timers_) {
    timers_->add("br.tree.compute.lists", list_s);
    if (dual_dev) timers_->add("br.tree.compute.lists.leaves", leaves_s);
    timers_->add("br.tree.compute.pack", device_->pack_s);
    timers_->add("br.tree.compute.copy", device_->upload_s);
    timers_->add("br.tree.compute.wait", device_->finish_s - edge_wait_s);
    timers_->add("br.tree.compute.edge", edge_s);
    if (pipe > 0) {  // (the one-shot path adds these in edges_device)
      timers_->add("br.tree.compute.edge.keys", edge_keys_s);
      timers_->add("br.tree.compute.edge.copy", edge_dev_->copy_s);
    }
    timers_->add("br.tree.compute.edge.wait", edge_wait_s);
    if (worker) timers_->add("br.tree.compute.edge.join", edge_join_s);
    timers_->add("br.tree.compute.edge.tables", edge_dev_->tables_s);
    timers_->add("br.tree.compute.edge.kernel", edge_dev_->kernel_s);
    timers_->add("br.tree.compute.near.kernel", device_->near_kernel_s);
    timers_->add("br.tree.compute.far.kernel", device_->far_kernel_s);
    if (dual) {
      timers_->add("br.tree.compute.cc", cc_s);
      timers_->add("br.tree.compute.cc.kernel", device_->cc_kernel_s);
      timers_->add("br.tree.compute.down", down_s);
      timers_->add("br.tree.compute.down.kernel", device_->down_kernel_s);
    }
  }
}

// Velocities back to the surface owners, block by block in the order they came, then into `out`.
void TreeBRSolver::to_surface(const mesh::Field& out) {
  const long n = nown_;
  const int nj = mesh_.layout().nj;
  const long ns = n_;
  if (device_ && build_dev_ && mig_space_ == space_) {  // -x cuda, the device migration
    const double *near = nullptr, *far = nullptr;
    if (acc_on_device_) {  // the sums' arrays: the velocities never leave the device
      near = device_->near_velocity();
      far = device_->far_velocity();
    } else {  // a skeleton's zeros or the sums' bench: the host's velocities up
      exec::grow(dev_out_, space_, std::max<size_t>(6 * n, 1));
      exec::copy(dev_out_.data(), space_, acc_near_.data(), exec::Space::Host, 3 * n);
      exec::copy(dev_out_.data() + 3 * n, space_, acc_far_.data(), exec::Space::Host, 3 * n);
      near = dev_out_.data();
      far = near + 3 * n;
    }
    acc_on_device_ = false;
    const int* order = build_dev_->order();  // tree position -> received particle (one rank: surface node)
    if (local_) return br_order_to_field(space_, near, far, order, n, nj, out);
    exec::grow(back_send_, space_, std::max<size_t>(3 * n, 1));
    br_velocity_records(space_, near, far, order, n, back_send_.data());
    migrator_->exchange_known(recv_counts_, back_send_.data(), 3, send_counts_, back_recv_.data(), "migrate");
    br_records_to_field(space_, by_dest_.order(), back_recv_.data(), ns, nj, out);
    return;
  }
  const std::vector<long>& order = tree_.order();  // tree position -> received particle
  if (local_) {  // one rank, no migration: tree position -> surface node
#pragma omp parallel for
    for (long q = 0; q < n; ++q)
      for (int c = 0; c < 3; ++c) pts_[c * n + order[q]] = acc_near_[c * n + q] + acc_far_[c * n + q];
    tree_velocity_to_field(mesh_, pts_.data(), out, dev_out_);
    return;
  }
  // On the host (-x host; -x cuda with BEATNIK_TREE_MIGRATE=host or BEATNIK_TREE_BUILD=host).
  exec::grow(back_send_, exec::Space::Host, std::max<size_t>(3 * n, 1));
  br_velocity_records(exec::Space::Host, acc_near_.data(), acc_far_.data(), order.data(), n, back_send_.data());
  migrator_->exchange_known(recv_counts_, back_send_.data(), 3, send_counts_, back_recv_.data(), "migrate");
  const long* by = by_dest_.order();
  if (device_) {  // surface order on the host (pts_ is free now), then into the device field
    const double* in = back_recv_.data();
#pragma omp parallel for
    for (long q = 0; q < ns; ++q)
      for (int c = 0; c < 3; ++c) pts_[c * ns + by[q]] = in[q * 3 + c];
    tree_velocity_to_field(mesh_, pts_.data(), out, dev_out_);
    return;
  }
  br_records_to_field(exec::Space::Host, by, back_recv_.data(), ns, nj, out);
}

}  // namespace beatnik::model
