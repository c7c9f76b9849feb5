#pragma once
// Target-side interpolation for the tree solver's cluster–cluster terms (dual traversal,
// docs/tree.md "Cluster–cluster terms"): a target cluster B gets tensor Chebyshev points on its
// box (the proxies' grid rule, grid_degrees); the far field of every cluster taken by all of B's
// pairs is summed once at those points, and the downward pass interpolates the point velocities
// to B's targets by barycentric Lagrange interpolation (the BLDTT idea, written from the method).
#include "beatnik/search/cluster_tree.hpp"

namespace beatnik::model::tree {

// The m = Π(dg+1) points of B's grid of degrees dg, in the proxies' order (z fastest:
// index (a·n1 + b)·n2 + e), into x, y, z (m each).
void target_points(const search::Cluster& B, const int* dg, double* x, double* y, double* z);

// (ux, uy, uz)[t] += Σ_abc L_a(x_t) L_b(y_t) L_c(z_t)·U_abc for the n targets: U = [Ux|Uy|Uz]
// (m each) the velocities at B's grid points. One side at a time (z, then y, then x), so a
// target costs ≈ 3m multiply-adds; four targets at a time in the SIMD lanes (the same bits as one
// at a time).
void interpolate_down(const search::Cluster& B, const int* dg, const double* U, int m, const double* x,
                      const double* y, const double* z, long n, double* ux, double* uy, double* uz);

}  // namespace beatnik::model::tree
