#include "beatnik/model/exact_br_solver.hpp"

#include <cmath>

#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/model/br_block.hpp"
#include "beatnik/model/br_particles.hpp"
#include "beatnik/model/state.hpp"

namespace beatnik::model {

ExactBRSolver::ExactBRSolver(const mesh::SurfaceMesh& mesh, exec::Space space,
                             const BRSettings& settings, double epsilon, comm::CommStats* stats,
                             Timers* timers, const ComputeGate* gate)
    : mesh_(mesh), space_(space), settings_(settings), eps_(epsilon), gate_(gate) {
  const auto& geo = mesh.geometry();
  images_.k = settings.images;
  images_.centred = settings.centred;
  for (int d = 0; d < 2; ++d) images_.period[d] = geo.periodic[d] ? geo.period[d] : 0.0;
  n_ = mesh.layout().owned_count();
  ring_ = std::make_unique<comm::RingPass>(mesh.grid().comm(), 6 * n_, space, settings.ring_strategy,
                                           mesh.locality(), stats, timers, "br.exact", mesh.transport());
  acc_ = exec::Buffer<double>(space, 3 * n_);
  if (space == exec::Space::Device) partial_ = exec::Buffer<double>(space, size_t(kBRMaxSplits) * 3 * n_);
}

void ExactBRSolver::velocity(const mesh::Field& state, const mesh::Field& omega, const mesh::Field& out) {
  pack_br_particles(mesh_, settings_, space_, state, omega, ring_->own_block());  // the own block
  acc_.zero();
  BRBlockArgs a;
  a.targets = ring_->own_block();
  a.nt = n_;
  a.images = images_;
  a.eps = eps_;
  a.acc = acc_.data();
  a.partial = partial_.data();
  const exec::Space space = space_;
  // Skeleton mode: the blocks travel round the ring as ever; the pair interactions stand in.
  const bool run = computes(gate_);
  ring_->run([&](const double* block, int origin, int chunk, int chunks) {
    if (!run) return gate_->stand_in("br.exact.compute", 1.0 / chunks);
    BRBlockArgs b = a;
    b.sources = block;
    b.ns = ring_->count_of(origin) / 6;
    b.t0 = a.nt * chunk / chunks;
    b.t1 = a.nt * (chunk + 1) / chunks;
    if (space == exec::Space::Host) br_block_host(b);
    else br_block_device(b);
  });
  if (!run) return;
  const mesh::FieldView o = out.view();
  const int nj = mesh_.layout().nj;
  const long n = n_;
  const double* u = acc_.data();
  exec::parallel_for(space_, exec::Range2{0, mesh_.layout().ni, 0, nj}, [=] BEATNIK_HOST_DEVICE(int i, int j) {
    const long k = long(i) * nj + j;
    o(0, i, j) = u[k];
    o(1, i, j) = u[n + k];
    o(2, i, j) = u[2 * n + k];
  });
}

double ExactBRSolver::interactions_per_call() const {
  const double N = double(mesh_.global_nodes());
  return N * N * images_.count(0) * images_.count(1);
}

size_t ExactBRSolver::buffer_bytes() const {
  return (acc_.size() + partial_.size() + 6 * n_ * 3) * sizeof(double);
}

}  // namespace beatnik::model
