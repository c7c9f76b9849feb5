#pragma once
// Markers that let one function body compile for host and device.
#if defined(__CUDACC__)
#define BEATNIK_HOST_DEVICE __host__ __device__
#define BEATNIK_DEVICE_COMPILE 1
#else
#define BEATNIK_HOST_DEVICE
#endif

// After a host kernel lambda's parameter list: inline it into the parallel_for loop even when
// large (a call per node costs the loop its vectorisation). Empty under nvcc.
#if defined(__CUDACC__) || !defined(__GNUC__)
#define BEATNIK_INLINE_KERNEL
#else
#define BEATNIK_INLINE_KERNEL __attribute__((always_inline))
#endif
