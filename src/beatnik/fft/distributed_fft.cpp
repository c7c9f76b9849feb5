#include "beatnik/fft/distributed_fft.hpp"

#include <algorithm>

#include "beatnik/comm/message_trace.hpp"
#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/mesh/decomposition.hpp"

namespace beatnik::fft {
namespace {

// Lines along x (all i) for a range of j, or along y (all j) for a range of i.
Box2 x_lines(int nx, int j0, int j1) { return Box2{{0, j0}, {nx, j1}}; }
Box2 y_lines(int ny, int i0, int i1) { return Box2{{i0, 0}, {i1, ny}}; }

}  // namespace

DistributedFFT::DistributedFFT(const comm::Context& ctx, MPI_Comm grid_comm,
                               std::array<int, 2> global, std::array<int, 2> procs,
                               const std::vector<Box2>& blocks, exec::Space space,
                               const FftOptions& options, comm::CommStats* stats, Timers* timers,
                               comm::Transport* transport)
    : global_(global),
      space_(space),
      options_(options),
      timers_(timers),
      ctx_(ctx),
      stats_(stats),
      transport_(transport) {
  int rank = 0, size = 1;
  MPI_Comm_rank(grid_comm, &rank);
  MPI_Comm_size(grid_comm, &size);
  const int nx = global[0], ny = global[1];
  const Box2 mine = blocks[rank];

  // Work-array layouts: with reorder each line is contiguous; without, the block's j-fastest
  // order is kept and the x transforms are strided.
  auto xl_layout = [&](const Box2& b) { return options.reorder ? i_fastest(b) : j_fastest(b); };
  auto x_shape = [&](const Box2& b) {
    const int lines = b.extent(1);
    return options.reorder ? BatchShape{nx, lines, 1, nx} : BatchShape{nx, lines, lines, 1};
  };
  auto y_shape = [&](const Box2& b) { return BatchShape{ny, b.extent(0), 1, ny}; };

  if (options.intermediate == Intermediate::Slab) {
    const auto js = mesh::split_offsets(ny, size), is = mesh::split_offsets(nx, size);
    std::vector<Box2> xs, ys;
    for (int r = 0; r < size; ++r) {
      xs.push_back(x_lines(nx, js[r], js[r + 1]));
      ys.push_back(y_lines(ny, is[r], is[r + 1]));
    }
    add_reshape(grid_comm, blocks, xs, ArrayLayout2{}, xl_layout(xs[rank]));
    add_fft(x_shape(xs[rank]));
    add_reshape(grid_comm, xs, ys, xl_layout(xs[rank]), j_fastest(ys[rank]));
    add_fft(y_shape(ys[rank]));
    spectral_ = j_fastest(ys[rank]);
    if (options.spectrum_in_input_layout) {
      add_reshape(grid_comm, ys, blocks, j_fastest(ys[rank]), j_fastest(mine));
      spectral_ = j_fastest(mine);
    }
  } else {
    // Column group: the Px ranks sharing this rank's j-range; row group: the Py sharing i.
    const int a = rank / procs[1], b = rank % procs[1];
    MPI_Comm col, row;
    comm::check_mpi(MPI_Comm_split(grid_comm, b, a, &col), "MPI_Comm_split");
    comm::check_mpi(MPI_Comm_split(grid_comm, a, b, &row), "MPI_Comm_split");
    owned_comms_ = {col, row};
    std::vector<Box2> col_blocks, col_lines, row_blocks, row_lines;
    const auto jsplit = mesh::split_offsets(mine.extent(1), procs[0]);
    const auto isplit = mesh::split_offsets(mine.extent(0), procs[1]);
    for (int k = 0; k < procs[0]; ++k) {
      col_blocks.push_back(blocks[k * procs[1] + b]);
      col_lines.push_back(x_lines(nx, mine.lo[1] + jsplit[k], mine.lo[1] + jsplit[k + 1]));
    }
    for (int k = 0; k < procs[1]; ++k) {
      row_blocks.push_back(blocks[a * procs[1] + k]);
      row_lines.push_back(y_lines(ny, mine.lo[0] + isplit[k], mine.lo[0] + isplit[k + 1]));
    }
    const Box2 xl = col_lines[a], yl = row_lines[b];
    add_reshape(col, col_blocks, col_lines, ArrayLayout2{}, xl_layout(xl));
    add_fft(x_shape(xl));
    add_reshape(col, col_lines, col_blocks, xl_layout(xl), j_fastest(mine));
    add_reshape(row, row_blocks, row_lines, j_fastest(mine), j_fastest(yl));
    add_fft(y_shape(yl));
    spectral_ = j_fastest(yl);
    if (options.spectrum_in_input_layout) {
      add_reshape(row, row_lines, row_blocks, j_fastest(yl), j_fastest(mine));
      spectral_ = j_fastest(mine);
    }
  }

  // Buffers: the work array holds any layout this rank passes through; the message buffers
  // the largest reshape.
  long work = mine.count(), comm_elems = 0;
  for (const Step& s : steps_) work = std::max({work, s.to.box.count(), s.from.box.count()});
  for (const auto& r : reshapes_) comm_elems = std::max(comm_elems, r->buffer_elements());
  work_ = exec::Buffer<cplx>(space, std::max(work, 1L));
  send_ = exec::Buffer<cplx>(space, std::max(comm_elems, 1L));
  recv_ = exec::Buffer<cplx>(space, std::max(comm_elems, 1L));
  for (const BatchShape& sh : shapes_) ffts_.push_back(make_local_fft(space, sh, work_.data(), options.effort));
}

DistributedFFT::~DistributedFFT() {
  reshapes_.clear();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    for (MPI_Comm& c : owned_comms_) MPI_Comm_free(&c);
}

void DistributedFFT::add_reshape(MPI_Comm comm, const std::vector<Box2>& from,
                                 const std::vector<Box2>& to, const ArrayLayout2& from_layout,
                                 const ArrayLayout2& to_layout) {
  // A reshape that moves nothing between ranks and keeps the memory layout is a no-op: skip it
  // (e.g. pencil steps inside a process row or column of one rank). The first reshape is
  // always kept: it builds the complex input from the caller's data.
  const bool same_layout = from_layout.box == to_layout.box && from_layout.si == to_layout.si &&
                           from_layout.sj == to_layout.sj && from_layout.offset == to_layout.offset;
  if (!steps_.empty() && same_layout && from == to) return;
  Step s;
  s.reshape = static_cast<int>(reshapes_.size());
  s.from = from_layout;
  s.to = to_layout;
  int comm_size = 0;
  MPI_Comm_size(comm, &comm_size);
  s.local = comm_size == 1;
  reshapes_.push_back(std::make_unique<comm::Redistributor>(comm, from, to, space_, ctx_.locality(comm),
                                                            stats_, "fft", options_.algorithm, transport_));
  steps_.push_back(s);
}

void DistributedFFT::add_fft(const BatchShape& shape) {
  Step s;
  s.fft = static_cast<int>(shapes_.size());
  shapes_.push_back(shape);
  steps_.push_back(s);
}

namespace {
bool same_layout(const ArrayLayout2& a, const ArrayLayout2& b) {
  return a.box.lo == b.box.lo && a.box.hi == b.box.hi && a.si == b.si && a.sj == b.sj && a.offset == b.offset;
}
}  // namespace

void DistributedFFT::count_local(const Step& s) const {
  if (!stats_) return;
  stats_->add_call("fft");
  stats_->add_message("fft", 0, s.to.box.count() * long(sizeof(cplx)));
  if (comm::MessageTrace* tr = stats_->trace()) {  // a local reshape: to this rank itself, at once
    const double t = wall_seconds();
    tr->send("fft", this, MPI_COMM_SELF, 0, s.to.box.count() * long(sizeof(cplx)), t);
    tr->recv("fft", this, MPI_COMM_SELF, 0, s.to.box.count() * long(sizeof(cplx)), t);
    tr->complete("fft", this, t);
  }
}

void DistributedFFT::work_to_work(const Step& s, bool reverse) {
  if (s.local && same_layout(s.from, s.to)) {  // nothing moves and nothing is reordered
    count_local(s);
    return;
  }
  Timers::Scope t(timers_, "fft.reshape");
  cplx* w = work_.data();
  const StridedIndex src = indexer(reverse ? s.to : s.from);
  const StridedIndex dst = indexer(reverse ? s.from : s.to);
  // Packing reads the whole source before any unpacking writes, so one array serves both.
  reshapes_[s.reshape]->execute(
      send_.data(), recv_.data(), [=] BEATNIK_HOST_DEVICE(int i, int j) { return w[src(i, j)]; },
      [=] BEATNIK_HOST_DEVICE(int i, int j, cplx v) { w[dst(i, j)] = v; }, reverse);
}

size_t DistributedFFT::buffer_bytes() const {
  return (work_.size() + send_.size() + recv_.size()) * sizeof(cplx);
}

}  // namespace beatnik::fft
