#pragma once
// One check for CUDA runtime calls in a CUDA build: a failed call throws Error("CUDA error in
// WHAT: the runtime's reason"), so that every file reports it alike.
#if defined(BEATNIK_WITH_CUDA)
#include <cuda_runtime.h>

namespace beatnik::exec {
void cuda_check(cudaError_t e, const char* what);
}  // namespace beatnik::exec
#endif
