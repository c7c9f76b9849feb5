#include "beatnik/base/compute_gate.hpp"

#include "beatnik/base/timers.hpp"

namespace beatnik {

void ComputeGate::skip_all(std::map<std::string, double> seconds_per_call, double scale) {
  skip_ = true;
  seconds_.clear();
  for (const auto& [region, s] : seconds_per_call)
    if (s * scale > 0) seconds_[region] = s * scale;
}

void ComputeGate::stand_in(const std::string& region, double fraction) const {
  auto it = seconds_.find(region);
  if (it == seconds_.end()) return;
  // A busy wait, not a sleep: the core stays occupied as the computation would keep it.
  const double end = wall_seconds() + it->second * fraction;
  while (wall_seconds() < end) {
  }
}

const std::vector<std::string>& compute_regions() {
  static const std::vector<std::string> names = {
      "fft.local",        "riesz.multiply", "zmodel.velocity",  "zmodel.omega",   "zmodel.vorticity",
      "boundary",         "rk.update",      "br.exact.compute", "br.cutoff.bin", "br.cutoff.compute",
      "br.tree.upward",   "br.tree.low",    "br.tree.compute.lists", "br.tree.compute.near", "br.tree.compute.far",
      "br.tree.compute.edge", "br.tree.compute.down"};
  return names;
}

}  // namespace beatnik
