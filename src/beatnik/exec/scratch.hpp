#pragma once
// Scratch buffers that grow and are never freed per call (hot-path helpers keep them as members).
#include <cstddef>

#include "beatnik/exec/memory.hpp"

namespace beatnik::exec {

// Grows b to at least n elements in space s (by half again, so that slowly growing sizes
// settle after a few calls); the contents are not kept when it grows.
template <class T>
void grow(Buffer<T>& b, Space s, std::size_t n) {
  if (b.size() >= n && b.space() == s && (n == 0 || b.data())) return;
  b = Buffer<T>();
  b = Buffer<T>(s, n + n / 2);
}

}  // namespace beatnik::exec
