#pragma once
// Markers that let one function body compile for host and device.
#if defined(__CUDACC__)
#define BEATNIK_HOST_DEVICE __host__ __device__
#define BEATNIK_DEVICE_COMPILE 1
#else
#define BEATNIK_HOST_DEVICE
#endif
