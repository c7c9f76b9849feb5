#include "beatnik/comm/cart_grid.hpp"

#include <string>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/comm/placement/placement.hpp"

namespace beatnik::comm {

CartGrid::CartGrid(MPI_Comm parent, std::array<int, 2> dims, std::array<bool, 2> periodic, const GridOrder& order)
    : dims_(dims), periodic_(periodic) {
  int d[2] = {dims[0], dims[1]};
  int p[2] = {periodic[0] ? 1 : 0, periodic[1] ? 1 : 0};
  int parent_rank = 0, parent_size = 0;
  MPI_Comm_rank(parent, &parent_rank);
  MPI_Comm_size(parent, &parent_size);
  if (order.mpi_reorder) {
    check_mpi(MPI_Cart_create(parent, 2, d, p, 1, &comm_), "MPI_Cart_create (reorder)");
  } else if (order.cell_of_rank.empty()) {
    check_mpi(MPI_Cart_create(parent, 2, d, p, 0, &comm_), "MPI_Cart_create");
  } else {
    if (static_cast<int>(order.cell_of_rank.size()) != parent_size || !placement::is_permutation(order.cell_of_rank))
      throw Error("process grid: the placement is not a permutation of the " + std::to_string(parent_size) + " cells");
    // Split keyed by cell puts rank r at position cell_of_rank[r]; Cart_create without reorder
    // keeps that order, and Cartesian ranks are row-major cells.
    MPI_Comm ordered;
    check_mpi(MPI_Comm_split(parent, 0, order.cell_of_rank[parent_rank], &ordered), "MPI_Comm_split (placement)");
    check_mpi(MPI_Cart_create(ordered, 2, d, p, 0, &comm_), "MPI_Cart_create");
    MPI_Comm_free(&ordered);
  }
  install_mpi_error_handler(comm_);  // whatever the parent's handler
  MPI_Comm_rank(comm_, &rank_);
  parent_of_grid_.resize(size());
  check_mpi(MPI_Allgather(&parent_rank, 1, MPI_INT, parent_of_grid_.data(), 1, MPI_INT, comm_),
            "MPI_Allgather (placement)");
  grid_of_parent_.assign(size(), 0);
  for (int g = 0; g < size(); ++g) grid_of_parent_[parent_of_grid_[g]] = g;
  coords_ = coords_of(rank_);
  neighbors_ = grid_neighbors(dims_, periodic_, coords_);
}

std::array<int, 8> grid_neighbors(std::array<int, 2> dims, std::array<bool, 2> periodic, std::array<int, 2> coords) {
  std::array<int, 8> n{};
  for (int k = 0; k < 8; ++k) {
    const auto off = direction_offset(k);
    int c[2];
    bool exists = true;
    for (int a = 0; a < 2; ++a) {
      c[a] = coords[a] + off[a];
      if (c[a] < 0 || c[a] >= dims[a]) {
        if (periodic[a])
          c[a] = (c[a] + dims[a]) % dims[a];
        else
          exists = false;
      }
    }
    // Cartesian ranks are row-major cells (MPI_Cart_rank's numbering).
    n[k] = exists ? c[0] * dims[1] + c[1] : MPI_PROC_NULL;
  }
  return n;
}

CartGrid::~CartGrid() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::array<int, 2> CartGrid::coords_of(int rank) const {
  int c[2];
  check_mpi(MPI_Cart_coords(comm_, rank, 2, c), "MPI_Cart_coords");
  return {c[0], c[1]};
}

}  // namespace beatnik::comm
