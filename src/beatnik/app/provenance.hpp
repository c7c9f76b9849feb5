#pragma once
// Where a result came from: program version, build, libraries, machine, command line.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace beatnik::app {

nlohmann::json provenance(const std::vector<std::string>& argv, const std::vector<std::string>& hosts);
std::string mpi_library_version();

}  // namespace beatnik::app
