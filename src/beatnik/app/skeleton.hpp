#pragma once
// Skeleton mode (--skeleton, --skeleton-compute; docs/skeleton-and-dry-run.md): the run performs
// the communication of the configured step, and the compute phases stand in (base/compute_gate.hpp).
#include <nlohmann/json.hpp>

#include "beatnik/app/options.hpp"
#include "beatnik/app/problem.hpp"

namespace beatnik::app {

// Real steps taken to measure the compute phases (--skeleton-compute measured or X): the first
// warms up (plans, caches, page faults), the last one is measured.
inline constexpr int kSkeletonMeasureSteps = 2;

// Reads --skeleton and --skeleton-compute into the configuration and refuses what a skeleton
// cannot do (InputError): output of the physics (it is poisoned), restarts, a bad compute choice.
void configure_skeleton(const Options& o, RunConfig& c);

// "none", "measured" or the factor, as the banner and the results file say it.
std::string skeleton_compute_name(const RunConfig& c);

class Simulation;
// The results file's "skeleton" section and the banner's line (rank 0 of a skeleton run).
nlohmann::json skeleton_json(const Simulation& sim);
std::string skeleton_banner(const Simulation& sim);

}  // namespace beatnik::app
