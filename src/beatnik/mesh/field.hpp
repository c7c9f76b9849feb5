#pragma once
// A multi-component field on this rank's part of the surface mesh (owned + ghost layers),
// stored as one plane per component in host or device memory.
#include "beatnik/base/ghosted_layout.hpp"
#include "beatnik/comm/halo_exchange.hpp"
#include "beatnik/exec/memory.hpp"

namespace beatnik::mesh {

// What kernels capture: trivially copyable pointer + layout.
struct FieldView {
  double* p = nullptr;
  GhostedLayout L;
  BEATNIK_HOST_DEVICE double& operator()(int c, int i, int j) const {
    return p[c * L.plane() + L.index(i, j)];
  }
  BEATNIK_HOST_DEVICE double* comp(int c) const { return p + c * L.plane(); }
};

class Field {
 public:
  Field() = default;
  Field(exec::Space s, GhostedLayout L, int ncomp)
      : data_(s, static_cast<size_t>(L.plane()) * ncomp), L_(L), ncomp_(ncomp) {
    data_.zero();
  }
  int ncomp() const { return ncomp_; }
  const GhostedLayout& layout() const { return L_; }
  exec::Space space() const { return data_.space(); }
  double* comp(int c) const { return data_.data() + c * L_.plane(); }
  FieldView view() const { return FieldView{data_.data(), L_}; }
  comm::ComponentSet components() const {
    comm::ComponentSet s;
    for (int c = 0; c < ncomp_; ++c) s.add(comp(c));
    return s;
  }
  size_t bytes() const { return data_.size() * sizeof(double); }

 private:
  exec::Buffer<double> data_;
  GhostedLayout L_;
  int ncomp_ = 0;
};

}  // namespace beatnik::mesh
