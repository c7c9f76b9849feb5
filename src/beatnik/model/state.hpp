#pragma once
// The interface state: position z = (z1, z2, z3) and vorticity amplitude w = (w1, w2), stored
// as one 5-component field so that one halo message per neighbour carries all of it.
#include "beatnik/mesh/field.hpp"

namespace beatnik::model {

inline constexpr int kZ1 = 0, kZ2 = 1, kZ3 = 2, kW1 = 3, kW2 = 4, kStateComps = 5;

}  // namespace beatnik::model
