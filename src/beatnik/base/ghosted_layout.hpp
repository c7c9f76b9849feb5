#pragma once
// Memory layout of one rank's piece of a 2D field: ni x nj owned nodes surrounded by g ghost
// layers, j contiguous ("row-major" in (i, j)), components stored as separate planes.
#include "beatnik/exec/macros.hpp"

namespace beatnik {

struct GhostedLayout {
  int ni = 0, nj = 0, g = 0;

  BEATNIK_HOST_DEVICE long si() const { return nj + 2 * g; }
  BEATNIK_HOST_DEVICE long plane() const { return static_cast<long>(ni + 2 * g) * (nj + 2 * g); }
  // Local (i, j) with owned nodes at 0..ni-1, 0..nj-1 and ghosts at -g..-1 and ni..ni+g-1.
  BEATNIK_HOST_DEVICE long index(int i, int j) const {
    return static_cast<long>(i + g) * si() + (j + g);
  }
  long owned_count() const { return static_cast<long>(ni) * nj; }
};

}  // namespace beatnik
