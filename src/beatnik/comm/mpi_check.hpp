#pragma once
// MPI errors become beatnik::Error: checked return codes (check_mpi) and, through an error
// handler on the world communicator that every derived communicator inherits, every other call.
#include <mpi.h>

#include <string>

#include "beatnik/base/error.hpp"

namespace beatnik::comm {

inline void check_mpi(int err, const char* what) {
  if (err == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(err, msg, &len);
  throw Error(std::string("MPI error in ") + what + ": " + std::string(msg, len));
}

// Installs on `comm` an error handler that throws beatnik::Error with MPI's own description, so
// that no MPI error passes unseen and none ends in the MPI library's abort text. Communicators
// created from `comm` later (dup, split, Cartesian, graph) inherit it.
void install_mpi_error_handler(MPI_Comm comm);

// While alive, MPI errors on `comm` come back as return codes instead of throwing: for calls
// whose failure the caller handles itself (a window the library cannot make, agreed across
// ranks and refused with a clear message). Restores the communicator's handler on exit.
class ReturnMpiErrors {
 public:
  explicit ReturnMpiErrors(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_get_errhandler(comm_, &saved_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  }
  ~ReturnMpiErrors() {
    MPI_Comm_set_errhandler(comm_, saved_);
    MPI_Errhandler_free(&saved_);  // the reference MPI_Comm_get_errhandler gave us
  }
  ReturnMpiErrors(const ReturnMpiErrors&) = delete;
  ReturnMpiErrors& operator=(const ReturnMpiErrors&) = delete;

 private:
  MPI_Comm comm_;
  MPI_Errhandler saved_ = MPI_ERRHANDLER_NULL;
};

}  // namespace beatnik::comm
