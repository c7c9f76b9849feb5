#pragma once
// Round r of the ring as one grouped NCCL send/receive (the strategies that support the nccl
// transport share it). Queued on the transport's stream after the device work queued so far
// (the kernel that read the receive slot in round r−1, the pack that wrote the own block);
// join = false leaves the kernel stream free to run the round's computation concurrently until
// the strategy calls transport->nccl_join().
#include "beatnik/comm/ring/ring_strategy.hpp"

namespace beatnik::comm::ring {

inline void nccl_round(const Setup& s, int r, bool join) {
  const Round& x = s.rounds[r];
  const Message send{s.next, 0, x.send_count * long(sizeof(double))};
  const Message recv{s.prev, 0, x.recv_count * long(sizeof(double))};
  s.transport->nccl_exchange(s.comm, x.send, &send, 1, x.recv, &recv, 1, join);
}

}  // namespace beatnik::comm::ring
