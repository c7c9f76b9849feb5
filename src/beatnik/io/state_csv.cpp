#include "beatnik/io/state_csv.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <cstdio>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/io/checked_file.hpp"
#include "beatnik/model/state.hpp"

namespace beatnik::io {

std::vector<double> gather_state(const mesh::SurfaceMesh& m, const mesh::Field& state) {
  MPI_Comm comm = m.grid().comm();
  const GhostedLayout L = state.layout();
  const int nc = model::kStateComps;
  // Owned nodes of every component, copied to the host (node-major, j fastest).
  std::vector<double> plane(static_cast<size_t>(L.plane()));
  std::vector<double> mine(static_cast<size_t>(L.owned_count()) * nc);
  for (int c = 0; c < nc; ++c) {
    exec::copy(plane.data(), exec::Space::Host, state.comp(c), state.space(), plane.size());
    for (int i = 0; i < L.ni; ++i)
      for (int j = 0; j < L.nj; ++j) mine[(static_cast<size_t>(i) * L.nj + j) * nc + c] = plane[L.index(i, j)];
  }
  const int size = m.grid().size(), rank = m.grid().rank();
  std::vector<int> counts(size), displs(size);
  const auto boxes = m.decomposition().all_owned();
  long total = 0;
  for (int r = 0; r < size; ++r) {
    displs[r] = static_cast<int>(total);
    counts[r] = static_cast<int>(boxes[r].count() * nc);
    total += boxes[r].count() * nc;
  }
  std::vector<double> all(rank == 0 ? total : 0);
  comm::check_mpi(MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), counts.data(),
                              displs.data(), MPI_DOUBLE, 0, comm),
                  "MPI_Gatherv (state)");
  if (rank != 0) return {};
  const int ny = m.geometry().nodes[1];
  std::vector<double> out(all.size());
  for (int r = 0; r < size; ++r) {
    const Box2& b = boxes[r];
    const double* src = all.data() + displs[r];
    for (int i = b.lo[0]; i < b.hi[0]; ++i)
      for (int j = b.lo[1]; j < b.hi[1]; ++j, src += nc)
        for (int c = 0; c < nc; ++c) out[(static_cast<size_t>(i) * ny + j) * nc + c] = src[c];
  }
  return out;
}

void write_state_csv(const std::string& path, const mesh::SurfaceMesh& m, const mesh::Field& state) {
  const std::vector<double> all = gather_state(m, state);
  int ok = 1;
  std::string why;
  if (m.grid().rank() == 0) {
    const int nx = m.geometry().nodes[0], ny = m.geometry().nodes[1];
    fmt::memory_buffer buf;
    fmt::format_to(std::back_inserter(buf), "i,j,x,y,z,w1,w2\n");
    for (int i = 0; i < nx; ++i)
      for (int j = 0; j < ny; ++j) {
        const double* v = &all[(static_cast<size_t>(i) * ny + j) * model::kStateComps];
        fmt::format_to(std::back_inserter(buf), "{},{},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g}\n", i, j, v[0], v[1],
                       v[2], v[3], v[4]);
      }
    try {
      write_file_checked(path, std::string_view(buf.data(), buf.size()));
    } catch (const WriteError& e) {
      ok = 0;
      why = e.what();
    }
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, m.grid().comm());
  if (!ok) throw WriteError(m.grid().rank() == 0 ? why : "state file " + path + " could not be written");
}

}  // namespace beatnik::io
