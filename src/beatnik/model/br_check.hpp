#pragma once
// Measured accuracy of any Birkhoff–Rott solver at run time (--br-check K; docs/tree.md): after a
// BR call, the exact sum (MODEL.md §7, the exact solver's kernel, images and weights) at K
// sampled surface nodes, compared with the velocities the solver returned. The samples are
// global nodes chosen by their global index alone, so every decomposition checks the same
// nodes. The exact sums come by a ring pass of every rank's particles (its own RingPass, whose
// bytes are not counted in any pattern: the check is a diagnostic). Each call leaves this
// rank's partial sums; the caller reduces them over the ranks (physics calls no MPI).
// Timer region br.check (br.check.compute, br.check.ring inside it). Host only.
#include <memory>
#include <vector>

#include "beatnik/base/timers.hpp"
#include "beatnik/comm/ring_pass.hpp"
#include "beatnik/mesh/field.hpp"
#include "beatnik/mesh/surface_mesh.hpp"
#include "beatnik/model/br_kernel.hpp"
#include "beatnik/model/parameters.hpp"

namespace beatnik::model {

// One check on this rank: sums over its sampled nodes of |u − u_exact|² and |u_exact|², and the
// largest |u − u_exact| and |u_exact| (vector 2-norms).
struct BRCheckSums {
  double diff2 = 0.0, ref2 = 0.0, diff_max = 0.0, ref_max = 0.0;
  long samples = 0;
};

// The global node indices (gi·ny + gj) of K samples among N nodes: ⌊(2s+1)·N / 2K⌋, s < K.
std::vector<long> br_check_nodes(long nodes, long samples);

class BRCheck {
 public:
  BRCheck(const mesh::SurfaceMesh& mesh, const BRSettings& settings, double epsilon, Timers* timers);
  ~BRCheck();
  // Compares `out` (the solver's velocities, owned nodes) with the exact sum at the samples.
  void run(const mesh::Field& state, const mesh::Field& omega, const mesh::Field& out);
  // Sums of the checks since the last take, oldest first.
  std::vector<BRCheckSums> take();

 private:
  void sample(const mesh::Field& state, const mesh::Field& omega, const mesh::Field& out);
  static const mesh::Field& on_host(const mesh::Field& f, mesh::Field& mirror);
  mesh::Field host_state_, host_omega_, host_out_;  // -x cuda: the fields copied to the host
  const mesh::SurfaceMesh& mesh_;
  BRSettings settings_;
  double eps_;
  Timers* timers_;
  BRImages images_;
  std::vector<int> local_i_, local_j_;  // this rank's samples (owned indices)
  std::vector<double> targets_, acc_;   // [x|y|z], [ux|uy|uz]
  std::unique_ptr<comm::RingPass> ring_;
  std::vector<BRCheckSums> sums_;
};

}  // namespace beatnik::model
