#include "beatnik/comm/cart_grid.hpp"

#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::comm {

CartGrid::CartGrid(MPI_Comm parent, std::array<int, 2> dims, std::array<bool, 2> periodic)
    : dims_(dims), periodic_(periodic) {
  int d[2] = {dims[0], dims[1]};
  int p[2] = {periodic[0] ? 1 : 0, periodic[1] ? 1 : 0};
  check_mpi(MPI_Cart_create(parent, 2, d, p, 0, &comm_), "MPI_Cart_create");
  install_mpi_error_handler(comm_);  // whatever the parent's handler
  MPI_Comm_rank(comm_, &rank_);
  coords_ = coords_of(rank_);
  for (int k = 0; k < 8; ++k) {
    const auto off = direction_offset(k);
    int c[2];
    bool exists = true;
    for (int a = 0; a < 2; ++a) {
      c[a] = coords_[a] + off[a];
      if (c[a] < 0 || c[a] >= dims_[a]) {
        if (periodic_[a])
          c[a] = (c[a] + dims_[a]) % dims_[a];
        else
          exists = false;
      }
    }
    neighbors_[k] = MPI_PROC_NULL;
    if (exists) check_mpi(MPI_Cart_rank(comm_, c, &neighbors_[k]), "MPI_Cart_rank");
  }
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
