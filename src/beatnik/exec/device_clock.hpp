#pragma once
// The CUDA-event DeviceClock of the timers (base/timers.hpp): a pool of events, made as the
// first step needs them and reused every step after.
#include <memory>

#include "beatnik/base/timers.hpp"

namespace beatnik::exec {

// Throws NotAvailable in a build without CUDA.
std::unique_ptr<DeviceClock> make_cuda_event_clock();

}  // namespace beatnik::exec
