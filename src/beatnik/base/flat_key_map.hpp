// A map from a key of three integers to a long, held in one open-addressed array (linear probing):
// no allocation per entry and clear() in O(1) (a generation stamp per slot), for a hot loop that
// inserts tens of thousands of keys per call and starts afresh each call (the device edge tables'
// shared sorted copies: std::unordered_map cost ~90 ns an insertion there, its nodes allocated).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace beatnik {

class FlatKeyMap {
 public:
  struct Key {
    long a = 0, b = 0;
    int c = 0;
    bool operator==(const Key&) const = default;
  };

  // The value stored under k, inserting `value` first if k is absent: (the value, whether inserted).
  std::pair<long, bool> try_emplace(const Key& k, long value) {
    const auto [slot, inserted] = emplace_slot(k, value);
    return {*slot, inserted};
  }

  // As try_emplace, with the address of the value stored under k: it stays valid until an
  // insertion grows the map (none does within the room reserve() made).
  std::pair<long*, bool> emplace_slot(const Key& k, long value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash(k) & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.gen != gen_) {
        s = {k, value, gen_};
        ++size_;
        return {&s.value, true};
      }
      if (s.key == k) return {&s.value, false};
    }
  }

  // Room for `more` keys beyond those held, without growing.
  void reserve(size_t more) {
    while (2 * (size_ + more) > slots_.size()) grow();
  }

  static size_t hash(const Key& k) {
    uint64_t h = static_cast<uint64_t>(k.a) * 0x9E3779B97F4A7C15ULL;
    h ^= (static_cast<uint64_t>(k.b) + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2)) * 0xBF58476D1CE4E5B9ULL;
    h ^= static_cast<uint64_t>(static_cast<uint32_t>(k.c)) * 0x94D049BB133111EBULL;
    return static_cast<size_t>(h ^ (h >> 31));
  }

  // Forgets every key; the slots stay allocated for the next call.
  void clear() {
    size_ = 0;
    if (++gen_ == 0) {  // the stamp wrapped: every old slot must read as empty again
      for (Slot& s : slots_) s.gen = 0;
      gen_ = 1;
    }
  }

  size_t size() const { return size_; }

 private:
  struct Slot {
    Key key;
    long value = 0;
    uint32_t gen = 0;  // the slot holds a key of this map's generation gen_ iff equal
  };
  void grow() {  // twice the slots (at least 1024), this generation's keys placed again
    std::vector<Slot> old(slots_.size() < 512 ? 1024 : 2 * slots_.size());
    old.swap(slots_);
    const size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.gen != gen_) continue;
      size_t i = hash(s.key) & mask;
      while (slots_[i].gen == gen_) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
  uint32_t gen_ = 1;  // fresh slots hold 0: empty
};

}  // namespace beatnik
