// MPI errors become beatnik::Error on every communicator the program makes (the handler that
// the world communicator passes on, comm/mpi_check.hpp), also from calls whose return code
// nobody checks: no MPI abort text, no error passed over in silence.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/cart_grid.hpp"
#include "beatnik/comm/mpi_check.hpp"

using namespace beatnik;

namespace {

// A send to a rank that does not exist: an argument error every MPI library reports locally.
void bad_send(MPI_Comm c) {
  int size = 0;
  MPI_Comm_size(c, &size);
  double x = 1.0;
  MPI_Send(&x, 1, MPI_DOUBLE, size + 5, 0, c);  // return code deliberately not checked
}

void expect_mpi_error(MPI_Comm c) {
  try {
    bad_send(c);
    ADD_FAILURE() << "the invalid send did not raise";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("MPI error"), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(MpiErrors, WorldAndEveryDerivedCommunicatorThrow) {
  expect_mpi_error(MPI_COMM_WORLD);
  MPI_Comm dup = MPI_COMM_NULL, split = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split(dup, rank % 2, rank, &split);
  expect_mpi_error(dup);
  expect_mpi_error(split);
  MPI_Comm_free(&split);
  MPI_Comm_free(&dup);
  // The errors were local: the ranks still talk.
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT_EQ(sum, size);
}

TEST(MpiErrors, ProcessGridThrowsWhateverItsParent) {
  MPI_Comm fatal = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &fatal);
  MPI_Comm_set_errhandler(fatal, MPI_ERRORS_ARE_FATAL);
  int size = 0;
  MPI_Comm_size(fatal, &size);
  {
    comm::CartGrid grid(fatal, {size, 1}, {true, true});
    expect_mpi_error(grid.comm());
  }
  MPI_Comm_free(&fatal);
}
