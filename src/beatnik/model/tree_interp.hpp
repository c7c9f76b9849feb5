#pragma once
// Barycentric Lagrange interpolation at tensor Chebyshev points of the second kind on a
// cluster's box: the tree solver's proxy sets (docs/tree.md "Method"). A cluster C's sources
// become proxies at the grid points with strengths q̂_abc = Σ_s L_a(x_s) L_b(y_s) L_c(z_s)·q_s.
#include "beatnik/search/cluster_tree.hpp"

namespace beatnik::model::tree {

inline constexpr int kTreeMaxDegree = 24;

// Degrees per side of C's proxy grid for degree p valid to ratio theta (p on the longest side,
// fewer on a thin side, 0 on a flat one); returns the number of proxies Π(dg + 1).
int grid_degrees(const search::Cluster& C, int p, double theta, int* dg);
// The same with log_theta = grid_log_theta(theta) formed by the caller (loops over many clusters).
int grid_degrees(const search::Cluster& C, int p, double theta, double log_theta, int* dg);
// The log θ grid_degrees reads (only where 0 < θ < 1; 0 otherwise, unread).
double grid_log_theta(double theta);

// The m = Π(dg+1) proxy sources of C's grid at px ([x|y|z|qx|qy|qz], m each) from the point
// sources [k0, k1) of src (SoA, `stride` entries each).
void interpolate(const search::Cluster& C, const int* dg, const double* src, long stride, long k0, long k1,
                 double* px, int m);

// The same set from C's proxy grid of degrees P (px, mp proxies), for a grid of degrees D ≤ P
// per side (exact up to round-off: degree-P interpolation reproduces a degree-D basis).
void coarsen(const search::Cluster& C, const int* P, const int* D, const double* px, int mp, double* out, int md);

// Prefix proxy strengths (the image window's edge, tree_edge.hpp): for the n sources of src
// (SoA [x|y|z|qx|qy|qz], n each, in the caller's order), row j (j = 0 .. ⌊n/block⌋) holds the
// strengths [q̂x|q̂y|q̂z] (3m doubles) of the first j·block sources, summed in order (block by
// block as a product of small matrices; round-off apart, the same as interpolate on them).
void interpolate_prefix(const search::Cluster& C, const int* dg, const double* src, long n, long block,
                        double* prefix);

}  // namespace beatnik::model::tree
