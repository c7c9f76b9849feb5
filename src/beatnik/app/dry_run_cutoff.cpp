#include "beatnik/app/dry_run_cutoff.hpp"

#include <algorithm>
#include <unordered_map>

#include "beatnik/base/error.hpp"
#include "beatnik/mesh/decomposition.hpp"
#include "beatnik/mesh/spatial_decomposition.hpp"
#include "beatnik/model/cutoff_br_solver.hpp"

namespace beatnik::app {
namespace {

// The spatial cuts the solver's first call computes from the initial positions.
void cut_space(const RunConfig& c, mesh::SpatialDecomposition& sd) {
  const mesh::Geometry& geo = c.geometry;
  const long n0 = geo.nodes[0], n1 = geo.nodes[1];
  std::vector<double> x, y;
  if (c.model.br.partition == mesh::SpatialPartition::Balanced) {
    // The quantile cuts need every particle: the whole mesh, as the ranks' histograms sum it.
    if (n0 * n1 > kDryRunBalancedMaxNodes)
      throw NotAvailable("--dry-run -S cutoff --spatial-partition balanced gathers every node's position in "
                         "memory, at most " + std::to_string(kDryRunBalancedMaxNodes) + " nodes (this mesh has " +
                         std::to_string(n0 * n1) + "); use --spatial-partition uniform or a smaller mesh");
    x.resize(size_t(n0 * n1));
    y.resize(size_t(n0 * n1));
    for (long i = 0; i < n0; ++i)
      for (long j = 0; j < n1; ++j) {
        x[size_t(i * n1 + j)] = geo.position(0, static_cast<int>(i));
        y[size_t(i * n1 + j)] = geo.position(1, static_cast<int>(j));
      }
  } else {
    // Uniform cuts read only the particles' extent: every node's x paired with every node's y
    // (the shorter axis repeating its last node) spans exactly the extent of the whole mesh.
    const long n = std::max(n0, n1);
    x.resize(size_t(n));
    y.resize(size_t(n));
    for (long k = 0; k < n; ++k) {
      x[size_t(k)] = geo.position(0, static_cast<int>(std::min(k, n0 - 1)));
      y[size_t(k)] = geo.position(1, static_cast<int>(std::min(k, n1 - 1)));
    }
  }
  if (!sd.update(x.data(), y.data(), static_cast<long>(x.size())))
    throw Error("dry run: the initial surface has non-finite positions");
}

}  // namespace

void require_initial_surface(const RunConfig& c, const char* solver) {
  if (c.options.input)
    throw NotAvailable(std::string("--dry-run -S ") + solver + " estimates the messages from the initial surface of "
                       "-I; with -i FILE the positions are the file's (--skeleton refuses -i too): a real run's "
                       "results measure them");
}

CutoffCallEstimate estimate_cutoff_call(const RunConfig& c) {
  require_initial_surface(c, "cutoff");
  const mesh::Geometry& geo = c.geometry;
  const int ranks = c.procs[0] * c.procs[1];
  // As CutoffBRSolver builds it: the surface box [-L/2, L/2]^2 and the run's partition.
  mesh::SpatialDecomposition sd(c.procs, {-0.5 * geo.period[0], -0.5 * geo.period[1]},
                                {0.5 * geo.period[0], 0.5 * geo.period[1]}, c.model.br.partition);
  cut_space(c, sd);
  const mesh::SpatialView v = sd.host_view();
  const double reach = model::cutoff_reach(c.model.br.cutoff, geo);
  const double period[2] = {geo.periodic[0] ? geo.period[0] : 0.0, geo.periodic[1] ? geo.period[1] : 0.0};
  const std::vector<Box2> blocks = mesh::Decomposition(geo.nodes, c.procs).all_owned();

  CutoffCallEstimate e;
  e.to_spatial.resize(ranks);
  std::vector<std::unordered_map<long, long>> ghosts(ranks);  // per surface rank: (o·P + t) -> copies
#pragma omp parallel for schedule(dynamic, 1)
  for (int g = 0; g < ranks; ++g) {
    std::vector<long> owned(ranks, 0);
    auto& gh = ghosts[g];
    const Box2 b = blocks[g];
    for (int i = b.lo[0]; i < b.hi[0]; ++i) {
      const double x = geo.position(0, i);
      for (int j = b.lo[1]; j < b.hi[1]; ++j) {
        const double y = geo.position(1, j);
        const int o = v.owner(x, y);
        ++owned[o];
        mesh::visit_ghost_targets(v, period, reach, o, x, y,
                                  [&](int t, double, double) { ++gh[long(o) * ranks + t]; });
      }
    }
    for (int o = 0; o < ranks; ++o)
      if (owned[o] > 0) e.to_spatial[g][o] = owned[o];
  }
  e.ghosts.resize(ranks);
  for (const auto& gh : ghosts)
    for (const auto& [key, n] : gh) e.ghosts[key / ranks][static_cast<int>(key % ranks)] += n;
  return e;
}

}  // namespace beatnik::app
