#include "beatnik/app/mpi_main.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include "beatnik/io/hdf5_file.hpp"

#include <cstdio>
#include <exception>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::app {

int mpi_main(int argc, char** argv, const char* program, const std::function<int(int, int)>& body) {
  beatnik::io::prefer_safe_mpi_io();  // before MPI_Init (io/hdf5_file.hpp)
  MPI_Init(&argc, &argv);
  comm::install_mpi_error_handler(MPI_COMM_WORLD);  // inherited by every communicator made later
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int code = 1;
  try {
    code = body(rank, size);
  } catch (const InputError& e) {
    if (rank == 0) fmt::print(stderr, "{}: error: {}\n", program, e.what());
    code = 2;
  } catch (const NotAvailable& e) {
    if (rank == 0) fmt::print(stderr, "{}: error: {}\n", program, e.what());
    code = 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: internal error on rank {}: {}\n", program, rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return code;
}

}  // namespace beatnik::app
