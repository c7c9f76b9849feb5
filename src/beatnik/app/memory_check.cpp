#include "beatnik/app/memory_check.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

#include "beatnik/base/error.hpp"
#include "beatnik/exec/space.hpp"

namespace beatnik::app {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The cgroup (v2, then v1) memory limit of this process, 0 when none is set.
std::size_t cgroup_limit() {
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream f(path);
    std::string v;
    if (f >> v && v != "max") {
      const double b = std::strtod(v.c_str(), nullptr);
      if (b > 0 && b < 1e18) return static_cast<std::size_t>(b);
    }
  }
  return 0;
}

std::size_t mem_available() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  double kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return static_cast<std::size_t>(kb * 1024.0);
  return 0;
}

}  // namespace

double estimated_bytes_per_node(const RunConfig& c) {
  // Measured (host buffers, n = 64..256): low 179-187, medium 403, high exact 355, cutoff 610-914
  // (the ghost share shrinks as n grows).
  if (c.model.order == model::Order::Low) return 170;
  if (c.model.br.cutoff_solver) return 550;
  return c.model.order == model::Order::Medium ? 380 : 330;
}

std::size_t host_bytes_for_rank(int ranks_on_node) {
  std::size_t avail = mem_available();
  const std::size_t limit = cgroup_limit();
  if (limit > 0) avail = avail > 0 ? std::min(avail, limit) : limit;
  return avail / static_cast<std::size_t>(std::max(ranks_on_node, 1));
}

void check_memory_fits(const comm::Context& ctx, const RunConfig& c, std::size_t device_free) {
  const double per_node = estimated_bytes_per_node(c);
  const auto& n = c.geometry.nodes;
  // The busiest rank's owned block with two ghost layers on every side.
  const double ni = std::ceil(double(n[0]) / c.procs[0]) + 4, nj = std::ceil(double(n[1]) / c.procs[1]) + 4;
  const double need = per_node * ni * nj;
  const bool device = c.space == exec::Space::Device;
  double have = double(host_bytes_for_rank(ctx.node_local_size()));
  const char* where = "host memory";
  if (device) {
    const int gpus = std::max(exec::device_count(), 1);
    const int sharing = (ctx.node_local_size() + gpus - 1) / gpus;
    have = double(device_free) / sharing;
    where = "free device memory";
  }
  // Largest n with a square mesh of n² nodes over all ranks that fits on every rank.
  double fit_n = have > 0 ? std::floor(std::sqrt(have / per_node * ctx.size())) : 1e300;
  double worst[2] = {have > 0 && need > have ? 1.0 : 0.0, -fit_n};
  MPI_Allreduce(MPI_IN_PLACE, worst, 2, MPI_DOUBLE, MPI_MAX, ctx.comm());
  if (worst[0] == 0) return;
  fit_n = -worst[1];
  throw InputError(fmt::format(
      "-n {} does not fit: the busiest rank needs about {:.3g} GiB ({:.0f} B per node x {:.0f} x {:.0f} nodes) "
      "but has about {:.3g} GiB of {} ({} rank(s) on this node{}); the largest n that fits on {} rank(s) is "
      "about {:.0f}",
      c.nodes, need / kGiB, per_node, ni, nj, have / kGiB, where, ctx.node_local_size(),
      device ? " share its GPUs" : "", ctx.size(), std::max(fit_n - 8.0, 4.0)));
}

}  // namespace beatnik::app
