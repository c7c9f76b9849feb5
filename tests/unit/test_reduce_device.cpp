// test_reduce.cpp's cases with the values and the reductions on the GPU (compiled by nvcc).
#define REDUCE_ON_DEVICE 1
#include "test_reduce.cpp"
