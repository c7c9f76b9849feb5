#include "beatnik/app/grid_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "beatnik/base/error.hpp"
#include "beatnik/fft/fft_plan.hpp"

namespace beatnik::app {
namespace {

struct Candidate {
  std::array<int, 2> procs;
  fft::Intermediate inter;
  fft::PlanCost cost;
  auto key() const { return std::make_tuple(cost.total, cost.exchanges, cost.busiest, -procs[0], int(inter)); }
};

std::string name(const Candidate& c) {
  return fmt::format("{}x{} {}", c.procs[0], c.procs[1], c.inter == fft::Intermediate::Slab ? "slab" : "pencil");
}

}  // namespace

GridChoice choose_grid(std::array<int, 2> nodes, int ranks, const fft::FftOptions& options,
                       bool choose_intermediate) {
  std::vector<Candidate> cands;
  for (int p = 1; p <= ranks; ++p) {
    if (ranks % p != 0) continue;
    const std::array<int, 2> procs{p, ranks / p};
    if (nodes[0] < 2 * procs[0] || nodes[1] < 2 * procs[1]) continue;
    for (fft::Intermediate inter : {fft::Intermediate::Slab, fft::Intermediate::Pencil}) {
      if (!choose_intermediate && inter != options.intermediate) continue;
      fft::FftOptions o = options;
      o.intermediate = inter;
      cands.push_back(Candidate{procs, inter, fft::plan_cost(nodes, procs, o)});
    }
  }
  if (cands.empty())
    throw InputError("--ranks-grid auto: no process grid of " + std::to_string(ranks) + " ranks fits a " +
                     std::to_string(nodes[0]) + "x" + std::to_string(nodes[1]) +
                     " mesh (each rank needs at least 2 nodes per dimension)");
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) { return a.key() < b.key(); });
  GridChoice g;
  const Candidate& best = cands.front();
  g.procs = best.procs;
  g.intermediate = best.inter;
  g.bytes = best.cost.total;
  g.reason = fmt::format("{}: {} B per Riesz transform over all ranks ({} exchange(s) per FFT)", name(best),
                         best.cost.total, best.cost.exchanges);
  if (cands.size() > 1) {
    // The runner-up: the best on another grid (what the grid choice was against), else the
    // other intermediate on this grid.
    auto other = std::find_if(cands.begin() + 1, cands.end(), [&](const Candidate& c) { return c.procs != best.procs; });
    const Candidate& next = other != cands.end() ? *other : cands[1];
    g.runner_up_bytes = next.cost.total;
    g.reason += fmt::format("; runner-up {}: {} B ({} exchange(s))", name(next), next.cost.total,
                            next.cost.exchanges);
  } else {
    g.reason += "; the only candidate";
  }
  return g;
}

}  // namespace beatnik::app
