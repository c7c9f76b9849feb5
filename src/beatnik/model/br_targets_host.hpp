#pragma once
// The tree solver's host pair kernel (near and far sums, docs/tree.md): a batch of targets
// against a list of source ranges, each with one image offset. The targets are the SIMD lanes
// (AVX-512: 8 per vector, two vectors per source broadcast; AVX2: 4 per vector, four vectors)
// and each range's sources are streamed once per 16 targets while they sit in L1, so there is no
// horizontal reduction and every target sums its pairs in the order of the list — the same order
// in every kernel, so a run is bitwise reproducible. The pair arithmetic is the exact solver's
// (br_pair; AVX-512: its rsqrt14 + two Newton steps, br_avx512_math.hpp; AVX2: its float rsqrt
// estimate + corrections in double, br_avx2_math.hpp). Host only (not compiled by nvcc).
#include "beatnik/model/br_host_kernel.hpp"

namespace beatnik::model {

// Sources [k0, k1) of the SoA block at p ([x|y|z|qx|qy|qz], `stride` entries each), moved by
// (ox, oy) = (mx·L0, my·L1). With `window`, a pair (t, s) counts only when the nearest image
// a₀(t − s) (image_centre, per periodic dimension) satisfies |m − a₀| ≤ K: the image window's
// edge (tree_br_solver.cpp).
struct BRSourceRange {
  const double* p = nullptr;
  long stride = 0, k0 = 0, k1 = 0;
  int mx = 0, my = 0;
  bool window = false;
};

// Adds to (ux, uy, uz)[t], t < nt, the velocity at targets (tx, ty, tz)[t] from every range in
// turn, with images `img` (periods, K, centring: the window test and the offsets) and ε = eps.
// Returns the pairs summed (a window range counts only the pairs it takes).
long br_targets_host(const double* tx, const double* ty, const double* tz, long nt, const BRSourceRange* ranges,
                     int nranges, const BRImages& img, double eps, double* ux, double* uy, double* uz);
// The same with the given kernel (throws NotAvailable if this CPU lacks it).
long br_targets_host(const double* tx, const double* ty, const double* tz, long nt, const BRSourceRange* ranges,
                     int nranges, const BRImages& img, double eps, double* ux, double* uy, double* uz,
                     BRHostKernel kernel);

}  // namespace beatnik::model
