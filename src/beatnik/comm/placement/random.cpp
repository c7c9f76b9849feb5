// --placement random: a seeded worst case for locality (node partners scattered over the grid).
#include <utility>

#include "beatnik/comm/placement/placement.hpp"

namespace beatnik::comm::placement {

std::vector<int> random(int ranks, std::uint64_t seed) {
  // splitmix64 and a plain modulo: std::shuffle and the std distributions differ between
  // standard libraries, and every rank must compute the same map.
  std::uint64_t x = seed;
  auto next = [&x]() {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  std::vector<int> c = linear(ranks);
  for (int k = ranks - 1; k > 0; --k) {
    const int pick = static_cast<int>(next() % static_cast<std::uint64_t>(k + 1));
    std::swap(c[k], c[pick]);
  }
  return c;
}

}  // namespace beatnik::comm::placement
