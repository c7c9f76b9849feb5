#pragma once
// -T/--tilt DEG (docs/cases.md): the initial interface tilted by DEG degrees about the y axis,
// z3 = (height of -I) + tan(DEG) * x, as in a tilted-rig Rayleigh-Taylor experiment. A tilted plane
// is not periodic, so only free boundaries take it.
#include "beatnik/app/options.hpp"
#include "beatnik/model/initial_conditions.hpp"

namespace beatnik::app {

// Checks -T against the other options (throws InputError) and sets the slope of `ic` (0 without -T).
void apply_tilt(const Options& o, bool periodic, model::InitialCondition& ic);

}  // namespace beatnik::app
