#pragma once
// Where data lives and kernels run. Chosen at run time (-x host|cuda).
#include <string>

namespace beatnik::exec {

enum class Space { Host, Device };

inline const char* to_string(Space s) { return s == Space::Host ? "host" : "cuda"; }

// True when this binary was compiled with the CUDA backend.
bool cuda_built();

// Number of visible GPUs (0 when not built with CUDA or none present).
int device_count();

// Select the GPU this process uses.
void set_device(int id);

// Wait until all work queued in this space has finished.
void fence(Space s);

// Host-side OpenMP thread count that parallel_for uses.
int host_threads();

}  // namespace beatnik::exec
