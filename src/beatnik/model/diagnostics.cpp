#include "beatnik/model/diagnostics.hpp"

#include <cmath>

#include "beatnik/exec/reduce.hpp"
#include "beatnik/model/state.hpp"

namespace beatnik::model {

LocalDiagnostics local_diagnostics(const mesh::Field& st) {
  const mesh::FieldView s = st.view();
  const GhostedLayout L = st.layout();
  const long n = L.owned_count();
  const int nj = L.nj;
  const exec::Space sp = st.space();
  // Owned node k = (k / nj, k % nj).
  auto at = [=] BEATNIK_HOST_DEVICE(int c, long k) { return s(c, static_cast<int>(k / nj), static_cast<int>(k % nj)); };
  LocalDiagnostics d;
  d.sum_z3 = exec::reduce_sum(sp, n, [=] BEATNIK_HOST_DEVICE(long k) { return at(kZ3, k); });
  d.sum_abs_w = exec::reduce_sum(sp, n, [=] BEATNIK_HOST_DEVICE(long k) { return std::fabs(at(kW1, k)) + std::fabs(at(kW2, k)); });
  d.max_z3 = exec::reduce_max(sp, n, [=] BEATNIK_HOST_DEVICE(long k) { return at(kZ3, k); });
  d.neg_min_z3 = exec::reduce_max(sp, n, [=] BEATNIK_HOST_DEVICE(long k) { return -at(kZ3, k); });
  d.max_abs_w1 = exec::reduce_max(sp, n, [=] BEATNIK_HOST_DEVICE(long k) { return std::fabs(at(kW1, k)); });
  d.max_abs_w2 = exec::reduce_max(sp, n, [=] BEATNIK_HOST_DEVICE(long k) { return std::fabs(at(kW2, k)); });
  d.nonfinite = exec::reduce_sum(sp, n, [=] BEATNIK_HOST_DEVICE(long k) {
    double bad = 0;
    for (int c = 0; c < kStateComps; ++c) bad += std::isfinite(at(c, k)) ? 0.0 : 1.0;
    return bad;
  });
  return d;
}

}  // namespace beatnik::model
