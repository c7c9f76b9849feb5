#include "beatnik/app/dry_run_tree.hpp"

#include "beatnik/app/dry_run_cutoff.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/mesh/decomposition.hpp"
#include "beatnik/mesh/spatial_decomposition.hpp"
#include "beatnik/model/initial_conditions.hpp"
#include "beatnik/model/tree_br_solver.hpp"
#include "beatnik/model/tree_pull.hpp"

namespace beatnik::app {
namespace {

constexpr long kDouble = long(sizeof(double));

using Boxes = std::vector<std::vector<search::Cluster>>;  // every rank's target boxes

// What every rank pushes: its pack_let block for each other rank's boxes (one message when not empty).
void push_blocks(const std::vector<model::tree::SourceTree>& trees, const Boxes& boxes,
                 const model::tree::Rules& rules, TreeCallEstimate& e) {
  const int ranks = static_cast<int>(trees.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (int o = 0; o < ranks; ++o) {
    std::vector<double> block;
    for (int r = 0; r < ranks; ++r) {
      if (r == o) continue;
      block.clear();
      const long n = model::tree::pack_let(trees[o], boxes[r], rules, block);
      if (n > 0) e.let[o].emplace_back(r, n * kDouble);
      e.let_bytes[o] += n * kDouble;
    }
  }
}

// What every rank pulls: the rma strategy's rounds (comm/let/rma.cpp), each owner's spans served
// from its exposed sections; one get per owner and round with data.
void pull_blocks(const std::vector<model::tree::SourceTree>& trees, const Boxes& boxes,
                 const model::tree::Rules& rules, TreeCallEstimate& e) {
  using comm::let::Span;
  const int ranks = static_cast<int>(trees.size());
  if (ranks == 1) return;  // the strategy walks nothing on one rank
  std::vector<std::vector<double>> records(ranks);
  std::vector<std::vector<comm::let::Section>> exposed(ranks);
  for (int o = 0; o < ranks; ++o) exposed[o] = model::tree::expose(trees[o], records[o]);
#pragma omp parallel for schedule(dynamic, 1)
  for (int r = 0; r < ranks; ++r) {
    model::tree::LetPull walk(boxes[r], rules, ranks);
    std::vector<std::vector<Span>> want(ranks);
    std::vector<std::vector<double>> got(ranks);
    for (int o = 0; o < ranks; ++o) {
      if (o == r) continue;
      std::vector<long> sizes;
      for (const auto& s : exposed[o]) sizes.push_back(s.size);
      walk.start(o, sizes, want[o]);
    }
    for (bool any = true; any;) {
      any = false;
      for (int o = 0; o < ranks; ++o) {
        if (want[o].empty()) continue;
        any = true;
        got[o].clear();
        for (const Span& s : want[o]) {
          const double* d = exposed[o][s.section].data + s.offset;
          got[o].insert(got[o].end(), d, d + s.count);
        }
        if (!got[o].empty()) e.let[r].emplace_back(o, long(got[o].size()) * kDouble);
      }
      for (int o = 0; o < ranks; ++o) {
        if (want[o].empty()) continue;
        want[o].clear();
        walk.next(o, got[o], want[o]);
      }
    }
    e.let_bytes[r] = walk.fetched() * kDouble;
  }
}

}  // namespace

TreeCallEstimate estimate_tree_call(const RunConfig& c) {
  require_initial_surface(c, "tree");
  const mesh::Geometry& geo = c.geometry;
  const long total = long(geo.nodes[0]) * geo.nodes[1];
  if (total > kDryRunBalancedMaxNodes)
    throw NotAvailable("--dry-run -S tree builds every rank's tree from every node's position in memory, at most " +
                       std::to_string(kDryRunBalancedMaxNodes) + " nodes (this mesh has " + std::to_string(total) +
                       "); use a smaller mesh");
  const int ranks = c.procs[0] * c.procs[1];
  const std::vector<Box2> blocks = mesh::Decomposition(geo.nodes, c.procs).all_owned();

  // Every node's initial position, surface rank by rank, each block row-major (pack_br_particles).
  std::vector<long> first(ranks + 1, 0);
  for (int g = 0; g < ranks; ++g) first[g + 1] = first[g] + blocks[g].count();
  std::vector<double> x(static_cast<size_t>(total)), y(x.size()), z(x.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (int g = 0; g < ranks; ++g) {
    long k = first[g];
    for (int i = blocks[g].lo[0]; i < blocks[g].hi[0]; ++i)
      for (int j = blocks[g].lo[1]; j < blocks[g].hi[1]; ++j, ++k) {
        x[k] = geo.position(0, i);
        y[k] = geo.position(1, j);
        z[k] = model::initial_height(c.initial, i, j, x[k], y[k]);
      }
  }
  // The cuts of the solver's first call (serial: every particle is here), each node's owner.
  mesh::SpatialDecomposition sd(c.procs, {-0.5 * geo.period[0], -0.5 * geo.period[1]},
                                {0.5 * geo.period[0], 0.5 * geo.period[1]}, c.model.br.partition);
  if (!sd.update(x.data(), y.data(), total)) throw Error("dry run: the initial surface has non-finite positions");
  const mesh::SpatialView v = sd.host_view();
  std::vector<int> owner(x.size());
#pragma omp parallel for
  for (long k = 0; k < total; ++k) owner[k] = v.owner(x[k], y[k]);

  TreeCallEstimate e;
  e.to_spatial.resize(ranks);
  e.let.resize(ranks);
  e.let_bytes.assign(ranks, 0);
  // Each owner's particles in the order they arrive: by source rank, then surface order.
  std::vector<std::vector<long>> arrivals(ranks);
  for (int g = 0; g < ranks; ++g)
    for (long k = first[g]; k < first[g + 1]; ++k) {
      ++e.to_spatial[g][owner[k]];
      arrivals[owner[k]].push_back(k);
    }
  // Every rank's tree and proxy layout, as the solver builds them (strengths are not needed).
  const model::BRSettings& b = c.model.br;
  std::vector<model::tree::SourceTree> trees(ranks);
  Boxes boxes(ranks);
#pragma omp parallel for schedule(dynamic, 1)
  for (int o = 0; o < ranks; ++o) {
    const long n = static_cast<long>(arrivals[o].size());
    std::vector<double> own(size_t(6 * n), 0.0);
    for (long q = 0; q < n; ++q) {
      own[q] = x[arrivals[o][q]];
      own[n + q] = y[arrivals[o][q]];
      own[2 * n + q] = z[arrivals[o][q]];
    }
    search::ClusterTree tree;
    model::build_source_tree(tree, own.data(), n, b.tree_leaf, trees[o]);
    model::layout_proxies(trees[o], b.tree_degree, b.tree_theta);
    std::vector<double> rec(model::tree::kLetBoxes * model::tree::kBoxWidth);
    model::tree::target_box_records(trees[o], rec.data());  // the allgathered records, as every rank reads them
    boxes[o] = model::tree::target_boxes(rec.data());
  }
  const model::tree::Rules rules = model::tree_rules(b, geo);
  e.pulled = b.let_strategy == "rma";
  if (e.pulled) pull_blocks(trees, boxes, rules, e);
  else push_blocks(trees, boxes, rules, e);
  return e;
}

}  // namespace beatnik::app
