// FlatKeyMap split by hash into shards, for a batch of keys looked up in parallel with the
// answer of one map taken in order: each key lands in one shard, and each shard takes its keys in
// the batch's order on one thread, so which key of the batch comes first is decided as in order.
// (The device edge tables' shared sorted copies: one random access per table, about 131k tables
// a call at 2048².)
#pragma once

#include <vector>

#include "beatnik/base/flat_key_map.hpp"

namespace beatnik {

class ShardedKeyMap {
 public:
  using Key = FlatKeyMap::Key;
  static constexpr int kShards = 64;  // fixed: the answer does not depend on the thread count

  // For keys[0..n): first[k] = the value already stored under keys[k] (≥ 0: values are
  // offsets), else −2 − j where j < k is the first of this batch with that key, else −1 where k
  // is that first one. Keys marked −1 are stored with a placeholder until store_new.
  void find_first(const Key* keys, long n, long* first);
  // The batch's new keys' values: values[k] for each k that find_first marked −1.
  void store_new(const long* values);

  void clear();  // every key forgotten; the slots stay allocated
  size_t size() const;

 private:
  static int shard_of(const Key& k) {  // the high bits: the shard's own slots use the low ones
    return static_cast<int>((FlatKeyMap::hash(k) >> 40) % kShards);
  }
  struct NewKey {
    long* slot;
    long k;
  };
  FlatKeyMap maps_[kShards];
  std::vector<NewKey> new_[kShards];  // the last batch's new keys per shard
};

}  // namespace beatnik
