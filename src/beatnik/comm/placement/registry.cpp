#include <algorithm>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/placement/placement.hpp"

namespace beatnik::comm::placement {

namespace {
constexpr const char* kFilePrefix = "file:";
}

const char* name(Policy p) {
  switch (p) {
    case Policy::Linear: return "linear";
    case Policy::Cart: return "cart";
    case Policy::NodeBlocks: return "node-blocks";
    case Policy::Random: return "random";
    case Policy::File: return "file";
  }
  return "?";
}

std::string names() { return "linear, cart, node-blocks, random or file:PATH"; }

Options parse(const std::string& spec, std::uint64_t seed) {
  Options o;
  o.spec = spec;
  o.seed = seed;
  if (spec == "linear") o.policy = Policy::Linear;
  else if (spec == "cart") o.policy = Policy::Cart;
  else if (spec == "node-blocks") o.policy = Policy::NodeBlocks;
  else if (spec == "random") o.policy = Policy::Random;
  else if (spec.rfind(kFilePrefix, 0) == 0) {
    o.policy = Policy::File;
    o.path = spec.substr(std::string(kFilePrefix).size());
    if (o.path.empty()) throw InputError("--placement file:PATH needs the path of a map file (lines 'rank i j')");
  } else {
    throw InputError("unknown --placement '" + spec + "': choose " + names());
  }
  return o;
}

std::vector<int> linear(int ranks) {
  std::vector<int> c(ranks);
  for (int r = 0; r < ranks; ++r) c[r] = r;
  return c;
}

std::vector<int> cells(const Options& o, std::array<int, 2> dims, const std::vector<int>& node_of_rank,
                       std::array<double, 2> rank_extent) {
  const int ranks = dims[0] * dims[1];
  switch (o.policy) {
    case Policy::Linear: return linear(ranks);
    case Policy::Cart: return {};
    case Policy::NodeBlocks: return node_blocks(dims, node_of_rank, rank_extent);
    case Policy::Random: return random(ranks, o.seed);
    case Policy::File:
      if (static_cast<int>(o.file_cells.size()) != ranks)
        throw Error("--placement " + o.spec + ": the map was not read for this grid");
      return o.file_cells;
  }
  return {};
}

bool is_permutation(const std::vector<int>& cells) {
  std::vector<char> seen(cells.size(), 0);
  for (int c : cells) {
    if (c < 0 || c >= static_cast<int>(cells.size()) || seen[c]) return false;
    seen[c] = 1;
  }
  return true;
}

}  // namespace beatnik::comm::placement
