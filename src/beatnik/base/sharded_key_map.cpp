#include "beatnik/base/sharded_key_map.hpp"

#include <cstdint>

namespace beatnik {

void ShardedKeyMap::find_first(const Key* keys, long n, long* first) {
  std::vector<uint8_t> shard(static_cast<size_t>(n));
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (long k = 0; k < n; ++k) shard[k] = static_cast<uint8_t>(shard_of(keys[k]));
#pragma omp for schedule(dynamic, 1)
    for (int s = 0; s < kShards; ++s) {
      // This batch's index of the first key under each new key, held in its slot until store_new;
      // slots' addresses stay put (room reserved for every key of the shard).
      FlatKeyMap& m = maps_[s];
      std::vector<NewKey>& fresh = new_[s];
      fresh.clear();
      long count = 0;
      for (long k = 0; k < n; ++k) count += shard[k] == s;
      m.reserve(static_cast<size_t>(count));
      for (long k = 0; k < n; ++k) {
        if (shard[k] != s) continue;
        const auto [slot, inserted] = m.emplace_slot(keys[k], -2 - k);
        if (inserted) {
          first[k] = -1;
          fresh.push_back({slot, k});
        } else {
          first[k] = *slot;  // an earlier batch's value, or −2 − j for this batch's first j
        }
      }
    }
  }
}

void ShardedKeyMap::store_new(const long* values) {
#pragma omp parallel for schedule(dynamic, 1)
  for (int s = 0; s < kShards; ++s) {
    for (const NewKey& f : new_[s]) *f.slot = values[f.k];
    new_[s].clear();
  }
}

void ShardedKeyMap::clear() {
  for (int s = 0; s < kShards; ++s) {
    maps_[s].clear();
    new_[s].clear();
  }
}

size_t ShardedKeyMap::size() const {
  size_t n = 0;
  for (int s = 0; s < kShards; ++s) n += maps_[s].size();
  return n;
}

}  // namespace beatnik
