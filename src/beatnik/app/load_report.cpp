#include "beatnik/app/load_report.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <array>

namespace beatnik::app {
namespace {

using nlohmann::json;

// min / median / max and max ÷ mean of one value per rank.
json spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  double mean = 0;
  for (double x : v) mean += x;
  mean /= double(n);
  const double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return json{{"min", v.front()}, {"median", med}, {"max", v.back()}, {"max_over_mean", mean > 0 ? v.back() / mean : 1.0}};
}

}  // namespace

json load_balance_json(const Simulation& sim) {
  const LoadSeries& series = sim.load_series();
  // Every rank runs the same solver: empty on one rank means empty on all.
  if (series.empty()) return json();
  MPI_Comm c = sim.mesh().grid().comm();
  const int rank = sim.mesh().grid().rank(), size = sim.mesh().grid().size();
  const int nq = static_cast<int>(series.names.size());
  // Every rank ran the same steps: gather the whole series (steps × quantities per rank).
  const long steps = static_cast<long>(series.steps.size());
  std::vector<double> mine(steps * nq), all(rank == 0 ? size_t(size) * steps * nq : 0);
  for (long s = 0; s < steps; ++s) std::copy(series.steps[s].begin(), series.steps[s].end(), mine.begin() + s * nq);
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), static_cast<int>(mine.size()),
             MPI_DOUBLE, 0, c);
  if (rank != 0) return json();
  auto at = [&](int r, long s, int q) { return all[(size_t(r) * steps + s) * nq + q]; };

  json out;
  out["solver"] = series.solver;
  out["quantities"] = series.names;
  out["unit"] = series.unit;
  out["partition"] = mesh::to_string(sim.config().model.br.partition);
  // Over the whole run: each rank's mean per step, spread over ranks.
  json run;
  for (int q = 0; q < nq; ++q) {
    std::vector<double> per_rank(size, 0.0);
    for (int r = 0; r < size; ++r) {
      for (long s = 0; s < steps; ++s) per_rank[r] += at(r, s, q);
      per_rank[r] /= double(std::max(steps, 1L));
    }
    run[series.names[q]] = spread(per_rank);
  }
  out["run_mean"] = run;
  // Per step (from first_step on): the spread over ranks.
  json per_step = json::object();
  for (int q = 0; q < nq; ++q) {
    json keys = {{"min", json::array()}, {"median", json::array()}, {"max", json::array()}, {"max_over_mean", json::array()}};
    for (long s = 0; s < steps; ++s) {
      std::vector<double> v(size);
      for (int r = 0; r < size; ++r) v[r] = at(r, s, q);
      const json sp = spread(v);
      for (auto& [k, arr] : keys.items()) arr.push_back(sp[k]);
    }
    per_step[series.names[q]] = keys;
  }
  out["per_step"] = per_step;
  // Full distributions at the steps the user named (those the run reached).
  json snaps = json::object();
  // The series starts after the run's first step (a restart starts later than step 0).
  const long first = sim.first_step();
  out["first_step"] = first + 1;
  for (long s : sim.config().options.load_snapshot) {
    if (s <= first || s > first + steps) continue;
    json snap;
    for (int q = 0; q < nq; ++q) {
      std::vector<double> v(size);
      for (int r = 0; r < size; ++r) v[r] = at(r, s - first - 1, q);
      snap[series.names[q]] = v;
    }
    snaps[std::to_string(s)] = snap;
  }
  out["snapshots"] = snaps;
  return out;
}

void print_load_summary(const json& load) {
  if (load.is_null()) return;
  fmt::print("\nLoad balance, {} Birkhoff-Rott ({} partition; per rank and step, over ranks)\n",
             load["solver"].get<std::string>(), load["partition"].get<std::string>());
  fmt::print("  {:<16} {:>12} {:>12} {:>12} {:>9}\n", "quantity", "min", "median", "max", "max/mean");
  for (const auto& name : load["quantities"]) {
    const std::string q = name.get<std::string>();
    const json& r = load["run_mean"][q];
    fmt::print("  {:<16} {:>12.4g} {:>12.4g} {:>12.4g} {:>9.3f}\n", q, r["min"].get<double>(), r["median"].get<double>(),
               r["max"].get<double>(), r["max_over_mean"].get<double>());
  }
}

}  // namespace beatnik::app
