#include "fft_bench_kernels.hpp"

namespace beatnik::bench {

void forward_from_block(fft::DistributedFFT& f, const cplx* in, const Box2& mine) {
  const int lo0 = mine.lo[0], lo1 = mine.lo[1], nj = mine.extent(1);
  f.forward([=] BEATNIK_HOST_DEVICE(int i, int j) { return in[long(i - lo0) * nj + (j - lo1)]; });
}

void inverse_to_block(fft::DistributedFFT& f, cplx* out, const Box2& mine) {
  const int lo0 = mine.lo[0], lo1 = mine.lo[1], nj = mine.extent(1);
  f.inverse([=] BEATNIK_HOST_DEVICE(int i, int j, cplx v) { out[long(i - lo0) * nj + (j - lo1)] = v; });
}

}  // namespace beatnik::bench
