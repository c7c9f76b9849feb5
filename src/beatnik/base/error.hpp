#pragma once
// One error type for the whole program: a message that tells the user what to change.
#include <stdexcept>
#include <string>

namespace beatnik {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Invalid user input: the driver maps it to exit code 2.
class InputError : public Error {
 public:
  explicit InputError(const std::string& what) : Error(what) {}
};

// Feature asked for but not built yet, or not in this build (also exit code 2).
class NotAvailable : public Error {
 public:
  explicit NotAvailable(const std::string& what) : Error(what) {}
};

// The simulation itself failed (non-finite value, tangled surface): exit code 3.
class SimulationError : public Error {
 public:
  explicit SimulationError(const std::string& what) : Error(what) {}
};

// A file could not be written whole (disk full, no permission, a missing directory): exit
// code 5. The message names the file and the system's reason.
class WriteError : public Error {
 public:
  explicit WriteError(const std::string& what) : Error(what) {}
};

}  // namespace beatnik
