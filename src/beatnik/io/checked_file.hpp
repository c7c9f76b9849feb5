#pragma once
// Writing a small or medium file so that it is published whole or not at all, and a failure
// is never silent: results documents, state CSV files, the XDMF index.
#include <string>
#include <string_view>

namespace beatnik::io {

// Writes `data` to PATH.tmp, flushes it to the disk (fsync) and renames it over `path`, checking
// every step. A path that names an existing device or FIFO (/dev/null, /dev/stdout) is written
// in place instead: renaming over it would replace the device with a plain file. On failure
// throws WriteError naming the file and the system's reason, and leaves no temporary file.
void write_file_checked(const std::string& path, std::string_view data);

// "<what>: <the system's reason for err>", for messages about a failed file operation.
std::string file_error(const std::string& what, int err);

}  // namespace beatnik::io
