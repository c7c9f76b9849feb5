#pragma once
// Rank placement: which cell of the Px x Py process grid each rank takes (--placement).
// A map is `cell_of_rank[r] = i * Py + j` for every rank r of the parent communicator, the
// row-major cell index, which is also the rank the cell gets in the grid communicator
// (comm/cart_grid.hpp). Every policy but `cart` is a pure function here (no MPI), one file per
// policy beside registry.cpp; `cart` is MPI_Cart_create's own choice (reorder = 1), made in
// CartGrid. See docs/placement.md.
#include <array>
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace beatnik::comm::placement {

enum class Policy { Linear, Cart, NodeBlocks, Random, File };

inline constexpr std::uint64_t kDefaultSeed = 1;

struct Options {
  Policy policy = Policy::Linear;
  std::string spec = "linear";        // as typed: banner and results file
  std::uint64_t seed = kDefaultSeed;  // random
  std::string path;                   // file: the map file
  std::vector<int> file_cells;        // file: its map, read and checked with the options
};

// "linear", "cart", "node-blocks", "random" or "file:PATH" (the file is not read here).
// InputError naming the choices otherwise.
Options parse(const std::string& spec, std::uint64_t seed = kDefaultSeed);
// "linear, cart, node-blocks, random or file:PATH" (for messages and --help).
std::string names();
const char* name(Policy p);

// MPI's order: rank r takes cell r.
std::vector<int> linear(int ranks);

// Per-node blocks of the grid. node_of_rank: node index of every rank (0..nodes-1).
// rank_extent: the mesh nodes one rank owns per dimension, so that "square" means least edge
// towards other nodes in mesh nodes (hence least halo crossing it); {1, 1}: in ranks.
std::vector<int> node_blocks(std::array<int, 2> dims, const std::vector<int>& node_of_rank,
                             std::array<double, 2> rank_extent = {1.0, 1.0});
// The a x b block (in grid cells) node_blocks gives a node of `node_size` ranks: a exactly
// tiling shape when one exists, else the strip height a and b = ceil(node_size / a).
std::array<int, 2> node_block_shape(std::array<int, 2> dims, int node_size, std::array<double, 2> rank_extent);

// A seeded permutation (Fisher-Yates on splitmix64: the same map on every platform).
std::vector<int> random(int ranks, std::uint64_t seed);

// A map file: lines "rank i j" (blank lines and # comments allowed); every rank of the
// dims[0] x dims[1] grid once, every cell once. InputError "<source>: line N: ..." otherwise.
std::vector<int> read_map(std::istream& in, const std::string& source, std::array<int, 2> dims);
std::vector<int> read_map_file(const std::string& path, std::array<int, 2> dims);

// The map of every policy but Cart (empty for Cart: MPI decides, in CartGrid).
std::vector<int> cells(const Options& o, std::array<int, 2> dims, const std::vector<int>& node_of_rank,
                       std::array<double, 2> rank_extent = {1.0, 1.0});

// Is `cells` a permutation of 0..size-1?
bool is_permutation(const std::vector<int>& cells);

}  // namespace beatnik::comm::placement
