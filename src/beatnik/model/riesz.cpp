#include "beatnik/model/riesz.hpp"

#include <cmath>

namespace beatnik::model {

RieszTransform::RieszTransform(const mesh::SurfaceMesh& mesh, exec::Space space,
                               const fft::FftOptions& options, comm::CommStats* stats,
                               Timers* timers, const ComputeGate* gate)
    : mesh_(mesh), space_(space), timers_(timers), gate_(gate) {
  const auto& geo = mesh.geometry();
  fft_ = std::make_unique<fft::DistributedFFT>(mesh.context(), mesh.grid().comm(), geo.nodes,
                                               mesh.decomposition().procs(),
                                               mesh.decomposition().all_owned(), space, options,
                                               stats, timers, mesh.transport(), gate);
  // Physical wavenumbers: only k/|k| enters, so this matters for unequal boxes or node counts.
  for (int d = 0; d < 2; ++d) k_scale_[d] = 2.0 * M_PI / (geo.nodes[d] * geo.node_spacing[d]);
}

void RieszTransform::apply(const mesh::Field& in, int c1, int c2, const mesh::Field& out) {
  const mesh::FieldView w = in.view();
  const mesh::FieldView r = out.view();
  const int lo0 = mesh_.owned().lo[0], lo1 = mesh_.owned().lo[1];
  fft_->forward([=] BEATNIK_HOST_DEVICE(int i, int j) {
    return cplx{w(c1, i - lo0, j - lo1), w(c2, i - lo0, j - lo1)};
  });
  {
    Timers::Scope t(timers_, "riesz.multiply");
    if (!computes(gate_)) gate_->stand_in("riesz.multiply");
    else {
    const ArrayLayout2 sl = fft_->spectral_layout();
    const StridedIndex at = indexer(sl);
    cplx* s = fft_->spectrum();
    const int nx = fft_->global()[0], ny = fft_->global()[1];
    const double norm = 1.0 / (double(nx) * ny);
    const double kx = k_scale_[0], ky = k_scale_[1];
    if (fft_->half_spectrum()) {
      // Two real fields' half spectra: R̂ = −i (k1 ŵ1 + k2 ŵ2)/(|k|·NxNy), Hermitian because
      // each R_j maps real to real; the inverse is complex to real.
      const cplx* s2 = fft_->spectrum_second();
      exec::parallel_for(space_, exec::Range2{sl.box.lo[0], sl.box.hi[0], sl.box.lo[1], sl.box.hi[1]},
                         [=] BEATNIK_HOST_DEVICE(int p, int q) {
                           const double k1 = kx * wave_index(p, nx), k2 = ky * wave_index(q, ny);
                           const double kk = std::sqrt(k1 * k1 + k2 * k2);
                           const long at_pq = at(p, q);
                           cplx& c = s[at_pq];
                           if (kk == 0.0) {
                             c = cplx{0.0, 0.0};
                             return;
                           }
                           const double f = norm / kk;
                           const cplx z{k1 * c.re + k2 * s2[at_pq].re, k1 * c.im + k2 * s2[at_pq].im};
                           c = cplx{f * z.im, -f * z.re};
                         });
    } else if (fft_->inverse_from_half_2d()) {
      // Re IFFT[X] is the inverse of X's Hermitian part Y(k) = (X(k) + conj X(−k))/2, whose
      // complex-to-real inverse needs only the half q < ny/2 + 1: written here, not X.
      const FullMultiplier m{kx, ky, norm, nx, ny};
      cplx* y = fft_->half_2d();
      const int nh = ny / 2 + 1;
      exec::parallel_for(space_, exec::Range2{0, nx, 0, nh}, [=] BEATNIK_HOST_DEVICE(int p, int q) {
        const int pm = p == 0 ? 0 : nx - p, qm = q == 0 ? 0 : ny - q;
        const cplx a = m(p, q, s[at(p, q)]), b = m(pm, qm, s[at(pm, qm)]);
        y[long(p) * nh + q] = cplx{0.5 * (a.re + b.re), 0.5 * (a.im - b.im)};
      });
    } else {
      const FullMultiplier m{kx, ky, norm, nx, ny};
      exec::parallel_for(space_, exec::Range2{sl.box.lo[0], sl.box.hi[0], sl.box.lo[1], sl.box.hi[1]},
                         [=] BEATNIK_HOST_DEVICE(int p, int q) {
                           cplx& c = s[at(p, q)];
                           c = m(p, q, c);
                         });
    }
    }
  }
  auto unpack = [=] BEATNIK_HOST_DEVICE(int i, int j, double v) { r(0, i - lo0, j - lo1) = v; };
  if (fft_->inverse_from_half_2d()) fft_->inverse_real_from_half(unpack);
  else fft_->inverse_real(unpack);
}

}  // namespace beatnik::model
