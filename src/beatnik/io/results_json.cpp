#include "beatnik/io/results_json.hpp"

#include "beatnik/io/checked_file.hpp"

namespace beatnik::io {

void write_json_file(const std::string& path, const nlohmann::json& doc) {
  write_file_checked(path, doc.dump(2) + "\n");
}

}  // namespace beatnik::io
