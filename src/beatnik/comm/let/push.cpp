#include "beatnik/comm/let/push.hpp"

#include <algorithm>
#include <numeric>

#include "beatnik/exec/scratch.hpp"

namespace beatnik::comm::let {

namespace {
long total(const std::vector<long>& counts) { return std::accumulate(counts.begin(), counts.end(), 0L); }
// Page-locked memory grows by a quarter again: pinning is slow, and the blocks' size changes
// by a few per cent from call to call.
double* pinned(PinnedBuffer& b, long doubles) {
  const std::size_t bytes = std::size_t(doubles) * sizeof(double);
  if (b.size() < bytes) b.reserve(bytes + bytes / 4);
  return reinterpret_cast<double*>(b.data());
}
}  // namespace

Push::Push(const Setup& s, const char* migrate_strategy) : nccl_(push_by_nccl(s.transport)) {
  const exec::Space space = nccl_ ? exec::Space::Device : exec::Space::Host;
  migrator_ = std::make_unique<Migrator>(s.comm, space, migrate_strategy, s.locality, s.stats,
                                         nccl_ ? s.transport : nullptr);
}

double* Push::send_buffer(long doubles) {
  return nccl_ ? pinned(send_pinned_, doubles) : Strategy::send_buffer(doubles);
}

const double* Push::exchange(const std::vector<long>& send_counts, const double* send, std::vector<long>& recv_counts) {
  if (!nccl_) {
    migrator_->exchange(send_counts, send, 1, recv_counts, recv_, "let");
    return recv_.data();
  }
  const long n = total(send_counts);
  exec::grow(dev_send_, exec::Space::Device, std::size_t(n));
  if (n > 0) exec::copy(dev_send_.data(), exec::Space::Device, send, exec::Space::Host, std::size_t(n));
  migrator_->exchange(send_counts, dev_send_.data(), 1, recv_counts, dev_recv_, "let");
  const long m = total(recv_counts);
  double* out = pinned(recv_pinned_, m);
  // After the exchange: the copy is queued behind it on the kernel stream (the transport's join).
  if (m > 0) exec::copy(out, exec::Space::Host, dev_recv_.data(), exec::Space::Device, std::size_t(m));
  return out;
}

double* Push::device_send_buffer(long doubles) {
  if (!nccl_) return Strategy::device_send_buffer(doubles);
  exec::grow(dev_send_, exec::Space::Device, std::size_t(std::max(doubles, 1L)));
  return dev_send_.data();
}

const double* Push::exchange_device(const std::vector<long>& send_counts, std::vector<long>& recv_counts, long head,
                                    const std::function<long(const double*)>& host_part) {
  if (!nccl_) return Strategy::exchange_device(send_counts, recv_counts, head, host_part);
  migrator_->exchange(send_counts, dev_send_.data(), 1, recv_counts, dev_recv_, "let");
  double* out = pinned(recv_pinned_, total(recv_counts));
  // Each block's head, then the rest of what the host reads (queued behind the exchange, as
  // exchange()'s copy back).
  std::vector<long> at(recv_counts.size() + 1, 0);
  for (size_t r = 0; r < recv_counts.size(); ++r) at[r + 1] = at[r] + recv_counts[r];
  for (size_t r = 0; r < recv_counts.size(); ++r)
    if (recv_counts[r] > 0)
      exec::copy(out + at[r], exec::Space::Host, dev_recv_.data() + at[r], exec::Space::Device,
                 std::size_t(std::min(head, recv_counts[r])));
  for (size_t r = 0; r < recv_counts.size(); ++r) {
    if (recv_counts[r] <= head) continue;
    const long k = std::min(host_part(out + at[r]), recv_counts[r]);
    if (k > head)
      exec::copy(out + at[r] + head, exec::Space::Host, dev_recv_.data() + at[r] + head, exec::Space::Device,
                 std::size_t(k - head));
  }
  return out;
}

std::size_t Push::buffer_bytes() const {
  return Strategy::buffer_bytes() + send_pinned_.size() + recv_pinned_.size() +
         (dev_send_.size() + dev_recv_.size()) * sizeof(double);
}

}  // namespace beatnik::comm::let
