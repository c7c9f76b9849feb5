#pragma once
// Distributed 2D complex FFT of a block-decomposed array: local batched 1D transforms composed
// with comm::Redistributor reshapes, in the order the FftOptions ask for. The caller supplies
// element functions for the first pack (block data -> complex) and the last unpack, so building
// the complex input and taking the real output cost no extra pass over memory.
#include <mpi.h>

#include <array>
#include <memory>
#include <vector>

#include "beatnik/base/box.hpp"
#include "beatnik/base/complex.hpp"
#include "beatnik/base/compute_gate.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/comm/context.hpp"
#include "beatnik/comm/redistributor.hpp"
#include "beatnik/fft/fft_options.hpp"
#include "beatnik/fft/fft_plan.hpp"
#include "beatnik/fft/local_c2r.hpp"
#include "beatnik/fft/local_fft.hpp"

namespace beatnik::fft {

// Two half-spectrum values travelling together (the forward half-spectrum reshapes).
struct CplxPair {
  cplx a, b;
};

class DistributedFFT {
 public:
  // `grid_comm` is the Cartesian communicator whose rank r owns `blocks[r]`; `procs` is its shape.
  DistributedFFT(const comm::Context& ctx, MPI_Comm grid_comm, std::array<int, 2> global,
                 std::array<int, 2> procs, const std::vector<Box2>& blocks, exec::Space space,
                 const FftOptions& options, comm::CommStats* stats, Timers* timers,
                 comm::Transport* transport = nullptr, const ComputeGate* gate = nullptr);
  ~DistributedFFT();
  DistributedFFT(const DistributedFFT&) = delete;
  DistributedFFT& operator=(const DistributedFFT&) = delete;

  // Forward transform of the block data given by pack(i, j) -> cplx (global indices of this
  // rank's block). The result is in spectrum(), laid out as spectral_layout() says. With
  // options().half_spectrum the real and imaginary parts are transformed as two real fields:
  // spectrum() holds FFT(Re) and spectrum_second() FFT(Im), both on the Hermitian half
  // (spectral_global(): the first dimension cut to n/2 + 1).
  template <class Pack>
  void forward(Pack pack);
  // Inverse transform of spectrum() (unnormalised); unpack(i, j, cplx) receives the block data.
  // Full spectrum only.
  template <class Unpack>
  void inverse(Unpack unpack) {
    inverse_as<cplx>(unpack, [] BEATNIK_HOST_DEVICE(cplx v) { return v; });
  }
  // The same when only the real part of the result is wanted (a real field, such as R·w):
  // unpack(i, j, double). The last reshape carries the real parts alone, half the bytes. With
  // the half spectrum, spectrum() must hold the Hermitian half of a real field's spectrum; it is
  // transformed complex to real (and overwritten).
  template <class Unpack>
  void inverse_real(Unpack unpack) {
    inverse_as<double>(unpack, [] BEATNIK_HOST_DEVICE(cplx v) { return v.re; });
  }

  // The 2-D plan's real inverse from the Hermitian half (FftOptions::inverse_2d, chosen when the
  // plan is made; docs/gpu-small.md): to get Re(inverse of X) for a full spectrum X, the caller
  // writes half_2d() with Y(k) = (X(k) + conj X(-k))/2 for k = (p, q), q < n1/2 + 1 (element
  // p*(n1/2 + 1) + q) and calls inverse_real_from_half(unpack), which transforms Y complex to real
  // (overwriting it): half the inverse's bytes and flops. Only where inverse_from_half_2d().
  bool inverse_from_half_2d() const { return c2r_2d_ != nullptr; }
  cplx* half_2d() const { return half_.data(); }
  template <class Unpack>
  void inverse_real_from_half(Unpack unpack);

  cplx* spectrum() const { return plan_.half ? half_.data() : work_.data(); }
  // The second field of the half spectrum (same layout as spectrum()); null without it.
  cplx* spectrum_second() const { return plan_.half ? half_.data() + field_ : nullptr; }
  bool half_spectrum() const { return plan_.half; }
  // The spectrum's index space: global(), or with the half spectrum its Hermitian half.
  std::array<int, 2> spectral_global() const { return plan_.spectral_global; }
  // Global spectral index box of this rank and where each element sits in spectrum().
  ArrayLayout2 spectral_layout() const { return spectral_; }
  std::array<int, 2> global() const { return global_; }
  const FftOptions& options() const { return options_; }
  // The reshapes and transforms this rank makes (fft_plan.hpp).
  const FftPlan& plan() const { return plan_; }
  // The two local passes run as one 2-D transform (--fft-2d and the whole array on this rank).
  bool whole_array_2d() const { return plan_2d_; }
  // The half plan's last inverse runs FFTW's complex-to-real batch here (host; chosen when made).
  bool inverse_c2r() const { return c2r_ != nullptr; }
  // Bytes of the work and communication buffers (memory report).
  size_t buffer_bytes() const;
  // The reshapes in forward order (the benchmark replays their exchanges alone).
  const std::vector<std::unique_ptr<comm::Redistributor>>& reshapes() const { return reshapes_; }

 public:
  struct Step {
    int reshape = -1;  // index into reshapes_, or -1
    int fft = -1;      // index into ffts_, or -1
    ArrayLayout2 from, to;  // work-array layouts on both sides of a reshape (forward direction)
    // The reshape's communicator has one rank: nothing travels, the data only changes layout
    // (one rank, or a pencil row/column of one). Done as one direct pass (or none) instead of
    // pack + unpack through the message buffer.
    bool local = false;
    bool half = false;   // works on the half array (FftPlan::half, steps after the real FFT)
    bool real = false;   // the half plan's first transform: from = full lines, to = their half
  };
  // One reshape between two work-array layouts (public only because nvcc's extended lambdas
  // may not live in private member functions).
  void work_to_work(const Step& s, bool reverse);
  // The same on the half array: forward two fields (CplxPair), inverse the first field.
  void half_to_half(const Step& s, bool reverse);
  // The local transforms of one step (both fields forward on the half array).
  void local_fft(const Step& s, bool inverse);
  // The half plan's first transform around its complex one: after it (forward) the Hermitian
  // halves of the real and imaginary parts' transforms, work -> half array; before it (inverse)
  // the Hermitian line from the first field's half, half -> work array.
  void split_halves(const Step& s);
  void hermitian_lines(const Step& s);
  C2RShape c2r_shape(const Step& s) const;
  void choose_c2r(const Step& s);  // c2r_ where it beats hermitian_lines + the complex inverse
  void choose_c2r_2d();             // c2r_2d_ as FftOptions::inverse_2d asks (auto: the faster)
  // Accounting of a local reshape as the redistributor would do it (a message to self).
  void count_local(const Step& s, long elem_bytes = sizeof(cplx)) const;
  // inverse() and inverse_real(): take(cplx) -> T is what the last reshape carries.
  template <class T, class Unpack, class Take>
  void inverse_as(Unpack unpack, Take take);

 private:
  void add_reshape(MPI_Comm comm, const std::vector<Box2>& from, const std::vector<Box2>& to,
                   const ArrayLayout2& from_layout, const ArrayLayout2& to_layout);
  void add_fft(const BatchShape& shape);
  // --fft-2d: the plan's two passes over the whole array become one 2-D transform (true if so).
  bool merge_whole_array_passes(const Box2& mine);

  std::array<int, 2> global_;
  exec::Space space_;
  FftOptions options_;
  Timers* timers_;
  std::vector<std::unique_ptr<comm::Redistributor>> reshapes_;
  std::vector<std::unique_ptr<LocalFFT>> ffts_;
  std::unique_ptr<LocalC2R> c2r_;  // host half plan: the last inverse, complex to real (if faster)
  std::unique_ptr<LocalC2R> c2r_2d_;  // 2-D plan: half_ -> work_'s doubles, complex to real
  std::vector<Step> steps_;
  FftPlan plan_;
  std::vector<MPI_Comm> owned_comms_;
  ArrayLayout2 spectral_;
  exec::Buffer<cplx> work_, send_, recv_;
  exec::Buffer<cplx> half_;  // half spectrum: two fields, the second at field_; or half_2d()
  long field_ = 0;

  std::vector<BatchShape> shapes_;  // planned once the work array exists
  bool plan_2d_ = false;            // shapes_[0] stands for one 2-D transform of the whole array
  const comm::Context& ctx_;
  comm::CommStats* stats_;
  comm::Transport* transport_;
  const ComputeGate* gate_;  // skeleton mode: the local transforms stand in
};

template <class Pack>
void DistributedFFT::forward(Pack pack) {
  for (size_t k = 0; k < steps_.size(); ++k) {
    const Step& s = steps_[k];
    if (s.fft >= 0) {
      local_fft(s, false);
    } else if (s.half) {
      half_to_half(s, false);
    } else if (k == 0 && s.local) {
      // Block -> work array in one pass (source and destination are different arrays).
      Timers::Scope t(timers_, "fft.reshape");
      cplx* w = work_.data();
      const StridedIndex to = indexer(s.to);
      const Box2 b = s.to.box;
      exec::parallel_for(space_, exec::Range2{b.lo[0], b.hi[0], b.lo[1], b.hi[1]},
                         [=] BEATNIK_HOST_DEVICE(int i, int j) { w[to(i, j)] = pack(i, j); });
      count_local(s);
    } else if (k == 0) {
      Timers::Scope t(timers_, "fft.reshape");
      cplx* w = work_.data();
      const StridedIndex to = indexer(s.to);
      reshapes_[s.reshape]->execute(send_.data(), recv_.data(), pack,
                                    [=] BEATNIK_HOST_DEVICE(int i, int j, cplx v) { w[to(i, j)] = v; });
    } else {
      work_to_work(s, false);
    }
  }
}

template <class T, class Unpack, class Take>
void DistributedFFT::inverse_as(Unpack unpack, Take take) {
  if (plan_.half && sizeof(T) != sizeof(double))
    throw Error("DistributedFFT: a half-spectrum (r2c) transform has only the real inverse");
  for (size_t k = steps_.size(); k-- > 0;) {
    const Step& s = steps_[k];
    if (s.fft >= 0) {
      local_fft(s, true);
    } else if (s.half) {
      half_to_half(s, true);
    } else if (k == 0 && s.local) {
      Timers::Scope t(timers_, "fft.reshape");
      const cplx* w = work_.data();
      const StridedIndex from = indexer(s.to);
      const Box2 b = s.to.box;
      exec::parallel_for(space_, exec::Range2{b.lo[0], b.hi[0], b.lo[1], b.hi[1]},
                         [=] BEATNIK_HOST_DEVICE(int i, int j) { unpack(i, j, take(w[from(i, j)])); });
      count_local(s, sizeof(T));
    } else if (k == 0) {
      Timers::Scope t(timers_, "fft.reshape");
      const cplx* w = work_.data();
      const StridedIndex from = indexer(s.to);
      // The message buffers hold cplx elements; T is never larger.
      static_assert(sizeof(T) <= sizeof(cplx));
      reshapes_[s.reshape]->execute(
          reinterpret_cast<T*>(send_.data()), reinterpret_cast<T*>(recv_.data()),
          [=] BEATNIK_HOST_DEVICE(int i, int j) { return take(w[from(i, j)]); }, unpack, true);
    } else {
      work_to_work(s, true);
    }
  }
}

template <class Unpack>
void DistributedFFT::inverse_real_from_half(Unpack unpack) {
  if (!c2r_2d_) throw Error("DistributedFFT: this plan has no complex-to-real 2-D inverse");
  {
    Timers::Scope t(timers_, "fft.local");
    if (computes(gate_)) c2r_2d_->run();
    else gate_->stand_in("fft.local");
  }
  // The reals fill the work array's front, i-slow and j-fast over the whole array: the last
  // (local) reshape reads them, as inverse_real() reads the complex array's real parts.
  Timers::Scope t(timers_, "fft.reshape");
  const double* r = reinterpret_cast<const double*>(work_.data());
  const long n1 = global_[1];
  const Box2 b = steps_[0].to.box;
  exec::parallel_for(space_, exec::Range2{b.lo[0], b.hi[0], b.lo[1], b.hi[1]},
                     [=] BEATNIK_HOST_DEVICE(int i, int j) { unpack(i, j, r[i * n1 + j]); });
  count_local(steps_[0], sizeof(double));
}

}  // namespace beatnik::fft
