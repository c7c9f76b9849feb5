#pragma once
// Writing one results file (JSON), whole or not at all (io/checked_file.hpp). Called on one rank only.
#include <nlohmann/json.hpp>

#include <string>

namespace beatnik::io {

inline constexpr int kResultsSchemaVersion = 1;

// Throws WriteError if the file cannot be written.
void write_json_file(const std::string& path, const nlohmann::json& doc);

}  // namespace beatnik::io
