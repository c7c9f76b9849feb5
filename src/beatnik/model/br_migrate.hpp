#pragma once
// The BR solvers' particle migration (model/cutoff_br_solver.cpp and model/tree_br_solver.cpp:
// to_spatial, the tree's build, to_surface), written once for host and device (exec::parallel_for; this translation unit is
// compiled by nvcc in the CUDA build): the owners' keys, the records of 6 gathered by
// destination, the received records into the columns the build reads, the velocities from tree
// order into records of 3 by received particle, and the returned records into the field by the
// destination sort's order. Pure data movement (and the near + far addition the host did), so
// -x cuda gives the host's bits. Every pointer in `s`; queued on the device.
#include "beatnik/exec/space.hpp"
#include "beatnik/mesh/field.hpp"
#include "beatnik/mesh/spatial_decomposition.hpp"

namespace beatnik::model {

// key[k]: the spatial owner of particle k at (p[k], p[n + k]) ([x|y|...], n each).
void br_owner_keys(exec::Space s, const mesh::SpatialView& v, const double* p, long n, int* key);
// Records of `width` in sorted order: send[q·width + c] = p[c·n + order[q]].
void br_pack_records(exec::Space s, const long* order, const double* p, long n, int width, double* send);
// Columns from records: cols[c·n + k] = rec[k·width + c].
void br_unpack_records(exec::Space s, const double* rec, long n, int width, double* cols);
// The velocity of tree position q (near + far, [ux|uy|uz], n each) into the record of the
// particle it holds: back[order[q]·3 + c] = near[c·n + q] + far[c·n + q].
void br_velocity_records(exec::Space s, const double* near, const double* far, const long* order, long n,
                           double* back);
void br_velocity_records(exec::Space s, const double* near, const double* far, const int* order, long n,
                           double* back);
// The returned records into the field: node by[q] (row-major, nj a row) takes in[q·3 + c], q < ns.
void br_records_to_field(exec::Space s, const long* by, const double* in, long ns, int nj, const mesh::Field& out);
// One rank, no migration: node order[q] takes near[c·n + q] + far[c·n + q] (tree order straight
// into the field).
void br_order_to_field(exec::Space s, const double* near, const double* far, const int* order, long n, int nj,
                         const mesh::Field& out);

}  // namespace beatnik::model
