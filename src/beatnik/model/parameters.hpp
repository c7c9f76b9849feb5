#pragma once
// Physical and numerical parameters of one Z-model run, already in solver units.
#include <string>

#include "beatnik/mesh/geometry.hpp"
#include "beatnik/mesh/spatial_decomposition.hpp"
#include "beatnik/model/br_kernel.hpp"

namespace beatnik::model {

enum class Order { Low, Medium, High };
inline const char* to_string(Order o) {
  return o == Order::Low ? "low" : o == Order::Medium ? "medium" : "high";
}

// Birkhoff–Rott solver choices (DECISIONS.md: per profile).
struct BRSettings {
  std::string ring_strategy = "overlap";  // exact solver: a name in comm/ring/registry
  int images = 1;          // K: (2K+1)² periodic images per pair
  bool centred = true;     // centre the block on the nearest image (consistent); else fixed at 0
  int simpson_len = 0;     // > 0: Simpson-3/8 weights with this length (beatnik); 0: uniform/trapezoid
  // Cutoff solver (-S cutoff): radius, neighbour test, spatial partition, migration strategy.
  bool cutoff_solver = false;
  double cutoff = 0.5;
  bool float32_test = false;  // the reference's single-precision test (beatnik profile)
  mesh::SpatialPartition partition = mesh::SpatialPartition::Uniform;
  std::string migrate_strategy = "alltoallv";
  // Treecode (-S tree; docs/tree.md): opening parameter θ, interpolation degree, leaf size.
  bool tree_solver = false;
  double tree_theta = 0.6;
  int tree_degree = 8;
  int tree_leaf = 64;
  bool tree_edge = true;  // --tree-edge-terms: edge terms for clusters cut by the image window's edge
  // --tree-edge-margin: an edge term's cluster separated at θ / margin, its set valid at margin·ρ
  // (from --br-tolerance's table unless given; tree_let.hpp kEdgeMargin).
  double tree_edge_margin = 1.5;
  // The single traversal's lists: every image of a batch in one walk of each source tree (false:
  // one walk per image, the same lists more slowly; internal switch, the tests' reference).
  bool tree_walk_images = true;
  // --tree-traversal: single (particle–cluster: every target batch walks the source trees) or
  // dual (cluster–cluster far field on the host: target clusters interpolate; -x cuda keeps single).
  bool tree_dual = true;
  std::string let_strategy = "alltoallv";  // the locally essential tree: a name in comm/let/registry
  // --br-check K: the exact sum at K sampled nodes after every BR call (0: off).
  long check_samples = 0;

  BRWeights weights(const mesh::Geometry& g) const {
    BRWeights w;
    w.simpson_len = simpson_len;
    for (int d = 0; d < 2; ++d) {
      w.nodes[d] = g.nodes[d];
      w.periodic[d] = g.periodic[d];
    }
    return w;
  }
};

struct ModelParameters {
  Order order = Order::Low;
  double atwood = 0.5;
  double gravity = 245.25;     // already multiplied by 9.81
  double mu = 0.0;             // artificial viscosity μ_eff = M·√(ΔxΔy)
  double epsilon = 0.0;        // desingularisation ε_eff = e·√(ΔxΔy) (BR solvers)
  double metric_power = 0.5;   // p in u_n = −½·R·ϖ / det(h)^p
  // Blow-up guard: the run stops where the local mesh stretch det(h)^(1/4) exceeds this (0: off).
  double max_stretch = 100.0;
  // How the halo exchanges' messages travel over MPI (comm/halo/registry.hpp).
  std::string halo_strategy = "isend";
  // Interior work while the halo exchanges are in flight (--halo-overlap; docs/overlap.md).
  bool halo_overlap = false;
  BRSettings br;
};

}  // namespace beatnik::model
