// GoogleTest main for MPI tests: every rank runs every test; only rank 0 prints. A failure on
// any rank makes that rank exit non-zero, and mpiexec reports it.
#include <gtest/gtest.h>
#include <mpi.h>

#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/io/hdf5_file.hpp"

int main(int argc, char** argv) {
  beatnik::io::prefer_safe_mpi_io();  // before MPI_Init (io/hdf5_file.hpp)
  MPI_Init(&argc, &argv);
  beatnik::comm::install_mpi_error_handler(MPI_COMM_WORLD);  // as the program: MPI errors throw
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int result = RUN_ALL_TESTS();
  int worst = result;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
