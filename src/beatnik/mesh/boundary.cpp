#include "beatnik/mesh/boundary.hpp"

#include "beatnik/exec/parallel_for.hpp"

namespace beatnik::mesh {

void Boundary::shift_periodic_positions(const Field& z) const {
  const auto& geo = mesh_.geometry();
  const GhostedLayout L = z.layout();
  const int g = L.g;
  const FieldView v = z.view();
  for (int d = 0; d < 2; ++d) {
    if (!geo.periodic[d]) continue;
    const double period = geo.period[d];
    for (int side = 0; side < 2; ++side) {
      if (side == 0 ? !mesh_.at_low(d) : !mesh_.at_high(d)) continue;
      const double shift = side == 0 ? -period : period;
      const int n = d == 0 ? L.ni : L.nj;
      const int lo = side == 0 ? -g : n, hi = side == 0 ? 0 : n + g;
      // The strip beyond this edge, including the corner ghosts at its ends.
      const exec::Range2 r = d == 0 ? exec::Range2{lo, hi, -g, L.nj + g}
                                    : exec::Range2{-g, L.ni + g, lo, hi};
      exec::parallel_for(space_, r, [=] BEATNIK_HOST_DEVICE(int i, int j) { v(d, i, j) += shift; });
    }
  }
}

void Boundary::extrapolate_free(const Field& f) const {
  const auto& geo = mesh_.geometry();
  const GhostedLayout L = f.layout();
  const int g = L.g, nc = f.ncomp();
  const FieldView v = f.view();
  bool free_low[2], free_high[2];
  for (int d = 0; d < 2; ++d) {
    free_low[d] = !geo.periodic[d] && mesh_.at_low(d);
    free_high[d] = !geo.periodic[d] && mesh_.at_high(d);
  }
  const int n[2] = {L.ni, L.nj};

  // Edges: along each line normal to a free edge, from the boundary node b and the next one b'.
  for (int d = 0; d < 2; ++d) {
    const int o = 1 - d;  // the other dimension: skip its ghosts that lie beyond a free edge
    const int olo = free_low[o] ? 0 : -g;
    const int ohi = free_high[o] ? n[o] : n[o] + g;
    for (int side = 0; side < 2; ++side) {
      if (side == 0 ? !free_low[d] : !free_high[d]) continue;
      const int b = side == 0 ? 0 : n[d] - 1;
      const int inward = side == 0 ? 1 : -1;
      exec::Range2 r = d == 0 ? exec::Range2{1, g + 1, olo, ohi} : exec::Range2{olo, ohi, 1, g + 1};
      exec::parallel_for(space_, r, [=] BEATNIK_HOST_DEVICE(int a, int c) {
        // (a, c) = (s, other index) for d == 0, (other index, s) for d == 1.
        const int s = d == 0 ? a : c, t = d == 0 ? c : a;
        const int gi = b - inward * s;
        for (int k = 0; k < nc; ++k) {
          const double fb = d == 0 ? v(k, b, t) : v(k, t, b);
          const double fb1 = d == 0 ? v(k, b + inward, t) : v(k, t, b + inward);
          (d == 0 ? v(k, gi, t) : v(k, t, gi)) = fb + s * (fb - fb1);
        }
      });
    }
  }

  // True global corners: walk the inward diagonal to the first node owned in both indices.
  for (int si = 0; si < 2; ++si) {
    for (int sj = 0; sj < 2; ++sj) {
      if (!(si == 0 ? free_low[0] : free_high[0]) || !(sj == 0 ? free_low[1] : free_high[1])) continue;
      const int bi = si == 0 ? 0 : L.ni - 1, bj = sj == 0 ? 0 : L.nj - 1;
      const int di = si == 0 ? 1 : -1, dj = sj == 0 ? 1 : -1;  // inward
      exec::parallel_for(space_, exec::Range2{1, g + 1, 1, g + 1}, [=] BEATNIK_HOST_DEVICE(int a, int b) {
        const int gi = bi - di * a, gj = bj - dj * b;
        const int s = a > b ? a : b;
        const int qi = gi + di * s, qj = gj + dj * s;
        for (int k = 0; k < nc; ++k) {
          const double fq = v(k, qi, qj), fq1 = v(k, qi + di, qj + dj);
          v(k, gi, gj) = fq + s * (fq - fq1);
        }
      });
    }
  }
}

}  // namespace beatnik::mesh
