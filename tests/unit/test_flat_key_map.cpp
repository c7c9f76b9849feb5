// FlatKeyMap (base/flat_key_map.hpp) against std::unordered_map on random keys: the same
// value for every key and the same insertions, through growth, many clears and colliding keys
// (the same a with several b and c: a cluster and its first child share their first source).
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>
#include <vector>

#include "beatnik/base/flat_key_map.hpp"
#include "beatnik/base/sharded_key_map.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

using beatnik::FlatKeyMap;

namespace {
struct KeyHash {
  size_t operator()(const FlatKeyMap::Key& k) const {
    return std::hash<long>()(k.a) * 31 + std::hash<long>()(k.b) * 7 + static_cast<size_t>(k.c);
  }
};
}  // namespace

TEST(FlatKeyMap, AgreesWithUnorderedMapThroughGrowthAndClears) {
  std::mt19937_64 rng(12345);
  FlatKeyMap flat;
  for (int call = 0; call < 40; ++call) {
    std::unordered_map<FlatKeyMap::Key, long, KeyHash> ref;
    flat.clear();
    EXPECT_EQ(flat.size(), 0u);
    const int n = call % 5 == 0 ? 30000 : 1 + static_cast<int>(rng() % 3000);
    for (int i = 0; i < n; ++i) {
      // Few distinct a's so that keys collide in a and differ in b or c only.
      const FlatKeyMap::Key k{static_cast<long>(rng() % 997), static_cast<long>(rng() % 61), static_cast<int>(rng() % 3)};
      const long v = static_cast<long>(rng() % 1000000);
      const auto [it, fresh] = ref.try_emplace(k, v);
      const auto [got, inserted] = flat.try_emplace(k, v);
      ASSERT_EQ(inserted, fresh) << "call " << call << " key " << k.a << "," << k.b << "," << k.c;
      ASSERT_EQ(got, it->second);
    }
    EXPECT_EQ(flat.size(), ref.size());
  }
}

TEST(FlatKeyMap, AClearedKeyIsAbsentAgainAfterManyGenerations) {
  FlatKeyMap flat;
  for (int g = 0; g < 100000; ++g) {  // (the stamp is 32 bits: this checks reuse, not the wrap)
    flat.clear();
    ASSERT_TRUE(flat.try_emplace({7, 8, 1}, g).second);
    ASSERT_EQ(flat.try_emplace({7, 8, 1}, -1).first, g);
    ASSERT_TRUE(flat.try_emplace({7, 8, 2}, g + 1).second);
  }
}

// ShardedKeyMap (base/sharded_key_map.hpp) against one FlatKeyMap taken in order: batch after
// batch (the device edge tables' pieces), each key's answer is the earlier batch's value, the
// index of its first occurrence in this batch, or "first" itself; and the same on 1 and 4 threads.
namespace {
std::vector<long> serial_first(FlatKeyMap& ref, const std::vector<FlatKeyMap::Key>& keys, const std::vector<long>& values) {
  std::vector<long> first(keys.size());
  std::vector<long> seen(keys.size(), -1);
  for (size_t k = 0; k < keys.size(); ++k) {
    // The reference stores −2 − k for this batch's new keys, then the values after the batch.
    const auto [v, inserted] = ref.try_emplace(keys[k], -2 - static_cast<long>(k));
    first[k] = inserted ? -1 : v;
  }
  for (size_t k = 0; k < keys.size(); ++k)
    if (first[k] == -1) *ref.emplace_slot(keys[k], 0).first = values[k];
  return first;
}
}  // namespace

TEST(ShardedKeyMap, AgreesWithOneMapInOrderOnAnyThreadCount) {
  std::mt19937_64 rng(777);
  for (int threads : {1, 4}) {
#if defined(_OPENMP)
    omp_set_num_threads(threads);
#endif
    beatnik::ShardedKeyMap sharded;
    FlatKeyMap ref;
    for (int call = 0; call < 6; ++call) {
      sharded.clear();
      ref.clear();
      for (int batch = 0; batch < 5; ++batch) {
        const long n = batch == 2 ? 0 : 1 + static_cast<long>(rng() % 20000);
        std::vector<FlatKeyMap::Key> keys(n);
        std::vector<long> values(n);
        for (long k = 0; k < n; ++k) {
          keys[k] = {static_cast<long>(rng() % 4000), static_cast<long>(rng() % 7), static_cast<int>(rng() % 2)};
          values[k] = static_cast<long>(rng() % 1000000);
        }
        const std::vector<long> want = serial_first(ref, keys, values);
        std::vector<long> got(n, 12345);
        sharded.find_first(keys.data(), n, got.data());
        sharded.store_new(values.data());
        ASSERT_EQ(got, want) << "threads " << threads << " call " << call << " batch " << batch;
        ASSERT_EQ(sharded.size(), ref.size());
      }
    }
  }
}
