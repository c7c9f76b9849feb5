#pragma once
// Exclusive prefix sums of long integers, host or device: where each item's variable-length
// output starts (e.g. the ghost copies of each particle). Scratch is kept across calls.
#include "beatnik/exec/memory.hpp"

namespace beatnik::exec {

class ExclusiveScan {
 public:
  explicit ExclusiveScan(Space s) : space_(s), scratch_(s, 0) {}
  // out[k] = in[0] + ... + in[k−1] for k = 0..n (n + 1 entries; out[n] is the total), both in
  // the scan's space, not aliased. Returns the total on the host.
  long run(const long* in, long* out, long n);
  // The same without reading the total back: queued on the work stream, nothing waited for
  // (on the host: done when it returns).
  void queue(const long* in, long* out, long n);

 private:
  Space space_;
  Buffer<char> scratch_;
};

}  // namespace beatnik::exec
