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

}  // namespace beatnik::model::tree::detail
