#include "beatnik/model/br_particles.hpp"

#include <cmath>

#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/model/state.hpp"

namespace beatnik::model {

void pack_br_particles(const mesh::SurfaceMesh& mesh, const BRSettings& settings, exec::Space space,
                       const mesh::Field& state, const mesh::Field& omega, double* out) {
  const mesh::FieldView s = state.view(), w = omega.view();
  const auto& geo = mesh.geometry();
  const int gi0 = mesh.owned().lo[0], gj0 = mesh.owned().lo[1];
  const int nj = mesh.layout().nj;
  const BRWeights weight = settings.weights(geo);
  const double strength = -geo.spacing[0] * geo.spacing[1] / (4.0 * M_PI);
  const long n = mesh.layout().owned_count();
  double* p = out;
  exec::parallel_for(space, exec::Range2{0, mesh.layout().ni, 0, nj}, [=] BEATNIK_HOST_DEVICE(int i, int j) {
    const long k = long(i) * nj + j;
    const double f = strength * weight(gi0 + i, gj0 + j);
    p[k] = s(kZ1, i, j);
    p[n + k] = s(kZ2, i, j);
    p[2 * n + k] = s(kZ3, i, j);
    p[3 * n + k] = f * w(0, i, j);
    p[4 * n + k] = f * w(1, i, j);
    p[5 * n + k] = f * w(2, i, j);
  });
}

}  // namespace beatnik::model
