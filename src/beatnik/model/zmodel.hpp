#pragma once
// Z-model right-hand side (MODEL.md §6): from the state (z, w) to its time derivative.
// low: ż = u_n·n̂ from the Riesz transform; medium: ż = BR velocity, u_n from Riesz;
// high: ż = BR velocity, u_n = |ż| (MODEL.md §6.5).
#include <climits>
#include <memory>

#include "beatnik/base/compute_gate.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/comm/halo_exchange.hpp"
#include "beatnik/exec/interior_split.hpp"
#include "beatnik/mesh/boundary.hpp"
#include "beatnik/model/br_check.hpp"
#include "beatnik/model/br_solver.hpp"
#include "beatnik/model/operators.hpp"
#include "beatnik/model/parameters.hpp"
#include "beatnik/model/riesz.hpp"
#include "beatnik/model/state.hpp"

namespace beatnik::model {

inline constexpr int kBadTangled = 0, kBadNonFinite = 1, kBadStretched = 2;

// Where derivatives() puts L(state), the time derivative, at each owned node: into `out` as it
// is (a plain rate), or, for a Runge–Kutta stage, out = a·x + b·y + c·L written by the kernels
// that compute L (no rate array written and read back by a separate update pass). `out` must
// not be the state (the kernels read its neighbours); x and y are read at the written node
// only. With `velocity` set, ż (components 0..2 of L) is stored there too.
struct StageUpdate {
  const mesh::Field* out = nullptr;
  double a = 0, b = 0, c = 1;
  const mesh::Field* x = nullptr;  // null: out = L
  const mesh::Field* y = nullptr;
  const mesh::Field* velocity = nullptr;
};

namespace detail {
// StageUpdate as the kernels see it. Compile-time switches: a run-time branch around the stores
// keeps the compiler from vectorising the stencil loops.
template <bool Combine, bool Velocity>
struct RateSink {
  mesh::FieldView out, x, y, vel;
  double a = 0, b = 0, c = 1;
  BEATNIK_HOST_DEVICE void put(int comp, int i, int j, double r) const {
    if constexpr (Combine) out(comp, i, j) = a * x(comp, i, j) + b * y(comp, i, j) + c * r;
    else out(comp, i, j) = r;
  }
  BEATNIK_HOST_DEVICE void put_velocity(int comp, int i, int j, double r) const {
    if constexpr (Velocity) vel(comp, i, j) = r;
    put(comp, i, j, r);
  }
};
}  // namespace detail

class ZModel {
 public:
  ZModel(const mesh::SurfaceMesh& mesh, exec::Space space, const ModelParameters& params,
         const fft::FftOptions& fft_options, comm::CommStats* stats, Timers* timers,
         const ComputeGate* gate = nullptr);

  // Refreshes the ghosts of `state` (halo + boundary conditions), then writes d(state)/dt on
  // owned nodes into `rate` (5 components, no ghosts).
  void derivatives(const mesh::Field& state, const mesh::Field& rate) { derivatives(state, StageUpdate{&rate}); }
  // The same with the rate's destination (and a Runge–Kutta stage's update) given by `u`.
  void derivatives(const mesh::Field& state, const StageUpdate& u);
  // derivatives() with the destination's kind fixed at compile time (public for nvcc's lambdas).
  template <bool Combine, bool Velocity>
  void derivatives_to(const mesh::Field& state, const StageUpdate& u);

  // Halo exchange and boundary conditions of a state field.
  void gather(const mesh::Field& state);
  // Boundary conditions of a state field whose halo has arrived (ghosts only).
  void state_boundary(const mesh::Field& state);

  // Health watch since the last reset: LLONG_MAX if all was well, else 4·(i·Ny + j) + kind for
  // the lowest bad global node (i, j), kind one of kBad*.
  void reset_health();
  long long first_bad_node() const;

  const RieszTransform* riesz() const { return riesz_.get(); }
  BRSolver* br_solver() const { return br_.get(); }
  // Skeleton mode's switch (null: always compute).
  const ComputeGate* gate() const { return gate_; }
  BRCheck* br_check() const { return check_.get(); }  // null without --br-check
  const mesh::Field& omega_field() const { return omega_; }  // the last BR call's ω (medium, high)
  size_t buffer_bytes() const;

  // ω from the gathered state (its border only when the interior was done while the halo
  // travelled), then the BR velocity into br_u_ (public for nvcc's lambdas).
  void birkhoff_rott(const mesh::Field& state, bool omega_interior_done = false);
  // ω = w2·Dx z − w1·Dy z on the given part of the owned nodes.
  void omega(const mesh::Field& state, exec::Part part);

 private:
  const mesh::SurfaceMesh& mesh_;
  exec::Space space_;
  ModelParameters params_;
  Timers* timers_;
  const ComputeGate* gate_;
  Spacing spacing_;
  comm::HaloExchange halo_state_, halo_v_;
  mesh::Boundary boundary_;
  std::unique_ptr<RieszTransform> riesz_;  // low, medium
  std::unique_ptr<BRSolver> br_;           // medium, high: exact, cutoff or tree
  std::unique_ptr<BRCheck> check_;         // --br-check
  mesh::Field omega_;  // ω = w2·Dx z − w1·Dy z on owned nodes (BR source)
  mesh::Field br_u_;   // BR velocity on owned nodes
  mesh::Field v_;      // V, with ghosts (its derivatives are taken)
  exec::Buffer<long long> bad_;
};

}  // namespace beatnik::model
