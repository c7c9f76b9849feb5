#pragma once
// Per-rank partial sums and extremes of the state on owned nodes (checksums, progress lines,
// the end-of-run health check). The caller reduces them over ranks.
#include "beatnik/mesh/field.hpp"

namespace beatnik::model {

struct LocalDiagnostics {
  double sum_z3 = 0, sum_abs_w = 0;        // Σ z3, Σ (|w1| + |w2|)
  double max_z3 = 0, neg_min_z3 = 0;       // max z3, −min z3
  double max_abs_w1 = 0, max_abs_w2 = 0;
  double nonfinite = 0;                    // count of non-finite values
};

LocalDiagnostics local_diagnostics(const mesh::Field& state);

}  // namespace beatnik::model
