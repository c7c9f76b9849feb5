// FlatKeyMap (base/flat_key_map.hpp) against std::unordered_map on random keys: the same
// value for every key and the same insertions, through growth, many clears and colliding keys
// (the same a with several b and c: a cluster and its first child share their first source).
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

#include "beatnik/base/flat_key_map.hpp"

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
