#include "beatnik/app/load_series.hpp"

#include "beatnik/model/cutoff_br_solver.hpp"
#include "beatnik/model/tree_br_solver.hpp"

namespace beatnik::app {

int LoadSeries::column(const std::string& name) const {
  for (size_t k = 0; k < names.size(); ++k)
    if (names[k] == name) return static_cast<int>(k);
  return -1;
}

void record_step_load(model::BRSolver* solver, LoadSeries& series) {
  if (auto* cutoff = dynamic_cast<model::CutoffBRSolver*>(solver)) {
    const std::vector<model::CutoffLoad> calls = cutoff->take_loads();
    model::CutoffLoad s = calls.empty() ? model::CutoffLoad{} : calls.front();
    for (size_t k = 1; k < calls.size(); ++k) {
      s.pairs += calls[k].pairs;
      s.migrate_bytes += calls[k].migrate_bytes;
      s.ghost_bytes += calls[k].ghost_bytes;
    }
    if (series.empty()) {
      series.solver = "cutoff";
      series.names = {"particles", "ghosts", "pairs", "migrate_bytes", "ghost_bytes"};
      series.unit = "per rank; particles and ghosts of the step's first Birkhoff-Rott call, pairs and bytes summed "
                    "over its calls";
    }
    series.steps.push_back({double(s.particles), double(s.ghosts), double(s.pairs), double(s.migrate_bytes),
                            double(s.ghost_bytes)});
  } else if (auto* tree = dynamic_cast<model::TreeBRSolver*>(solver)) {
    const std::vector<model::TreeLoad> calls = tree->take_loads();
    model::TreeLoad s = calls.empty() ? model::TreeLoad{} : calls.front();
    for (size_t k = 1; k < calls.size(); ++k) {
      s.direct_pairs += calls[k].direct_pairs;
      s.cluster_terms += calls[k].cluster_terms;
      s.proxy_pairs += calls[k].proxy_pairs;
      s.let_bytes += calls[k].let_bytes;
    }
    if (series.empty()) {
      series.solver = "tree";
      series.names = {"particles", "let_particles", "direct_pairs", "cluster_terms", "proxy_pairs", "let_bytes"};
      series.unit = "per rank; particles and LET particles of the step's first Birkhoff-Rott call, pairs, cluster "
                    "terms and bytes summed over its calls";
    }
    series.steps.push_back({double(s.particles), double(s.let_particles), double(s.direct_pairs),
                            double(s.cluster_terms), double(s.proxy_pairs), double(s.let_bytes)});
  }
}

void discard_loads(model::BRSolver* solver) {
  if (auto* cutoff = dynamic_cast<model::CutoffBRSolver*>(solver)) cutoff->take_loads();
  if (auto* tree = dynamic_cast<model::TreeBRSolver*>(solver)) {
    tree->take_loads();
    tree->reset_totals();
  }
}

}  // namespace beatnik::app
