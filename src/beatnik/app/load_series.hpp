#pragma once
// Per-rank load of the spatial Birkhoff–Rott solvers (cutoff, tree), one row per step: what
// app/load_report.* reduces over ranks. Each solver names its own quantities.
#include <string>
#include <vector>

#include "beatnik/model/br_solver.hpp"

namespace beatnik::app {

struct LoadSeries {
  std::string solver;               // "cutoff" or "tree"; empty: the run has neither
  std::vector<std::string> names;   // the quantities, in report order
  std::string unit;                 // what one value is
  std::vector<std::vector<double>> steps;  // per step: one value per name
  bool empty() const { return solver.empty(); }
  // The column of a quantity; -1 when this solver has none of that name.
  int column(const std::string& name) const;
};

// Takes the loads of the step just run from a cutoff or tree solver and appends one row;
// nothing for the other solvers.
void record_step_load(model::BRSolver* solver, LoadSeries& series);
// Drops a solver's loads (and the tree's interaction totals) without recording them (the
// skeleton's calibration steps).
void discard_loads(model::BRSolver* solver);

}  // namespace beatnik::app
