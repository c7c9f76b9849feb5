#pragma once
// Cutoff Birkhoff–Rott velocity (MODEL.md §9, DECISIONS.md): at every owned node, the sum over
// every source node — and every periodic image of it — that lies within the cutoff c, computed
// on the rank that owns the node's position in space. One call is a pipeline of patterns:
//
//   to_spatial  every owned surface node becomes a particle (position and weighted strength q,
//               48 B) and moves to the owner of its spatial cell (comm pattern "migrate");
//   ghosts      a copy of every particle within c of another rank's cell — or of its own cell,
//               for a periodic image — shifted by the actual wrap, goes to that rank (pattern
//               "ghost", 48 B a copy);
//   bin         owned particles and ghosts into a uniform cell list with cells of at least c;
//   compute     the §7 kernel over the neighbours within c (double-precision test, or the
//               reference's float32 test in the beatnik profile);
//   to_surface  the velocity alone (24 B a particle) returns to the surface owner ("migrate").
//
// Particles travel in blocks grouped by destination, and the return trip sends each block back
// in the order it arrived, so no index travels. Every buffer is kept and grown across calls.
// Timer regions: br.cutoff.{to_spatial, ghosts, bin, compute, to_surface}. The load of each
// call (particles, ghosts, pairs, bytes) is kept for the load-balance report.
#include <memory>
#include <vector>

#include "beatnik/base/compute_gate.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/migrate/migrator.hpp"
#include "beatnik/exec/counting_sort.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/exec/scan.hpp"
#include "beatnik/mesh/spatial_decomposition.hpp"
#include "beatnik/mesh/surface_mesh.hpp"
#include "beatnik/model/br_solver.hpp"
#include "beatnik/model/parameters.hpp"
#include "beatnik/search/cell_list.hpp"

namespace beatnik::model {

// One velocity() call on this rank.
struct CutoffLoad {
  long surface = 0;        // owned surface nodes
  long particles = 0;      // particles owned in space
  long ghosts = 0;         // ghost copies received (periodic self-images included)
  long pairs = 0;          // (target, source) pairs within the cutoff, the self pair excluded
  long migrate_bytes = 0;  // sent to other ranks, both directions of the migration
  long ghost_bytes = 0;    // ghost copies sent to other ranks
};

// Bytes per particle on the wire: there (position + strength) and back (velocity).
inline constexpr int kParticleWidth = 6, kVelocityWidth = 3;

// How far a ghost reaches (CutoffBRSolver::reach()): the float32 test rounds each coordinate to
// 24 bits, so ghosts and cells reach a little further than c and no pair it accepts is missed
// (extra candidates are harmless).
inline double cutoff_reach(double cutoff, const mesh::Geometry& geo) {
  const double L = geo.period[0] > geo.period[1] ? geo.period[0] : geo.period[1];
  return cutoff * (1.0 + 1e-6) + 1e-6 * L;
}

class CutoffBRSolver : public BRSolver {
 public:
  // epsilon: ε_eff. Collective over the mesh's grid communicator.
  CutoffBRSolver(const mesh::SurfaceMesh& mesh, exec::Space space, const BRSettings& settings, double epsilon,
                 comm::CommStats* stats, Timers* timers, const ComputeGate* gate = nullptr);
  ~CutoffBRSolver() override;

  void velocity(const mesh::Field& state, const mesh::Field& omega, const mesh::Field& out) override;
  size_t buffer_bytes() const override;

  // Loads of the calls since the last take, oldest first.
  std::vector<CutoffLoad> take_loads();
  const mesh::SpatialDecomposition& spatial() const { return spatial_; }
  const comm::Migrator& migrator() const { return *migrator_; }
  // How far a ghost reaches: the cutoff plus a margin that covers the float32 test's rounding.
  double reach() const { return reach_; }

  // Pipeline stages (public only because nvcc's device lambdas cannot live in private members).
  void to_spatial();
  void make_ghosts();
  void bin();
  void compute();
  void to_surface(const mesh::Field& out);

 private:
  const mesh::SurfaceMesh& mesh_;
  exec::Space space_;
  BRSettings settings_;
  double eps_;
  double reach_ = 0;
  comm::CommStats* stats_;
  Timers* timers_;
  const ComputeGate* gate_;  // skeleton mode: bin and compute stand in, the migrations run
  int rank_ = 0, size_ = 1;
  long n_ = 0;       // owned surface nodes
  long nown_ = 0;    // particles owned in space (this call)
  long nghost_ = 0;  // ghosts received (this call)
  mesh::SpatialDecomposition spatial_;
  std::unique_ptr<comm::Migrator> migrator_;
  exec::CountingSort by_dest_, by_ghost_dest_;
  exec::ExclusiveScan scan_;
  search::CellList cells_;

  exec::Buffer<double> pts_;                         // surface particles [x|y|z|qx|qy|qz]
  exec::Buffer<int> keys_;                           // destination rank of each
  exec::Buffer<double> send_, recv_;                 // records of 6, by destination / by source
  std::vector<long> send_counts_, recv_counts_;      // per rank
  exec::Buffer<long> ghost_count_, ghost_start_;     // copies per owned particle, their offsets
  exec::Buffer<int> ghost_dest_;                     // per copy: destination rank,
  exec::Buffer<long> ghost_src_;                     //   particle,
  exec::Buffer<double> ghost_shift_;                 //   image shift (x, y)
  exec::Buffer<double> ghost_send_, ghost_recv_;     // records of 6
  std::vector<long> ghost_send_counts_, ghost_recv_counts_;
  exec::Buffer<double> xyz_;                         // owned + ghost positions [x|y|z]
  exec::Buffer<double> sorted_;                      // the same with q, in cell order
  exec::Buffer<double> acc_;                         // velocities of owned particles [ux|uy|uz]
  exec::Buffer<double> back_send_, back_recv_;       // records of 3
  exec::Buffer<unsigned long long> pairs_;
  std::vector<CutoffLoad> loads_;
  bool broken_ = false;  // a position is not finite: the call returns NaN velocities
};

}  // namespace beatnik::model
