#pragma once
// How the ring pass moves blocks (ring_pass.hpp): blocking Sendrecv per round, or overlap.
namespace beatnik::comm {

enum class RingStrategy { Blocking, Overlap };
inline const char* to_string(RingStrategy s) { return s == RingStrategy::Blocking ? "blocking" : "overlap"; }

}  // namespace beatnik::comm
