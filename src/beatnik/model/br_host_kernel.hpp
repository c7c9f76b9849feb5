#pragma once
// The host versions of the exact Birkhoff–Rott block (br_block_host): which SIMD path sums
// the pairs. The fastest one this CPU supports is chosen at run time (cpuid); tests and the
// kernel benchmark can ask for any supported one by name. Host only (not compiled by nvcc).
#include <string>
#include <vector>

#include "beatnik/model/br_block.hpp"

namespace beatnik::model {

enum class BRHostKernel {
  Scalar,    // br_pair in a plain loop, not vectorised (the reference)
  Portable,  // `omp simd` loop with sqrt + division, compiled for AVX-512/AVX2/baseline (target_clones)
  Avx2,      // AVX2 + FMA intrinsics: float rsqrt estimate + corrections in double, images innermost
  Avx512,    // AVX-512F intrinsics: rsqrt14 estimate + two Newton steps
};

const char* to_string(BRHostKernel k);
bool br_host_kernel_supported(BRHostKernel k);
// Every kernel this CPU supports, the reference first.
std::vector<BRHostKernel> br_host_kernels_supported();
// The kernel br_block_host(a) and the tree solver's pair loops use on this CPU: AVX-512 if
// present, else AVX2 + FMA, else portable; BEATNIK_HOST_KERNEL=avx512|avx2|portable picks another
// this CPU supports (NotAvailable if it lacks it; InputError for another value).
BRHostKernel br_host_kernel_default();
// br_block_host with the given kernel (throws NotAvailable if this CPU lacks it).
void br_block_host(const BRBlockArgs& a, BRHostKernel k);

}  // namespace beatnik::model
