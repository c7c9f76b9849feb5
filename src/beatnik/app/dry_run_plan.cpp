#include "beatnik/app/dry_run_plan.hpp"

#include <algorithm>
#include <set>

#include "beatnik/app/dry_run_cutoff.hpp"
#include "beatnik/app/dry_run_tree.hpp"
#include "beatnik/base/complex.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/comm/cart_grid.hpp"
#include "beatnik/comm/halo_exchange.hpp"
#include "beatnik/comm/redistributor.hpp"
#include "beatnik/comm/ring_pass.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/fft/fft_plan.hpp"
#include "beatnik/mesh/decomposition.hpp"
#include "beatnik/mesh/surface_mesh.hpp"
#include "beatnik/model/cutoff_br_solver.hpp"
#include "beatnik/model/tree_br_solver.hpp"
#include "beatnik/model/state.hpp"

namespace beatnik::app {
namespace {

constexpr int kDerivativesPerStep = kDryRunBRCallsPerStep;  // TVD-RK3

struct Planner {
  DryRunPlan& out;
  std::vector<int> world_of_grid;
  std::vector<std::set<int>> peers_all;
  std::map<std::string, std::vector<std::set<int>>> peers;
  bool record = false;
  std::map<std::string, std::vector<std::vector<std::pair<int, long>>>> open;  // the call in the making

  std::vector<std::vector<std::pair<int, long>>>& open_of(const std::string& pattern) {
    auto& o = open[pattern];
    if (o.empty()) o.resize(out.ranks);
    return o;
  }

  int locality(int g, int h) const {
    const int a = world_of_grid[g], b = world_of_grid[h];
    return a == b ? 0 : out.node_of_rank[a] == out.node_of_rank[b] ? 1 : 2;
  }
  void message(const std::string& pattern, int g, int h, long bytes) {
    const int a = world_of_grid[g], b = world_of_grid[h];
    out.per_rank[a].add_message(pattern, locality(g, h), bytes);
    if (record) open_of(pattern)[a].emplace_back(b, bytes);
    if (a != b) link(pattern, a, b, a, b, bytes);
  }
  // A one-sided get: accounted by the reader g (the owner h's locality), the bytes travel h -> g.
  // Not recorded as an exchange (the message sets replay sends).
  void get(const std::string& pattern, int g, int h, long bytes) {
    const int a = world_of_grid[g], b = world_of_grid[h];
    out.per_rank[a].add_message(pattern, locality(g, h), bytes);
    if (a != b) link(pattern, a, b, b, a, bytes);
  }
  // World rank a talks to b (its degree); `bytes` travel from src to dst (the matrix).
  void link(const std::string& pattern, int a, int b, int src, int dst, long bytes) {
    out.matrix[src][dst] += bytes;
    peers_all[a].insert(b);
    auto& p = peers[pattern];
    if (p.empty()) p.resize(out.ranks);
    p[a].insert(b);
  }
  void call(const std::string& pattern, int g) {
    const int a = world_of_grid[g];
    out.per_rank[a].add_call(pattern);
    if (!record) return;
    auto& calls = out.exchanges[pattern];
    if (calls.empty()) calls.resize(out.ranks);
    calls[a].push_back(std::move(open_of(pattern)[a]));
    open_of(pattern)[a].clear();
  }
};

// The cutoff solver's messages of every Birkhoff-Rott call, each estimated from the initial
// surface: to_spatial (48 B a particle), ghosts (48 B a copy), to_surface (24 B back), with the
// accounting of comm::Migrator (one message per non-empty block, self included; one call per
// exchange on every rank).
// The particles to their spatial owners (48 B each) and their velocities back (24 B), as the
// cutoff and tree solvers migrate them.
void plan_migration(Planner& p, const std::vector<std::map<int, long>>& to_spatial, int g) {
  constexpr long there = model::kParticleWidth * long(sizeof(double)), back = model::kVelocityWidth * long(sizeof(double));
  for (const auto& [o, n] : to_spatial[g]) {
    p.message("migrate", g, o, n * there);
    p.message("migrate", o, g, n * back);
  }
}

std::string estimated_note(const char* patterns) {
  return std::string(patterns) +
         " are ESTIMATED from the initial surface (exact for the first Birkhoff-Rott call; every one of the " +
         std::to_string(kDryRunBRCallsPerStep) + " calls per step is counted as that first one, so later steps' "
         "motion is not seen)";
}

void plan_cutoff(Planner& p, const RunConfig& c, int ranks) {
  const CutoffCallEstimate e = estimate_cutoff_call(c);
  constexpr long there = model::kParticleWidth * long(sizeof(double));
  for (int k = 0; k < kDryRunBRCallsPerStep; ++k) {
    for (int g = 0; g < ranks; ++g) {
      plan_migration(p, e.to_spatial, g);
      for (const auto& [t, n] : e.ghosts[g]) p.message("ghost", g, t, n * there);
      p.call("migrate", g);
      p.call("migrate", g);
      p.call("ghost", g);
    }
  }
  p.out.estimated = {"ghost", "migrate"};
  p.out.notes.push_back(estimated_note("migrate and ghost"));
}

// The tree solver's messages of every Birkhoff-Rott call, each estimated from the initial
// surface: to_spatial, the LET (pushed blocks or pulled gets; one exchange on every rank),
// to_surface.
void plan_tree(Planner& p, const RunConfig& c, int ranks, bool record) {
  const TreeCallEstimate e = estimate_tree_call(c);
  // -x cuda on one rank with the device build: the particles never leave the device, no migration.
  const bool migrates = !(ranks == 1 && c.space == exec::Space::Device && model::tree_device_build());
  if (e.pulled && record)
    p.out.unplanned.push_back("let: the rma strategy's one-sided gets are not replayed as messages");
  for (int k = 0; k < kDryRunBRCallsPerStep; ++k) {
    for (int g = 0; g < ranks; ++g) {
      if (migrates) plan_migration(p, e.to_spatial, g);
      for (const auto& [peer, bytes] : e.let[g]) {
        if (e.pulled) p.get("let", g, peer, bytes);
        else p.message("let", g, peer, bytes);
      }
      if (migrates) {
        p.call("migrate", g);
        p.call("migrate", g);
      }
      p.call("let", g);
    }
  }
  if (e.pulled) p.out.exchanges.erase("let");
  p.out.estimated = {"let", "migrate"};
  p.out.notes.push_back(estimated_note("migrate and let"));
  if (!migrates)
    p.out.notes.push_back("-S tree -x cuda on one rank: the tree is built on the device from the particles there, "
                          "which are not migrated (BEATNIK_TREE_BUILD=host: the host build and its migration)");
  if (c.space == exec::Space::Device)
    p.out.notes.push_back("-S tree -x cuda: the migration and the LET travel through host MPI whatever the GPU "
                          "transport (the tree's lists are built on the host); the device forms the host's edge "
                          "terms, so the LET is the host tree's");
}

}  // namespace

bool dry_run_uses_nccl(const RunConfig& c, int ranks) {
  if (c.space != exec::Space::Device) return false;
  return c.gpu_transport == "nccl" || (c.gpu_transport == "auto" && ranks > 1 && comm::nccl_built());
}

DryRunPlan plan_dry_run(const RunConfig& c, int ranks, int ranks_per_node, PlanOptions opt) {
  const bool br = c.model.order != model::Order::Low;
  const bool cutoff = br && c.model.br.cutoff_solver;
  const bool tree = br && c.model.br.tree_solver;
  DryRunPlan out;
  out.nccl = dry_run_uses_nccl(c, ranks);
  out.ranks = ranks;
  out.ranks_per_node = ranks_per_node > 0 ? ranks_per_node : ranks;
  out.node_of_rank.resize(ranks);
  for (int r = 0; r < ranks; ++r) out.node_of_rank[r] = r / out.ranks_per_node;
  const auto procs = c.procs;
  const auto& geo = c.geometry;
  const mesh::Decomposition decomp(geo.nodes, procs);
  const std::vector<Box2> blocks = decomp.all_owned();

  // Placement: the cell of every world rank, as SurfaceMesh asks for it.
  std::vector<int> cells;
  if (c.placement.policy != comm::placement::Policy::Cart) {
    const std::array<double, 2> extent{double(geo.nodes[0]) / procs[0], double(geo.nodes[1]) / procs[1]};
    cells = comm::placement::cells(c.placement, procs, out.node_of_rank, extent);
  } else {
    cells = comm::placement::linear(ranks);
    out.notes.push_back("--placement cart: MPI_Cart_create's reorder is taken to keep the rank order "
                        "(what Open MPI does); a real run reports the order it got");
  }
  out.grid_rank_of_rank = cells;
  Planner p{out, std::vector<int>(ranks), std::vector<std::set<int>>(ranks), {}, opt.exchanges, {}};
  for (int r = 0; r < ranks; ++r) p.world_of_grid[cells[r]] = r;
  out.per_rank.resize(ranks);
  out.matrix.resize(ranks);

  // Halo: the state (5 components, corners) and V (1 component, faces) in every derivative.
  struct Halo {
    comm::HaloPattern pattern;
    int ncomp;
  };
  const Halo halos[2] = {{comm::HaloPattern{mesh::kGhosts, true}, model::kStateComps},
                         {comm::HaloPattern{mesh::kGhosts, false}, 1}};
  for (int g = 0; g < ranks; ++g) {
    const Box2 b = blocks[g];
    const GhostedLayout layout{b.extent(0), b.extent(1), mesh::kGhosts};
    const auto nb = comm::grid_neighbors(procs, geo.periodic, decomp.coords_of(g));
    for (const Halo& h : halos) {
      const comm::HaloLinks l = comm::plan_halo(nb, layout, h.pattern);
      for (int k = 0; k < kDerivativesPerStep; ++k) {
        for (int s = 0; s < l.send.n; ++s)
          p.message("halo", g, l.send_peer[s],
                    (l.send.offset[s + 1] - l.send.offset[s]) * h.ncomp * long(sizeof(double)));
        p.call("halo", g);
      }
    }
  }

  // FFT reshapes: one forward and one inverse transform per derivative (low and medium order).
  if (c.model.order != model::Order::High) {
    // NCCL has no all-to-all: every exchange algorithm becomes one grouped send/receive of the
    // real runs (Redistributor::nccl_transfer), so nothing is padded.
    const bool alltoall = c.fft.algorithm == comm::ExchangeAlgorithm::Alltoall && !out.nccl;
    std::map<std::pair<size_t, int>, long> pads;  // (step, first member): the communicator's pad
    comm::SegmentTable t;
    for (int g = 0; g < ranks; ++g) {
      const fft::FftPlan plan = fft::make_fft_plan(geo.nodes, procs, blocks, c.fft, g);
      for (size_t k = 0; k < plan.steps.size(); ++k) {
        const fft::PlanStep& s = plan.steps[k];
        if (s.is_fft) continue;
        // A local step runs on this rank alone (a communicator of one); the others on the
        // step's group, in group order.
        const int idx = fft::plan_group_index(s.group, procs, g);
        std::vector<int> members;
        std::vector<Box2> from, to;
        if (s.local) {
          members = {g};
          from = {s.from[idx]};
          to = {s.to[idx]};
        } else {
          for (int q = 0; q < static_cast<int>(s.from.size()); ++q)
            members.push_back(fft::plan_group_member(s.group, procs, g, q));
          from = s.from;
          to = s.to;
        }
        const int me = s.local ? 0 : idx;
        const int size = static_cast<int>(members.size());
        const bool padded = alltoall && size > 1;
        long pad = 0;
        if (padded) {
          auto [it, fresh] = pads.try_emplace({k, members[0]}, 0);
          if (fresh) it->second = comm::plan_pad(from, to);
          pad = it->second;
        }
        for (const bool reverse : {false, true}) {
          if (reverse) comm::plan_side(t, to[me], from);
          else comm::plan_side(t, from[me], to);
          const auto msgs = comm::planned_messages(t, padded, pad, size);
          // The plan's element sizes: the inverse's last reshape carries the real result only
          // (DistributedFFT::inverse_real, the Riesz transform's); half-spectrum reshapes carry
          // two fields forward and one back.
          const long elem = reverse ? s.inverse_elem_bytes : s.forward_elem_bytes;
          for (int d = 0; d < kDerivativesPerStep; ++d) {
            for (const auto& [peer, count] : msgs) p.message("fft", g, members[peer], count * elem);
            p.call("fft", g);
          }
        }
      }
    }
  }

  // The cutoff solver's migration and ghosts, estimated from the initial surface.
  if (cutoff) plan_cutoff(p, c, ranks);
  // The tree solver's migration and locally essential tree, estimated likewise.
  if (tree) plan_tree(p, c, ranks, opt.exchanges);

  // Ring pass of the exact Birkhoff-Rott solver: 6 doubles per owned node (medium and high).
  if (br && !cutoff && !tree && ranks > 1) {
    std::vector<long> counts(ranks);
    for (int g = 0; g < ranks; ++g) counts[g] = 6 * blocks[g].count();
    for (int g = 0; g < ranks; ++g) {
      const auto msgs = comm::plan_ring(g, counts);
      for (int d = 0; d < kDerivativesPerStep; ++d) {
        for (const auto& [peer, count] : msgs) p.message("ring", g, peer, count * long(sizeof(double)));
        p.call("ring", g);
      }
    }
  }

  out.degree_all.resize(ranks);
  for (int r = 0; r < ranks; ++r) out.degree_all[r] = static_cast<int>(p.peers_all[r].size());
  for (auto& [name, sets] : p.peers) {
    auto& d = out.degree[name];
    d.resize(ranks);
    for (int r = 0; r < ranks; ++r) d[r] = static_cast<int>(sets[r].size());
  }
  return out;
}

}  // namespace beatnik::app
