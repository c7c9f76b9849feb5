#pragma once
// Z-model right-hand side (MODEL.md §6): from the state (z, w) to its time derivative.
// Low order here; medium and high order plug in a Birkhoff–Rott velocity.
#include <climits>
#include <memory>

#include "beatnik/base/timers.hpp"
#include "beatnik/comm/halo_exchange.hpp"
#include "beatnik/mesh/boundary.hpp"
#include "beatnik/model/operators.hpp"
#include "beatnik/model/parameters.hpp"
#include "beatnik/model/riesz.hpp"
#include "beatnik/model/state.hpp"

namespace beatnik::model {

inline constexpr int kBadTangled = 0, kBadNonFinite = 1, kBadStretched = 2;

class ZModel {
 public:
  ZModel(const mesh::SurfaceMesh& mesh, exec::Space space, const ModelParameters& params,
         const fft::FftOptions& fft_options, comm::CommStats* stats, Timers* timers);

  // Refreshes the ghosts of `state` (halo + boundary conditions), then writes d(state)/dt on
  // owned nodes into `rate` (5 components, no ghosts).
  void derivatives(const mesh::Field& state, const mesh::Field& rate);

  // Halo exchange and boundary conditions of a state field.
  void gather(const mesh::Field& state);

  // Health watch since the last reset: LLONG_MAX if all was well, else 4·(i·Ny + j) + kind for
  // the lowest bad global node (i, j), kind one of kBad*.
  void reset_health();
  long long first_bad_node() const;

  const RieszTransform& riesz() const { return *riesz_; }
  size_t buffer_bytes() const;

 private:
  const mesh::SurfaceMesh& mesh_;
  exec::Space space_;
  ModelParameters params_;
  Timers* timers_;
  Spacing spacing_;
  comm::HaloExchange halo_state_, halo_v_;
  mesh::Boundary boundary_;
  std::unique_ptr<RieszTransform> riesz_;
  mesh::Field v_;      // V, with ghosts (its derivatives are taken)
  mesh::Field reisz_;  // R·w on owned nodes
  exec::Buffer<long long> bad_;
};

}  // namespace beatnik::model
