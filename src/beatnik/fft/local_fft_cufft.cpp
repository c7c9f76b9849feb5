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
}  // namespace

std::unique_ptr<LocalFFT> make_cufft_batch(const BatchShape& s) { return std::make_unique<CufftBatch>(s); }
#else
std::unique_ptr<LocalFFT> make_cufft_batch(const BatchShape&) {
  throw NotAvailable("cuFFT: this beatnik was built without the CUDA backend");
}
#endif

}  // namespace beatnik::fft
