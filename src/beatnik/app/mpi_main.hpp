#pragma once
// The MPI frame of beatnik's programs: MPI_Init, errors returned (not fatal), the body, and
// MPI_Finalize. Input errors and unavailable features are raised on every rank alike: rank 0
// prints them and every rank exits 2. Any other exception is not known to be raised everywhere,
// so it stops all ranks (MPI_Abort) rather than leave one waiting in a collective.
#include <functional>

namespace beatnik::app {

int mpi_main(int argc, char** argv, const char* program, const std::function<int(int rank, int size)>& body);

}  // namespace beatnik::app
