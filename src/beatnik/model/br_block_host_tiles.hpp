#pragma once
// Internal to the host exact BR block (br_block_host*.cpp): one target against one tile of
// sources with every periodic image, in each SIMD flavour. Not a public interface.
#include "beatnik/model/br_kernel.hpp"

namespace beatnik::model::detail {

// A source block (structure of arrays) and the image rules of one br_block_host call.
struct BRTileSources {
  const double *x, *y, *z, *qx, *qy, *qz;
  int cx, cy;                 // images per dimension
  const double *ox, *oy;      // image offsets relative to the centre (cx and cy entries)
  double L0, h0, L1, h1;      // periods and centring half periods (0: no centring)
  double eps;
  bool in_range = false;      // every pair's d within the AVX2 estimate's range (pairs_in_float_range)
};

// Adds to u[0..2] the velocity at target (tx, ty, tz) from sources [k0, k1), every image.
using BRTileFn = void (*)(const BRTileSources& s, double tx, double ty, double tz, long k0, long k1, double* u);

void br_tile_scalar(const BRTileSources& s, double tx, double ty, double tz, long k0, long k1, double* u);
void br_tile_portable(const BRTileSources& s, double tx, double ty, double tz, long k0, long k1, double* u);
void br_tile_avx512(const BRTileSources& s, double tx, double ty, double tz, long k0, long k1, double* u);
// The AVX2 + FMA tile (br_block_host_avx2.cpp); pairs outside its estimate's range go to the
// portable tile.
void br_tile_avx2(const BRTileSources& s, double tx, double ty, double tz, long k0, long k1, double* u);

}  // namespace beatnik::model::detail
