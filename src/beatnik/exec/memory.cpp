// Host and device allocation, copies and bookkeeping.
#include "beatnik/exec/memory.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "beatnik/base/env.hpp"
#include "beatnik/base/error.hpp"
#include "beatnik/exec/cuda_check.hpp"
#include "beatnik/exec/parallel_for.hpp"
#include "beatnik/exec/stream.hpp"

#if defined(BEATNIK_WITH_CUDA)
#include <cuda_runtime.h>
#endif
#if defined(_OPENMP)
#include <omp.h>
#endif

namespace beatnik::exec {
namespace {

struct Ledger {
  std::mutex m;
  std::unordered_map<void*, std::size_t> sizes;
  std::size_t in_use[2] = {0, 0};
  std::size_t peak[2] = {0, 0};
};
Ledger& ledger() {
  static Ledger l;
  return l;
}
int idx(Space s) { return s == Space::Host ? 0 : 1; }

}  // namespace

#if defined(BEATNIK_WITH_CUDA)
void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}
#endif

[[noreturn]] void no_device_backend(const char* what) {
  throw NotAvailable(std::string(what) +
                     ": this beatnik was built without the CUDA backend; rebuild with the 'cuda' "
                     "preset or run with -x host");
}

#if defined(BEATNIK_WITH_CUDA)
namespace detail {
void check_launch(const char* what) { cuda_check(cudaGetLastError(), what); }
}  // namespace detail
#endif

bool cuda_built() {
#if defined(BEATNIK_WITH_CUDA)
  return true;
#else
  return false;
#endif
}

int device_count() {
#if defined(BEATNIK_WITH_CUDA)
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
#else
  return 0;
#endif
}

int current_device() {
#if defined(BEATNIK_WITH_CUDA)
  int id = -1;
  if (cudaGetDevice(&id) != cudaSuccess) return -1;
  return id;
#else
  return -1;
#endif
}

void set_device(int id) {
#if defined(BEATNIK_WITH_CUDA)
  cuda_check(cudaSetDevice(id), "cudaSetDevice");
#else
  (void)id;
  no_device_backend("set_device");
#endif
}

int bind_device(int node_local_rank, int override_id, int ranks_per_gpu, int node_local_size) {
  int id = override_id;
  if (id < 0) {
    if (const std::optional<long> v = env::integer("BEATNIK_GPU_ID", 0, 1 << 20)) id = static_cast<int>(*v);
  }
  const int n = device_count();
  if (n == 0)
    throw NotAvailable(cuda_built() ? "-x cuda: no CUDA GPU is visible to this process (check the driver and "
                                      "CUDA_VISIBLE_DEVICES), or run with -x host"
                                    : "-x cuda: this beatnik was built without the CUDA backend");
  if (id < 0 && ranks_per_gpu > 0) {
    const int needed = (node_local_size + ranks_per_gpu - 1) / ranks_per_gpu;
    if (needed > n)
      throw NotAvailable("--ranks-per-gpu " + std::to_string(ranks_per_gpu) + ": " + std::to_string(node_local_size) +
                         " ranks on this node need " + std::to_string(needed) + " GPU(s), but " + std::to_string(n) +
                         " are visible; use --ranks-per-gpu " +
                         std::to_string((node_local_size + n - 1) / n) + " or more, or fewer ranks");
    id = node_local_rank / ranks_per_gpu;
  }
  if (id < 0) id = node_local_rank % n;
  if (id >= n)
    throw NotAvailable("GPU " + std::to_string(id) + " asked for (--gpu-id or BEATNIK_GPU_ID), but only " +
                       std::to_string(n) + " GPU(s) are visible");
  set_device(id);
  return id;
}

std::string device_name() {
#if defined(BEATNIK_WITH_CUDA)
  int d = 0;
  cudaDeviceProp p;
  if (cudaGetDevice(&d) == cudaSuccess && cudaGetDeviceProperties(&p, d) == cudaSuccess) return p.name;
#endif
  return "none";
}

void device_memory(std::size_t& free_bytes, std::size_t& total_bytes) {
  free_bytes = total_bytes = 0;
#if defined(BEATNIK_WITH_CUDA)
  cuda_check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
#endif
}

void fence(Space s) {
  if (s == Space::Host) return;
#if defined(BEATNIK_WITH_CUDA)
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
#else
  no_device_backend("fence");
#endif
}

int host_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

namespace {
// Page alignment by default: it keeps FFTW on its SIMD paths and suits registered/pinned memory.
std::atomic<std::size_t> g_host_alignment{4096};
}  // namespace

void check_host_alignment(long bytes) {
  if (bytes < long(sizeof(void*)) || (bytes & (bytes - 1)) != 0 || bytes > (long(1) << 30))
    throw InputError("--buffer-align " + std::to_string(bytes) +
                     ": the alignment must be a power of two from 8 bytes to 1 GiB");
}

void set_host_alignment(std::size_t bytes) {
  check_host_alignment(static_cast<long>(bytes));
  g_host_alignment = bytes;
}

std::size_t host_alignment() { return g_host_alignment; }

void* allocate(Space s, std::size_t bytes) {
  void* p = nullptr;
  if (s == Space::Host) {
    const std::size_t align = std::max<std::size_t>(g_host_alignment, alignof(std::max_align_t));
    p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
    if (!p) throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes");
  } else {
#if defined(BEATNIK_WITH_CUDA)
    cuda_check(cudaMalloc(&p, bytes), "cudaMalloc");
#else
    no_device_backend("allocate");
#endif
  }
  Ledger& l = ledger();
  std::lock_guard<std::mutex> g(l.m);
  l.sizes[p] = bytes;
  l.in_use[idx(s)] += bytes;
  if (l.in_use[idx(s)] > l.peak[idx(s)]) l.peak[idx(s)] = l.in_use[idx(s)];
  return p;
}

void deallocate(Space s, void* p) noexcept {
  if (!p) return;
  {
    Ledger& l = ledger();
    std::lock_guard<std::mutex> g(l.m);
    auto it = l.sizes.find(p);
    if (it != l.sizes.end()) {
      l.in_use[idx(s)] -= it->second;
      l.sizes.erase(it);
    }
  }
  if (s == Space::Host) {
    std::free(p);
  } else {
#if defined(BEATNIK_WITH_CUDA)
    cudaFree(p);
#endif
  }
}

void copy_bytes(void* dst, Space ds, const void* src, Space ss, std::size_t bytes) {
  if (bytes == 0) return;
  if (ds == Space::Host && ss == Space::Host) {
    std::memcpy(dst, src, bytes);
    return;
  }
#if defined(BEATNIK_WITH_CUDA)
  cuda_check(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy");
#else
  no_device_backend("copy");
#endif
}

void copy_bytes_async(void* dst, Space ds, const void* src, Space ss, std::size_t bytes) {
  if (bytes == 0) return;
  if (ds == Space::Host && ss == Space::Host) {
    std::memcpy(dst, src, bytes);
    return;
  }
#if defined(BEATNIK_WITH_CUDA)
  cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(work_stream())),
             "cudaMemcpyAsync");
#else
  no_device_backend("copy");
#endif
}

void fill_zero(Space s, void* p, std::size_t bytes) {
  if (bytes == 0) return;
  if (s == Space::Host) {
    std::memset(p, 0, bytes);
    return;
  }
#if defined(BEATNIK_WITH_CUDA)
  cuda_check(cudaMemset(p, 0, bytes), "cudaMemset");
#else
  no_device_backend("fill_zero");
#endif
}

std::size_t bytes_in_use(Space s) {
  std::lock_guard<std::mutex> g(ledger().m);
  return ledger().in_use[idx(s)];
}
std::size_t peak_bytes(Space s) {
  std::lock_guard<std::mutex> g(ledger().m);
  return ledger().peak[idx(s)];
}

}  // namespace beatnik::exec
