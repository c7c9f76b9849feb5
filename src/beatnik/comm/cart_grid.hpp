#pragma once
// The 2D Cartesian process grid of the surface mesh and each rank's 8 neighbours.
// Grid ranks are row-major cells (rank g sits at (g / Py, g % Py)); which parent rank takes
// which cell is the placement (comm/placement/placement.hpp). Everything on the mesh talks
// over comm() and numbers ranks in it.
#include <mpi.h>

#include <array>
#include <vector>

namespace beatnik::comm {

// Direction index of a neighbour offset (di, dj) in {-1,0,1}^2, centre excluded: 0..7.
constexpr int direction_index(int di, int dj) {
  const int k = (di + 1) * 3 + (dj + 1);
  return k < 4 ? k : k - 1;
}
constexpr std::array<int, 2> direction_offset(int d) {
  const int k = d < 4 ? d : d + 1;
  return {k / 3 - 1, k % 3 - 1};
}

// Grid ranks (row-major cells) of the 8 neighbours of the cell at `coords`, by direction index;
// MPI_PROC_NULL beyond a non-periodic edge. Pure: CartGrid and the dry run (app/dry_run.hpp) both
// take their neighbours from here.
std::array<int, 8> grid_neighbors(std::array<int, 2> dims, std::array<bool, 2> periodic, std::array<int, 2> coords);

// Which parent rank takes which cell.
struct GridOrder {
  bool mpi_reorder = false;        // MPI_Cart_create(reorder = 1): MPI's choice
  std::vector<int> cell_of_rank;   // else: the cell (i * Py + j) of every parent rank; empty: rank r, cell r
};

class CartGrid {
 public:
  // Builds a Cartesian communicator over `parent` with the cells `order` gives. Collective.
  CartGrid(MPI_Comm parent, std::array<int, 2> dims, std::array<bool, 2> periodic, const GridOrder& order = {});
  ~CartGrid();
  CartGrid(const CartGrid&) = delete;
  CartGrid& operator=(const CartGrid&) = delete;

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return dims_[0] * dims_[1]; }
  std::array<int, 2> dims() const { return dims_; }
  std::array<int, 2> coords() const { return coords_; }
  std::array<int, 2> coords_of(int rank) const;
  std::array<bool, 2> periodic() const { return periodic_; }
  // Rank of the neighbour in direction d (direction_index), or MPI_PROC_NULL.
  int neighbor(int d) const { return neighbors_[d]; }
  const std::array<int, 8>& neighbors() const { return neighbors_; }
  // The placement that resulted: grid rank (= cell) of every parent rank, and back.
  const std::vector<int>& grid_rank_of_parent() const { return grid_of_parent_; }
  const std::vector<int>& parent_rank_of_grid() const { return parent_of_grid_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  std::array<int, 2> dims_{1, 1};
  std::array<int, 2> coords_{0, 0};
  std::array<bool, 2> periodic_{true, true};
  std::array<int, 8> neighbors_{};
  std::vector<int> grid_of_parent_, parent_of_grid_;
};

}  // namespace beatnik::comm
