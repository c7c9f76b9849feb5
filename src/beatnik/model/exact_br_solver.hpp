#pragma once
// Exact Birkhoff–Rott velocity (MODEL.md §7–§8): every owned target against every owned
// source of every rank, with all periodic images, by a ring pass over the ranks. Only owned
// positions and weighted ω travel (6 doubles per node), no ghosts.
#include <memory>

#include "beatnik/base/compute_gate.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/comm/comm_stats.hpp"
#include "beatnik/comm/ring_pass.hpp"
#include "beatnik/exec/memory.hpp"
#include "beatnik/mesh/field.hpp"
#include "beatnik/mesh/surface_mesh.hpp"
#include "beatnik/model/br_kernel.hpp"
#include "beatnik/model/br_solver.hpp"
#include "beatnik/model/parameters.hpp"

namespace beatnik::model {

class ExactBRSolver : public BRSolver {
 public:
  // epsilon: ε_eff (added to |r|² unsquared). Collective over the mesh's grid communicator.
  ExactBRSolver(const mesh::SurfaceMesh& mesh, exec::Space space, const BRSettings& settings,
                double epsilon, comm::CommStats* stats, Timers* timers, const ComputeGate* gate = nullptr);

  void velocity(const mesh::Field& state, const mesh::Field& omega, const mesh::Field& out) override;

  // Pair-image interactions per velocity() call, over all ranks.
  double interactions_per_call() const;
  const BRImages& images() const { return images_; }
  size_t buffer_bytes() const override;

  // Fills the ring's own block (public only because nvcc's device lambdas cannot live in
  // private member functions).

 private:
  const mesh::SurfaceMesh& mesh_;
  exec::Space space_;
  BRSettings settings_;
  double eps_;
  const ComputeGate* gate_;
  BRImages images_;
  long n_ = 0;  // owned nodes
  std::unique_ptr<comm::RingPass> ring_;
  exec::Buffer<double> acc_;      // [ux | uy | uz]
  exec::Buffer<double> partial_;  // device: per-source-part sums (br_block.hpp)
};

}  // namespace beatnik::model
