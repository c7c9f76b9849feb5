#pragma once
// Initial interface (MODEL.md §4, DECISIONS.md): positions on the mesh, heights by -I, zero
// vorticity. Random heights come from a counter-based generator keyed on (seed, global i, j),
// so every rank count and device produces the same surface.
#include <cstdint>
#include <string>

#include "beatnik/mesh/field.hpp"
#include "beatnik/mesh/surface_mesh.hpp"

namespace beatnik::model {

enum class InitialShape { Cos, Sech2, Random, Gaussian };
InitialShape parse_initial_shape(const std::string& s);  // throws InputError
const char* to_string(InitialShape s);

struct InitialCondition {
  InitialShape shape = InitialShape::Cos;
  double magnitude = 0.05;
  double period = 1.0;
  std::uint64_t seed = 0;
  bool reference_ranges = false;  // beatnik profile: the reference's random/gaussian value ranges
  double tilt_slope = 0.0;        // -T: the height rises by tilt_slope per unit of x (a tilted plane)
};

// Uniform double in [0, 1) from a hash of (seed, i, j, stream): splitmix64 finalizer.
std::uint64_t mix64(std::uint64_t x);
double uniform01(std::uint64_t seed, long i, long j, int stream);

// Height z3 of global node (i, j) at position (x, y): the shape of -I plus the tilt plane.
double initial_height(const InitialCondition& ic, long i, long j, double x, double y);

// Fills owned nodes of the 5-component state (ghosts are left to the first gather).
void initialize_state(const mesh::SurfaceMesh& mesh, const InitialCondition& ic, const mesh::Field& state);

}  // namespace beatnik::model
