#include "beatnik/app/placement_report.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace beatnik::app {
namespace {

using nlohmann::json;

constexpr int kBannerMapRanks = 64;  // longer maps only in the results file

int largest_node(const std::vector<int>& node_of_rank) {
  std::vector<int> count;
  for (int n : node_of_rank) {
    if (n >= static_cast<int>(count.size())) count.resize(n + 1, 0);
    ++count[n];
  }
  return count.empty() ? 0 : *std::max_element(count.begin(), count.end());
}

std::array<int, 2> block_shape(const Simulation& sim) {
  const auto& g = sim.config().geometry;
  const auto p = sim.config().procs;
  return comm::placement::node_block_shape(p, largest_node(sim.context().node_of_rank()),
                                           {double(g.nodes[0]) / p[0], double(g.nodes[1]) / p[1]});
}

std::string nodes_source(const comm::Context& ctx) {
  return ctx.ranks_per_node() > 0 ? fmt::format("--ranks-per-node {}", ctx.ranks_per_node())
                                  : std::string("the machine's, MPI_Comm_split_type");
}

}  // namespace

json placement_json(const Simulation& sim) {
  const auto& pl = sim.mesh().placement();
  const auto& grid = sim.mesh().grid();
  const auto& ctx = sim.context();
  json j;
  j["policy"] = comm::placement::name(pl.policy);
  j["spec"] = pl.spec;
  if (pl.policy == comm::placement::Policy::Random) j["seed"] = pl.seed;
  if (pl.policy == comm::placement::Policy::File) j["file"] = pl.path;
  if (pl.policy == comm::placement::Policy::NodeBlocks) j["node_block"] = block_shape(sim);
  j["nodes_from"] = ctx.ranks_per_node() > 0 ? "ranks-per-node" : "mpi";
  if (ctx.ranks_per_node() > 0) j["ranks_per_node"] = ctx.ranks_per_node();
  json coords = json::array();
  for (int r = 0; r < ctx.size(); ++r) {
    const auto c = grid.coords_of(grid.grid_rank_of_parent()[r]);
    coords.push_back({c[0], c[1]});
  }
  j["coords_of_rank"] = coords;
  j["grid_rank_of_rank"] = grid.grid_rank_of_parent();
  j["node_of_rank"] = ctx.node_of_rank();
  j["machine_node_of_rank"] = ctx.machine_node_of_rank();
  return j;
}

std::string placement_banner(const Simulation& sim) {
  const auto& pl = sim.mesh().placement();
  const auto& grid = sim.mesh().grid();
  const auto& ctx = sim.context();
  std::string what = pl.spec;
  if (pl.policy == comm::placement::Policy::Random) what += fmt::format(" (seed {})", pl.seed);
  if (pl.policy == comm::placement::Policy::NodeBlocks) {
    const auto b = block_shape(sim);
    what += fmt::format(" ({} x {} ranks per node)", b[0], b[1]);
  }
  std::string out = fmt::format("  placement   {} over {} node(s) of up to {} rank(s) ({})\n", what, ctx.node_count(),
                                largest_node(ctx.node_of_rank()), nodes_source(ctx));
  if (ctx.size() > kBannerMapRanks)
    return out + "  map         in the results file (decomposition.placement.coords_of_rank)\n";
  out += "  map         rank:(i,j)node";
  for (int r = 0; r < ctx.size(); ++r) {
    if (r > 0 && r % 8 == 0) out += "\n             ";
    const auto c = grid.coords_of(grid.grid_rank_of_parent()[r]);
    out += fmt::format(" {}:({},{}){}", r, c[0], c[1], ctx.node_of_rank()[r]);
  }
  return out + "\n";
}

}  // namespace beatnik::app
