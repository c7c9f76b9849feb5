#include "beatnik/app/br_check_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace beatnik::app {

BRCheckStep reduce_br_check(const std::vector<model::BRCheckSums>& calls, long step, MPI_Comm comm) {
  BRCheckStep s;
  s.step = step;
  s.calls = static_cast<int>(calls.size());
  for (const auto& c : calls) {
    double sum[2] = {c.diff2, c.ref2}, max[2] = {c.diff_max, c.ref_max};
    long n = c.samples;
    MPI_Allreduce(MPI_IN_PLACE, sum, 2, MPI_DOUBLE, MPI_SUM, comm);
    MPI_Allreduce(MPI_IN_PLACE, max, 2, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_LONG, MPI_SUM, comm);
    s.samples = n;
    s.max_rel = std::max(s.max_rel, max[1] > 0 ? max[0] / max[1] : max[0]);
    s.rms_rel = std::max(s.rms_rel, sum[1] > 0 ? std::sqrt(sum[0] / sum[1]) : std::sqrt(sum[0]));
  }
  return s;
}

nlohmann::json br_check_json(const std::vector<BRCheckStep>& series) {
  nlohmann::json j;
  nlohmann::json steps = nlohmann::json::array();
  double worst_max = 0.0, worst_rms = 0.0;
  for (const auto& s : series) {
    steps.push_back({{"step", s.step}, {"calls", s.calls}, {"max_rel", s.max_rel}, {"rms_rel", s.rms_rel}});
    worst_max = std::max(worst_max, s.max_rel);
    worst_rms = std::max(worst_rms, s.rms_rel);
  }
  j["samples"] = series.empty() ? 0L : series.front().samples;
  j["max_rel"] = worst_max;
  j["rms_rel"] = worst_rms;
  j["steps"] = steps;
  return j;
}

void print_br_check_summary(const nlohmann::json& check) {
  fmt::print("  BR check              {} sampled nodes against the exact sum: error max {:.3e}, RMS {:.3e} "
             "(relative, worst step of {})\n",
             check["samples"].get<long>(), check["max_rel"].get<double>(), check["rms_rel"].get<double>(),
             check["steps"].size());
}

}  // namespace beatnik::app
