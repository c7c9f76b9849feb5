#pragma once
// Owning buffers in host or device memory, plus copies between spaces.
#include <cstddef>
#include <utility>

#include "beatnik/exec/space.hpp"

namespace beatnik::exec {

void* allocate(Space s, std::size_t bytes);
// Alignment in bytes of every host allocation from now on (4096 unless set; --buffer-align):
// a power of two from 8 to 1 GiB, else InputError. Device memory keeps cudaMalloc's alignment.
void check_host_alignment(long bytes);
void set_host_alignment(std::size_t bytes);
std::size_t host_alignment();
void deallocate(Space s, void* p) noexcept;
void copy_bytes(void* dst, Space dst_space, const void* src, Space src_space, std::size_t bytes);
// The same copy queued on the work stream (exec/stream.hpp) behind the work queued there, without
// waiting for it: the host returns at once when the host side is page-locked (else the driver may
// stage it first, or wait); the source must stay unchanged until the stream has run the copy.
// Host to host: a plain memcpy.
void copy_bytes_async(void* dst, Space dst_space, const void* src, Space src_space, std::size_t bytes);
void fill_zero(Space s, void* p, std::size_t bytes);

// Bytes currently held in buffers, per space (for the memory-per-node report).
std::size_t bytes_in_use(Space s);
std::size_t peak_bytes(Space s);

template <class T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(Space s, std::size_t n) : space_(s), size_(n) {
    if (n) data_ = static_cast<T*>(allocate(s, n * sizeof(T)));
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    Buffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~Buffer() {
    if (data_) deallocate(space_, data_);
  }

  T* data() const { return data_; }
  std::size_t size() const { return size_; }
  Space space() const { return space_; }
  void zero() { fill_zero(space_, data_, size_ * sizeof(T)); }

  void swap(Buffer& o) noexcept {
    std::swap(space_, o.space_);
    std::swap(size_, o.size_);
    std::swap(data_, o.data_);
  }

 private:
  Space space_ = Space::Host;
  std::size_t size_ = 0;
  T* data_ = nullptr;
};

// Copy n elements between any two spaces.
template <class T>
void copy(T* dst, Space ds, const T* src, Space ss, std::size_t n) {
  copy_bytes(dst, ds, src, ss, n * sizeof(T));
}

template <class T>
void copy_async(T* dst, Space ds, const T* src, Space ss, std::size_t n) {
  copy_bytes_async(dst, ds, src, ss, n * sizeof(T));
}

}  // namespace beatnik::exec
