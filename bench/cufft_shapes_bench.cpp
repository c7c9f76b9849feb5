// cufft_shapes_bench: times the cuFFT plan shapes that could carry the one-rank step's 2-D
// transforms (double precision, an n × n array, j fastest) and prints one table per n
// (docs/gpu-small.md, "Plan shapes at awkward lengths"). Plain C++ against cuFFT and the CUDA
// runtime: no kernels of its own.
//   cufft_shapes_bench [--reps R] N...        (default: 4096 4864)
// Each shape runs R times after one warm-up; the median of per-call CUDA-event times is printed
// with the bandwidth of 32 B/node per pass (read + write of one complex array) it corresponds to.
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

void cuda_check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "cufft_shapes_bench: %s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}
void fft_check(cufftResult r, const char* what) {
  if (r == CUFFT_SUCCESS) return;
  std::fprintf(stderr, "cufft_shapes_bench: cuFFT error %d in %s\n", int(r), what);
  std::exit(1);
}

// A plan of `rank` dimensions with advanced layout (cufftPlanMany), asserting success.
cufftHandle plan_many(int rank, int* n, int* inembed, int istride, int idist, int* onembed, int ostride,
                      int odist, cufftType type, int batch) {
  cufftHandle p = 0;
  fft_check(cufftPlanMany(&p, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch),
            "cufftPlanMany");
  return p;
}

struct Timer {
  cudaEvent_t a{}, b{};
  Timer() {
    cuda_check(cudaEventCreate(&a), "cudaEventCreate");
    cuda_check(cudaEventCreate(&b), "cudaEventCreate");
  }
  ~Timer() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  // Median milliseconds of `reps` calls of f (after one untimed call).
  double median_ms(const std::function<void()>& f, int reps) {
    f();
    std::vector<float> t(reps);
    for (float& x : t) {
      cudaEventRecord(a);
      f();
      cudaEventRecord(b);
      cuda_check(cudaEventSynchronize(b), "cudaEventSynchronize");
      cudaEventElapsedTime(&x, a, b);
    }
    std::nth_element(t.begin(), t.begin() + reps / 2, t.end());
    return t[reps / 2];
  }
};

void run(int n, int reps) {
  const long nodes = long(n) * n;
  const int h = n / 2 + 1;  // the Hermitian half of the last dimension
  // n(n + 2) elements: room for two real fields in cuFFT's padded in-place layout.
  const size_t bytes = size_t(n) * (n + 2) * sizeof(cufftDoubleComplex);
  cufftDoubleComplex *a = nullptr, *b = nullptr;
  cuda_check(cudaMalloc(&a, bytes), "cudaMalloc");
  cuda_check(cudaMalloc(&b, bytes), "cudaMalloc");
  cuda_check(cudaMemset(a, 0, bytes), "cudaMemset");
  cuda_check(cudaMemset(b, 0, bytes), "cudaMemset");
  auto* ar = reinterpret_cast<double*>(a);
  auto* br = reinterpret_cast<double*>(b);
  Timer timer;
  std::printf("\nn = %d (%ld nodes), median of %d, CUDA events; TB/s at 32 B/node per pass\n", n, nodes, reps);
  std::printf("| shape | ms | passes | TB/s |\n|---|---|---|---|\n");
  auto row = [&](const char* name, double passes, const std::function<void()>& f) {
    const double ms = timer.median_ms(f, reps);
    std::printf("| %s | %.3f | %g | %.2f |\n", name, ms, passes, passes * 32.0 * nodes / (ms * 1e-3) / 1e12);
  };
  int nn[2] = {n, n}, one[1] = {n}, half_nn[2] = {n, h}, real_nn[2] = {n, 2 * h};

  {  // What beatnik runs today: one in-place Z2Z 2-D plan per direction.
    cufftHandle p = 0;
    fft_check(cufftPlan2d(&p, n, n, CUFFT_Z2Z), "cufftPlan2d");
    row("Z2Z 2-D in place, forward", 2, [&] { cufftExecZ2Z(p, a, a, CUFFT_FORWARD); });
    row("Z2Z 2-D in place, inverse", 2, [&] { cufftExecZ2Z(p, a, a, CUFFT_INVERSE); });
    row("Z2Z 2-D out of place, forward", 2, [&] { cufftExecZ2Z(p, a, b, CUFFT_FORWARD); });
    cufftDestroy(p);
  }
  {  // The same as a rank-2 cufftPlanMany with explicit (dense) embedding, batch 1.
    cufftHandle p = plan_many(2, nn, nn, 1, n * n, nn, 1, n * n, CUFFT_Z2Z, 1);
    row("Z2Z 2-D PlanMany (embed n×n), in place", 2, [&] { cufftExecZ2Z(p, a, a, CUFFT_FORWARD); });
    cufftDestroy(p);
  }
  {  // Two 1-D passes: contiguous rows, then strided columns (the plan without --fft-2d).
    cufftHandle rows = plan_many(1, one, one, 1, n, one, 1, n, CUFFT_Z2Z, n);
    cufftHandle cols = plan_many(1, one, one, n, 1, one, n, 1, CUFFT_Z2Z, n);
    row("1-D rows (contiguous batch), in place", 1, [&] { cufftExecZ2Z(rows, a, a, CUFFT_FORWARD); });
    row("1-D columns (stride n, dist 1), in place", 1, [&] { cufftExecZ2Z(cols, a, a, CUFFT_FORWARD); });
    row("rows + columns, in place", 2, [&] {
      cufftExecZ2Z(rows, a, a, CUFFT_FORWARD);
      cufftExecZ2Z(cols, a, a, CUFFT_FORWARD);
    });
    cufftDestroy(rows);
    cufftDestroy(cols);
  }
  {  // Columns in groups of g adjacent columns per plan call (a different batch grouping).
    for (int g : {64, 512}) {
      if (n % g) continue;
      cufftHandle cols = plan_many(1, one, one, n, 1, one, n, 1, CUFFT_Z2Z, g);
      const std::string name = "1-D columns in groups of " + std::to_string(g);
      row(name.c_str(), 1, [&] {
        for (int c = 0; c < n; c += g) cufftExecZ2Z(cols, a + c, a + c, CUFFT_FORWARD);
      });
      cufftDestroy(cols);
    }
  }
  {  // Transposed output: contiguous rows in, each transform written as a column (out of place);
     // twice gives the 2-D transform in natural order with no strided read.
    cufftHandle t = plan_many(1, one, one, 1, n, one, n, 1, CUFFT_Z2Z, n);
    row("1-D rows -> transposed (ostride n), out of place", 1, [&] { cufftExecZ2Z(t, a, b, CUFFT_FORWARD); });
    row("2-D as two transposing passes a->b->a", 2, [&] {
      cufftExecZ2Z(t, a, b, CUFFT_FORWARD);
      cufftExecZ2Z(t, b, a, CUFFT_FORWARD);
    });
    cufftDestroy(t);
  }
  {  // Real transforms: D2Z of two real fields (batch 2) and the Z2D inverse of one field.
    cufftHandle d2z = plan_many(2, nn, real_nn, 1, n * 2 * h, half_nn, 1, n * h, CUFFT_D2Z, 2);
    cufftHandle z2d_in = 0, z2d_out = 0;
    fft_check(cufftPlan2d(&z2d_in, n, n, CUFFT_Z2D), "cufftPlan2d");
    fft_check(cufftPlan2d(&z2d_out, n, n, CUFFT_Z2D), "cufftPlan2d");
    // The padded in-place layout (rows of 2h doubles) fits in a; the dense one needs 2 fields × n².
    row("D2Z 2-D, two real fields (batch 2), in place", 2,
        [&] { cufftExecD2Z(d2z, ar, reinterpret_cast<cufftDoubleComplex*>(ar)); });
    row("Z2D 2-D, one field, out of place (dense real out)", 1, [&] { cufftExecZ2D(z2d_out, b, ar); });
    row("Z2D 2-D, one field, in place (padded rows)", 1,
        [&] { cufftExecZ2D(z2d_in, reinterpret_cast<cufftDoubleComplex*>(br), br); });
    cufftDestroy(d2z);
    cufftDestroy(z2d_in);
    cufftDestroy(z2d_out);
  }
  {  // 1-D Z2D along j only (the half spectrum's last pass shape) for comparison.
    cufftHandle p = plan_many(1, one, one, 1, h, one, 1, n, CUFFT_Z2D, n);
    row("1-D Z2D rows (batch n), out of place", 0.5, [&] { cufftExecZ2D(p, b, ar); });
    cufftDestroy(p);
  }
  cudaFree(a);
  cudaFree(b);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 20;
  std::vector<int> sizes;
  for (int k = 1; k < argc; ++k) {
    const std::string s = argv[k];
    if (s == "--reps" && k + 1 < argc) {
      reps = std::atoi(argv[++k]);
    } else if (s.find_first_not_of("0123456789") == std::string::npos && !s.empty()) {
      sizes.push_back(std::atoi(s.c_str()));
    } else {
      std::fprintf(stderr, "usage: cufft_shapes_bench [--reps R] N...\n");
      return 2;
    }
  }
  if (reps < 1 || std::any_of(sizes.begin(), sizes.end(), [](int n) { return n < 2; })) {
    std::fprintf(stderr, "cufft_shapes_bench: reps must be >= 1 and every N >= 2\n");
    return 2;
  }
  if (sizes.empty()) sizes = {4096, 4864};
  int v = 0;
  cufftGetVersion(&v);
  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("cuFFT %d on %s\n", v, prop.name);
  for (int n : sizes) run(n, reps);
  return 0;
}
