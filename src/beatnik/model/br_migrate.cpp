#include "beatnik/model/br_migrate.hpp"

#include "beatnik/exec/parallel_for.hpp"

namespace beatnik::model {

void br_owner_keys(exec::Space s, const mesh::SpatialView& v, const double* p, long n, int* key) {
  const mesh::SpatialView w = v;
  exec::parallel_for(s, n, [=] BEATNIK_HOST_DEVICE(long k) { key[k] = w.owner(p[k], p[n + k]); });
}

void br_pack_records(exec::Space s, const long* order, const double* p, long n, int width, double* send) {
  exec::parallel_for(s, n, [=] BEATNIK_HOST_DEVICE(long q) {
    const long k = order[q];
    for (int c = 0; c < width; ++c) send[q * width + c] = p[c * n + k];
  });
}

void br_unpack_records(exec::Space s, const double* rec, long n, int width, double* cols) {
  exec::parallel_for(s, n, [=] BEATNIK_HOST_DEVICE(long k) {
    for (int c = 0; c < width; ++c) cols[c * n + k] = rec[k * width + c];
  });
}

namespace {
template <class I>
void velocity_records(exec::Space s, const double* near, const double* far, const I* order, long n, double* back) {
  exec::parallel_for(s, n, [=] BEATNIK_HOST_DEVICE(long q) {
    const long k = static_cast<long>(order[q]);
    for (int c = 0; c < 3; ++c) back[k * 3 + c] = near[c * n + q] + far[c * n + q];
  });
}
}  // namespace

void br_velocity_records(exec::Space s, const double* near, const double* far, const long* order, long n,
                           double* back) {
  velocity_records(s, near, far, order, n, back);
}

void br_velocity_records(exec::Space s, const double* near, const double* far, const int* order, long n,
                           double* back) {
  velocity_records(s, near, far, order, n, back);
}

void br_records_to_field(exec::Space s, const long* by, const double* in, long ns, int nj, const mesh::Field& out) {
  const mesh::FieldView o = out.view();
  exec::parallel_for(s, ns, [=] BEATNIK_HOST_DEVICE(long q) {
    const long k = by[q];
    const int i = static_cast<int>(k / nj), j = static_cast<int>(k % nj);
    for (int c = 0; c < 3; ++c) o(c, i, j) = in[q * 3 + c];
  });
}

void br_order_to_field(exec::Space s, const double* near, const double* far, const int* order, long n, int nj,
                         const mesh::Field& out) {
  const mesh::FieldView o = out.view();
  exec::parallel_for(s, n, [=] BEATNIK_HOST_DEVICE(long q) {
    const long k = order[q];
    const int i = static_cast<int>(k / nj), j = static_cast<int>(k % nj);
    for (int c = 0; c < 3; ++c) o(c, i, j) = near[c * n + q] + far[c * n + q];
  });
}

}  // namespace beatnik::model
