// --placement file:PATH: an explicit rank -> grid-coordinate map, checked line by line so a
// mistake is reported where it is, before any rank communicates.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/placement/placement.hpp"

namespace beatnik::comm::placement {

std::vector<int> read_map(std::istream& in, const std::string& source, std::array<int, 2> dims) {
  const int ranks = dims[0] * dims[1];
  const std::string grid = std::to_string(dims[0]) + " x " + std::to_string(dims[1]);
  std::vector<int> cell_of_rank(ranks, -1), line_of_rank(ranks, 0), rank_of_cell(ranks, -1);
  std::string text;
  int line = 0;
  auto fail = [&](const std::string& why) {
    throw InputError(source + ": line " + std::to_string(line) + ": " + why);
  };
  while (std::getline(in, text)) {
    ++line;
    if (const auto hash = text.find('#'); hash != std::string::npos) text.erase(hash);
    std::istringstream fields(text);
    long r = 0, i = 0, j = 0;
    std::string extra;
    if (!(fields >> std::ws) || fields.eof()) continue;  // blank or comment
    if (!(fields >> r >> i >> j) || (fields >> extra))
      fail("expected 'rank i j' (three integers), got '" + text + "'");
    if (r < 0 || r >= ranks)
      fail("rank " + std::to_string(r) + " is not a rank of this run (0.." + std::to_string(ranks - 1) + ")");
    if (i < 0 || i >= dims[0] || j < 0 || j >= dims[1])
      fail("coordinate (" + std::to_string(i) + ", " + std::to_string(j) + ") is outside the " + grid +
           " process grid");
    const int cell = static_cast<int>(i * dims[1] + j);
    if (cell_of_rank[r] >= 0)
      fail("rank " + std::to_string(r) + " is listed twice (first on line " + std::to_string(line_of_rank[r]) + ")");
    if (rank_of_cell[cell] >= 0)
      fail("coordinate (" + std::to_string(i) + ", " + std::to_string(j) + ") is given twice (first to rank " +
           std::to_string(rank_of_cell[cell]) + " on line " + std::to_string(line_of_rank[rank_of_cell[cell]]) + ")");
    cell_of_rank[r] = cell;
    rank_of_cell[cell] = static_cast<int>(r);
    line_of_rank[r] = line;
  }
  std::string missing;
  int count = 0;
  for (int r = 0; r < ranks; ++r)
    if (cell_of_rank[r] < 0) {
      if (count < 8) missing += (count ? ", " : "") + std::to_string(r);
      ++count;
    }
  if (count > 0)
    throw InputError(source + ": " + std::to_string(count) + " rank(s) missing (" + missing + (count > 8 ? ", ..." : "") +
                     "); the map needs every rank 0.." + std::to_string(ranks - 1) + " of the " + grid + " grid once");
  return cell_of_rank;
}

std::vector<int> read_map_file(const std::string& path, std::array<int, 2> dims) {
  const std::string source = "--placement file:" + path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(source + ": is a directory, not a map file");
  std::ifstream in(path);
  if (!in) throw InputError(source + ": cannot open the map file (" + std::strerror(errno) + ")");
  return read_map(in, source, dims);
}

}  // namespace beatnik::comm::placement
