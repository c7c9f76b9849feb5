// cuFFT backend of LocalFFT (device memory). Built only with the CUDA backend; otherwise asking
// for it says so.
#include <memory>
#include <string>

#include "beatnik/base/error.hpp"
#include "beatnik/fft/local_fft.hpp"

#if defined(BEATNIK_WITH_CUDA)
#include <cufft.h>
#endif

namespace beatnik::fft {

#if defined(BEATNIK_WITH_CUDA)
namespace {
void check(cufftResult r, const char* what) {
  if (r != CUFFT_SUCCESS) throw Error(std::string("cuFFT error ") + std::to_string(int(r)) + " in " + what);
}
class CufftBatch final : public LocalFFT {
 public:
  explicit CufftBatch(const BatchShape& s) {
    int n[1] = {s.n};
    int embed[1] = {s.n};
    check(cufftPlanMany(&plan_, 1, n, embed, static_cast<int>(s.stride), static_cast<int>(s.dist), embed,
                        static_cast<int>(s.stride), static_cast<int>(s.dist), CUFFT_Z2Z, s.howmany),
          "cufftPlanMany");
  }
  ~CufftBatch() override { cufftDestroy(plan_); }
  void forward(cplx* d) override {
    auto* a = reinterpret_cast<cufftDoubleComplex*>(d);
    check(cufftExecZ2Z(plan_, a, a, CUFFT_FORWARD), "cufftExecZ2Z");
  }
  void inverse(cplx* d) override {
    auto* a = reinterpret_cast<cufftDoubleComplex*>(d);
    check(cufftExecZ2Z(plan_, a, a, CUFFT_INVERSE), "cufftExecZ2Z");
  }
  std::string library() const override {
    int v = 0;
    cufftGetVersion(&v);
    return "cuFFT " + std::to_string(v);
  }

 private:
  cufftHandle plan_ = 0;
};

// D2Z of field 1 (real parts) and field 2 (imaginary parts, one double further) with one plan
// run twice; Z2D of field 1 into the real parts.
class CufftRealBatch final : public LocalRealFFT {
 public:
  explicit CufftRealBatch(const RealBatchShape& s) : field_(s.field) {
    int n[1] = {s.n};
    int embed[1] = {s.n};
    check(cufftPlanMany(&fwd_, 1, n, embed, static_cast<int>(2 * s.full_stride), static_cast<int>(2 * s.full_dist),
                        embed, static_cast<int>(s.half_stride), static_cast<int>(s.half_dist), CUFFT_D2Z, s.howmany),
          "cufftPlanMany(D2Z)");
    check(cufftPlanMany(&inv_, 1, n, embed, static_cast<int>(s.half_stride), static_cast<int>(s.half_dist), embed,
                        static_cast<int>(2 * s.full_stride), static_cast<int>(2 * s.full_dist), CUFFT_Z2D, s.howmany),
          "cufftPlanMany(Z2D)");
  }
  ~CufftRealBatch() override {
    cufftDestroy(fwd_);
    cufftDestroy(inv_);
  }
  void forward(const cplx* full, cplx* half) override {
    auto* re = const_cast<double*>(reinterpret_cast<const double*>(full));
    auto* h = reinterpret_cast<cufftDoubleComplex*>(half);
    check(cufftExecD2Z(fwd_, re, h), "cufftExecD2Z");
    check(cufftExecD2Z(fwd_, re + 1, h + field_), "cufftExecD2Z");
  }
  void inverse(cplx* half, cplx* full) override {
    check(cufftExecZ2D(inv_, reinterpret_cast<cufftDoubleComplex*>(half), reinterpret_cast<double*>(full)),
          "cufftExecZ2D");
  }

 private:
  cufftHandle fwd_ = 0, inv_ = 0;
  long field_;
};
}  // namespace

std::unique_ptr<LocalFFT> make_cufft_batch(const BatchShape& s) { return std::make_unique<CufftBatch>(s); }
std::unique_ptr<LocalRealFFT> make_cufft_real_batch(const RealBatchShape& s) {
  return std::make_unique<CufftRealBatch>(s);
}
#else
std::unique_ptr<LocalFFT> make_cufft_batch(const BatchShape&) {
  throw NotAvailable("cuFFT: this beatnik was built without the CUDA backend");
}
std::unique_ptr<LocalRealFFT> make_cufft_real_batch(const RealBatchShape&) {
  throw NotAvailable("cuFFT: this beatnik was built without the CUDA backend");
}
#endif

}  // namespace beatnik::fft
