#pragma once
// Skeleton mode (--skeleton; docs/skeleton-and-dry-run.md): the switch every compute phase of a
// step consults. With no gate, or a gate that runs, the step computes as usual. A skipping gate
// makes each compute phase do nothing in place of its computation, or spin on the host for a
// stand-in time: the measured seconds per call of that timer region times a scale factor.
// Communication (packing, messages, unpacking) never asks the gate: it always runs.
#include <map>
#include <string>
#include <vector>

namespace beatnik {

class ComputeGate {
 public:
  // Skip every compute phase from now on; `seconds_per_call`: stand-in seconds of one call of
  // each timer region (regions not named stand in with nothing), multiplied by `scale`.
  void skip_all(std::map<std::string, double> seconds_per_call = {}, double scale = 1.0);
  bool skips() const { return skip_; }
  // In place of `fraction` of one call of `region`: spins its stand-in time (if any).
  void stand_in(const std::string& region, double fraction = 1.0) const;
  // Stand-in seconds per call, already scaled.
  const std::map<std::string, double>& stand_in_seconds() const { return seconds_; }

 private:
  bool skip_ = false;
  std::map<std::string, double> seconds_;
};

// Does `gate` (null: no skeleton) let the computation run?
inline bool computes(const ComputeGate* gate) { return gate == nullptr || !gate->skips(); }

// The timer regions a skipping gate stands in for (the compute phases of a step).
const std::vector<std::string>& compute_regions();

}  // namespace beatnik
