#pragma once
// MPI errors become beatnik::Error (the communicators use MPI_ERRORS_RETURN).
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

}  // namespace beatnik::comm
