#include "beatnik/mesh/spatial_decomposition.hpp"

#include <algorithm>
#include <cmath>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/exec/parallel_for.hpp"

namespace beatnik::mesh {
namespace {

BEATNIK_HOST_DEVICE inline void count_one(int* p) {
#if defined(__CUDA_ARCH__)
  atomicAdd(p, 1);
#else
  __atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
#endif
}

// Bin of v among `bins` equal bins over [lo, hi] (the last bin includes hi).
BEATNIK_HOST_DEVICE inline int bin_of(double v, double lo, double hi, int bins) {
  const double f = hi > lo ? (v - lo) / (hi - lo) : 0.0;
  const int b = static_cast<int>(f * bins);
  return b < 0 ? 0 : (b >= bins ? bins - 1 : b);
}

// Cuts of `parts` parts with about equal counts from a histogram of `bins` bins over [lo, hi]:
// cut k sits on the first bin edge where the running count reaches k/parts of the total.
void quantile_cuts(const long* hist, int bins, double lo, double hi, int parts, double* cut) {
  long total = 0;
  for (int b = 0; b < bins; ++b) total += hist[b];
  long run = 0;
  int e = 0;
  for (int k = 1; k < parts; ++k) {
    const double want = double(total) * k / parts;
    while (e < bins && double(run) < want) run += hist[e++];
    cut[k] = lo + (hi - lo) * e / bins;
  }
}

}  // namespace

const char* to_string(SpatialPartition p) { return p == SpatialPartition::Uniform ? "uniform" : "balanced"; }

bool parse_spatial_partition(const std::string& name, SpatialPartition& out) {
  if (name == "uniform") out = SpatialPartition::Uniform;
  else if (name == "balanced") out = SpatialPartition::Balanced;
  else return false;
  return true;
}

SpatialDecomposition::SpatialDecomposition(MPI_Comm grid_comm, std::array<int, 2> dims,
                                           std::array<double, 2> box_lo, std::array<double, 2> box_hi,
                                           SpatialPartition partition, exec::Space space)
    : comm_(grid_comm),
      px_(dims[0]),
      py_(dims[1]),
      box_lo_(box_lo),
      box_hi_(box_hi),
      partition_(partition),
      space_(space),
      extent_(space),
      xcut_(px_ + 1),
      ycut_(size_t(px_) * (py_ + 1)),
      rank_of_(size_t(px_) * py_) {
  for (int a = 0; a < px_; ++a)
    for (int b = 0; b < py_; ++b) {
      int c[2] = {a, b};
      if (comm_ == MPI_COMM_NULL) rank_of_[size_t(a) * py_ + b] = a * py_ + b;
      else comm::check_mpi(MPI_Cart_rank(comm_, c, &rank_of_[size_t(a) * py_ + b]), "MPI_Cart_rank");
    }
  dev_cuts_ = exec::Buffer<double>(space, xcut_.size() + ycut_.size());
  dev_rank_of_ = exec::Buffer<int>(space, rank_of_.size());
  exec::copy(dev_rank_of_.data(), space, rank_of_.data(), exec::Space::Host, rank_of_.size());
  // Uniform cuts of the box until the first update.
  for (int a = 0; a <= px_; ++a) xcut_[a] = box_lo[0] + (box_hi[0] - box_lo[0]) * a / px_;
  for (int a = 0; a < px_; ++a)
    for (int b = 0; b <= py_; ++b) ycut_[size_t(a) * (py_ + 1) + b] = box_lo[1] + (box_hi[1] - box_lo[1]) * b / py_;
  publish();
}

SpatialDecomposition::SpatialDecomposition(std::array<int, 2> dims, std::array<double, 2> box_lo,
                                           std::array<double, 2> box_hi, SpatialPartition partition)
    : SpatialDecomposition(MPI_COMM_NULL, dims, box_lo, box_hi, partition, exec::Space::Host) {}

void SpatialDecomposition::reduce(void* buf, int count, MPI_Datatype type, MPI_Op op, const char* what) const {
  if (comm_ != MPI_COMM_NULL) comm::check_mpi(MPI_Allreduce(MPI_IN_PLACE, buf, count, type, op, comm_), what);
}

void SpatialDecomposition::publish() {
  exec::copy(dev_cuts_.data(), space_, xcut_.data(), exec::Space::Host, xcut_.size());
  exec::copy(dev_cuts_.data() + xcut_.size(), space_, ycut_.data(), exec::Space::Host, ycut_.size());
}

SpatialView SpatialDecomposition::view() const {
  return SpatialView{px_, py_, dev_cuts_.data(), dev_cuts_.data() + xcut_.size(), dev_rank_of_.data()};
}

SpatialView SpatialDecomposition::host_view() const {
  return SpatialView{px_, py_, xcut_.data(), ycut_.data(), rank_of_.data()};
}

std::array<double, 4> SpatialDecomposition::cell_of(int rank) const {
  int c[2] = {rank / py_, rank % py_};
  if (comm_ != MPI_COMM_NULL) comm::check_mpi(MPI_Cart_coords(comm_, rank, 2, c), "MPI_Cart_coords");
  const double* yc = ycut_.data() + size_t(c[0]) * (py_ + 1);
  return {xcut_[c[0]], xcut_[c[0] + 1], yc[c[1]], yc[c[1] + 1]};
}

bool SpatialDecomposition::update(const double* x, const double* y, long n) {
  // Global extent of the particles and the box: the outer cuts.
  double lo[3], hi[3];
  extent_.compute(x, y, y, n, lo, hi);  // NaN positions are skipped (and reported by the health check)
  double ext[4] = {hi[0], -lo[0], hi[1], -lo[1]};  // max x, −min x, max y, −min y
  reduce(ext, 4, MPI_DOUBLE, MPI_MAX, "MPI_Allreduce (extent)");
  const double x0 = std::min(box_lo_[0], -ext[1]), x1 = std::max(box_hi_[0], ext[0]);
  const double y0 = std::min(box_lo_[1], -ext[3]), y1 = std::max(box_hi_[1], ext[2]);
  // A broken surface (NaN or infinite positions; the run's health check reports it after the
  // step) keeps the last cuts. Every rank sees the same reduced extent, so all agree.
  for (double v : ext)
    if (std::isnan(v)) return false;
  if (!std::isfinite(x0) || !std::isfinite(x1) || !std::isfinite(y0) || !std::isfinite(y1)) return false;
  xcut_[0] = x0;
  xcut_[px_] = x1;
  for (int a = 0; a < px_; ++a) {
    ycut_[size_t(a) * (py_ + 1)] = y0;
    ycut_[size_t(a) * (py_ + 1) + py_] = y1;
  }
  if (partition_ == SpatialPartition::Balanced) {
    balance(x, y, n);
  } else {
    for (int a = 1; a < px_; ++a) xcut_[a] = box_lo_[0] + (box_hi_[0] - box_lo_[0]) * a / px_;
    for (int a = 0; a < px_; ++a)
      for (int b = 1; b < py_; ++b) ycut_[size_t(a) * (py_ + 1) + b] = box_lo_[1] + (box_hi_[1] - box_lo_[1]) * b / py_;
  }
  publish();
  return true;
}

void SpatialDecomposition::balance(const double* x, const double* y, long n) {
  // Bins: 1024 per part, bounded so that one all-reduce stays below 2 MiB.
  const int hx = std::min(1024 * px_, 1 << 18);
  const int hy = std::max(64, std::min(1024 * py_, (1 << 18) / px_));
  const size_t need = std::max<size_t>(hx, size_t(px_) * hy);
  if (bins_.size() < need) bins_ = exec::Buffer<int>(space_, need);
  hist_.resize(need);
  std::vector<int> host(need);
  auto reduce_hist = [&](size_t count) {
    exec::copy(host.data(), exec::Space::Host, bins_.data(), space_, count);
    for (size_t k = 0; k < count; ++k) hist_[k] = host[k];
    reduce(hist_.data(), static_cast<int>(count), MPI_LONG, MPI_SUM, "MPI_Allreduce (histogram)");
  };

  // Column cuts: quantiles of x.
  int* bins = bins_.data();
  const double x0 = xcut_[0], x1 = xcut_[px_];
  exec::fill_zero(space_, bins, size_t(hx) * sizeof(int));
  exec::parallel_for(space_, n, [=] BEATNIK_HOST_DEVICE(long k) { count_one(bins + bin_of(x[k], x0, x1, hx)); });
  reduce_hist(hx);
  quantile_cuts(hist_.data(), hx, x0, x1, px_, xcut_.data());
  publish();

  // Row cuts: quantiles of y within each column (histograms of all columns in one reduction).
  const SpatialView v = view();
  const double y0 = ycut_[0], y1 = ycut_[py_];
  exec::fill_zero(space_, bins, size_t(px_) * hy * sizeof(int));
  exec::parallel_for(space_, n, [=] BEATNIK_HOST_DEVICE(long k) {
    count_one(bins + size_t(v.column(x[k])) * hy + bin_of(y[k], y0, y1, hy));
  });
  reduce_hist(size_t(px_) * hy);
  for (int a = 0; a < px_; ++a)
    quantile_cuts(hist_.data() + size_t(a) * hy, hy, y0, y1, py_, ycut_.data() + size_t(a) * (py_ + 1));
}

}  // namespace beatnik::mesh
