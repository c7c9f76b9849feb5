#pragma once
// Internal to the edge sums (tree_edge.cpp): the pair loops of one target and one edge term, in
// each SIMD flavour. Not a public interface. Host only.

namespace beatnik::model::tree::detail {

// Adds to v[0..2] the velocity at (x, y, z) of the points k ∈ [k0, k1) at (px, py, pz)[k] moved
// by (ox, oy), with strengths q_c[k] = a[c·stride + k] − b[c·stride + k] (a proxy set's strengths
// of a prefix difference) or a[c·stride + k] (b null: the sources themselves).
using EdgePairsFn = void (*)(const double* px, const double* py, const double* pz, const double* a,
                             const double* b, long stride, long k0, long k1, double ox, double oy, double x,
                             double y, double z, double eps, double* v);

// br_pair in an `omp simd` loop (compiled for AVX-512, AVX2 and baseline).
void edge_pairs_portable(const double* px, const double* py, const double* pz, const double* a, const double* b,
                         long stride, long k0, long k1, double ox, double oy, double x, double y, double z,
                         double eps, double* v);
// AVX2 + FMA (tree_edge_avx2.cpp): the points in the lanes, d^{-3/2} as the AVX2 pair kernels
// (br_avx2_math.hpp); the pairs outside the estimate's float range take sqrt and a division.
void edge_pairs_avx2(const double* px, const double* py, const double* pz, const double* a, const double* b,
                     long stride, long k0, long k1, double ox, double oy, double x, double y, double z, double eps,
                     double* v);
// AVX-512F (tree_edge_avx512.cpp): 8 points per vector, d^{-3/2} as the AVX-512 targets kernel
// (rsqrt14 and two Newton steps, br_avx512_math.hpp); no range check needed.
void edge_pairs_avx512(const double* px, const double* py, const double* pz, const double* a, const double* b,
                       long stride, long k0, long k1, double ox, double oy, double x, double y, double z, double eps,
                       double* v);
// AVX-512F (tree_edge_avx512.cpp): the targets t ∈ [0, nt) each against the points [0, m) with
// strengths q (a shared-rows group's), the points in the lanes and up to 4 targets per pass over
// them (the points' vectors loaded once for them); sets (ux, uy, uz)[t] to each target's sum,
// formed as edge_pairs_avx512 forms it.
void edge_targets_avx512(const double* px, const double* py, const double* pz, const double* q, long stride, long m,
                         double ox, double oy, const double* tx, const double* ty, const double* tz, long nt,
                         double eps, double* ux, double* uy, double* uz);

}  // namespace beatnik::model::tree::detail
