#include "beatnik/io/checked_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "beatnik/base/error.hpp"

namespace beatnik::io {
namespace {

// Every byte to fd, retrying short writes and interrupted calls; errno on failure.
bool write_all(int fd, std::string_view data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

bool special_file(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISBLK(st.st_mode));
}

}  // namespace

std::string file_error(const std::string& what, int err) { return what + ": " + std::strerror(err); }

void write_file_checked(const std::string& path, std::string_view data) {
  if (special_file(path)) {
    const int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0) throw WriteError(file_error("cannot open " + path, errno));
    const bool wrote = write_all(fd, data);
    const int err = errno;
    if (::close(fd) != 0 && wrote) throw WriteError(file_error("cannot write " + path, errno));
    if (!wrote) throw WriteError(file_error("cannot write " + path, err));
    return;
  }
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd < 0) throw WriteError(file_error("cannot create " + tmp, errno));
  int err = 0;
  if (!write_all(fd, data)) err = errno;
  // Delayed allocation can report a full disk only when the data reach it.
  if (err == 0 && ::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    std::remove(tmp.c_str());
    throw WriteError(file_error("cannot write " + path, err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    std::remove(tmp.c_str());
    throw WriteError(file_error("cannot rename " + tmp + " to " + path, err));
  }
}

}  // namespace beatnik::io
