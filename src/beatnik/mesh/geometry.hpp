#pragma once
// Where the surface mesh's nodes start and which spacing the operators use, per dimension.
#include <array>

namespace beatnik::mesh {

struct Geometry {
  std::array<int, 2> nodes{0, 0};            // N: distinct nodes per dimension
  std::array<bool, 2> periodic{true, true};
  std::array<double, 2> spacing{0, 0};       // Δ used by every finite difference and weight
  std::array<double, 2> node_spacing{0, 0};  // distance between initial node positions
  std::array<double, 2> origin{0, 0};        // initial position of node 0
  std::array<double, 2> period{0, 0};        // box extent L (the periodic shift)

  double position(int d, int g) const { return origin[d] + g * node_spacing[d]; }
};

}  // namespace beatnik::mesh
