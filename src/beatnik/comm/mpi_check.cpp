#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::comm {
namespace {

// Throwing from the handler unwinds through the MPI library's frames, which carry unwind
// tables on the platforms we build for; the program then ends through its usual error path.
void throw_mpi_error(MPI_Comm*, int* err, ...) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(*err, msg, &len);
  throw Error("MPI error: " + std::string(msg, len));
}

}  // namespace

void install_mpi_error_handler(MPI_Comm comm) {
  MPI_Errhandler h;
  MPI_Comm_create_errhandler(&throw_mpi_error, &h);
  MPI_Comm_set_errhandler(comm, h);
  MPI_Errhandler_free(&h);  // the communicator keeps its own reference
}

}  // namespace beatnik::comm
