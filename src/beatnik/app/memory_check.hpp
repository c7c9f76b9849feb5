#pragma once
// Refusing a run that cannot fit, before anything large is allocated: an impossible -n ends with
// exit 2 and the largest n that would fit, not with an allocation failure after set-up.
#include <cstddef>

#include "beatnik/app/problem.hpp"
#include "beatnik/comm/context.hpp"

namespace beatnik::app {

// Bytes that beatnik's own buffers take per owned node (ghosts included) for this configuration:
// the figures the summary prints ("memory per node ... in beatnik buffers"), measured at several
// n and rounded down, so that a run that fits is never refused.
double estimated_bytes_per_node(const RunConfig& c);

// Memory this process may use: MemAvailable (/proc/meminfo) and the cgroup's limit, shared by the
// ranks on this node. 0 where the system does not say.
std::size_t host_bytes_for_rank(int ranks_on_node);

// Throws InputError on every rank when any rank's estimate exceeds what it has: host memory, and
// on -x cuda `device_free` (free device memory after binding) shared by the ranks on its GPU.
// Collective over ctx.comm().
void check_memory_fits(const comm::Context& ctx, const RunConfig& c, std::size_t device_free);

}  // namespace beatnik::app
