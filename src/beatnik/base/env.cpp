#include "beatnik/base/env.hpp"

#include <cerrno>
#include <cstdlib>

#include "beatnik/base/error.hpp"

namespace beatnik::env {

std::optional<long> integer(const char* name, long lo, long hi) {
  const char* e = std::getenv(name);
  if (!e || !*e) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(e, &end, 10);
  if (*end != '\0' || errno == ERANGE || v < lo || v > hi)
    throw InputError(std::string(name) + "='" + e + "': an integer from " + std::to_string(lo) + " to " +
                     std::to_string(hi) + " is expected");
  return v;
}

std::optional<std::string> choice(const char* name, std::initializer_list<std::string_view> choices) {
  const char* e = std::getenv(name);
  if (!e || !*e) return std::nullopt;
  std::string listed;  // "a or b", "a, b or c"
  size_t k = 0;
  for (std::string_view c : choices) {
    if (c == e) return std::string(e);
    listed += (k == 0 ? "" : k + 1 == choices.size() ? " or " : ", ") + std::string(c);
    ++k;
  }
  throw InputError(std::string(name) + "='" + e + "': " + listed + " is expected");
}

}  // namespace beatnik::env
