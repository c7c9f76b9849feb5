#include "beatnik/app/tilt.hpp"

#include <cmath>
#include <string>

#include "beatnik/base/error.hpp"

namespace beatnik::app {

void apply_tilt(const Options& o, bool periodic, model::InitialCondition& ic) {
  ic.tilt_slope = 0.0;
  if (!o.tilt) return;
  const double deg = *o.tilt;
  if (!std::isfinite(deg) || !(std::fabs(deg) < 90.0))
    throw InputError("-T/--tilt takes an angle in degrees strictly between -90 and 90 (got " + std::to_string(deg) + ")");
  if (periodic && deg != 0.0)
    throw InputError("-T/--tilt with periodic boundaries: a tilted plane is not periodic (its height would jump by "
                     "tan(T) times the box width at the seam); use -b free (with -O high, or --profile beatnik)");
  if (o.input)
    throw InputError("-T/--tilt tilts the generated initial surface; it does not apply to -i FILE (a checkpoint or "
                     "surface file already has its heights)");
  ic.tilt_slope = std::tan(deg * M_PI / 180.0);
}

}  // namespace beatnik::app
