#pragma once
// Writing one results file (JSON) atomically: FILE.tmp, then rename. Called on one rank only.
#include <nlohmann/json.hpp>

#include <string>

namespace beatnik::io {

inline constexpr int kResultsSchemaVersion = 1;

// Throws Error if the file cannot be written.
void write_json_file(const std::string& path, const nlohmann::json& doc);

}  // namespace beatnik::io
