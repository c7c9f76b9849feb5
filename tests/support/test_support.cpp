#include "support/test_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/halo/registry.hpp"
#include "beatnik/comm/migrate/registry.hpp"
#include "beatnik/comm/ring/registry.hpp"
#include "beatnik/io/state_csv.hpp"

namespace beatnik::test {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

app::Options small_options(int nodes) {
  app::Options o;
  o.nodes = nodes;
  o.fftw_plan = "estimate";
  o.progress_every = 0;
  return o;
}

app::Options readme_example2_options(int nodes) {
  app::Options o = small_options(nodes);
  o.profile = "beatnik";
  o.order = "high";
  o.initial_condition = "sech2";
  o.magnitude = 0.1;
  o.period = 9.0;
  o.boundary = "free";
  o.atwood = 0.15;
  o.mu = 2.0;
  o.epsilon = 2.0;
  return o;
}

app::RunConfig config_for(const app::Options& o, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return app::make_run_config(o, size);
}

std::vector<double> run_and_gather(const app::Options& o, long steps, MPI_Comm comm) {
  app::Simulation sim(comm, config_for(o, comm));
  for (long s = 0; s < steps; ++s) sim.step();
  return io::gather_state(sim.mesh(), sim.state());
}

std::vector<double> serial_reference(const app::Options& o, long steps) {
  app::Options serial = o;
  serial.ranks_grid.clear();
  if (world_rank() != 0) return {};
  return run_and_gather(serial, steps, MPI_COMM_SELF);
}

double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b, int stride) {
  if (a.size() != b.size()) return HUGE_VAL;
  double worst = 0;
  for (int c = 0; c < stride; ++c) {
    double d = 0, m = 0;
    for (size_t k = c; k < a.size(); k += stride) {
      d = std::max(d, std::fabs(a[k] - b[k]));
      m = std::max(m, std::fabs(b[k]));
    }
    worst = std::max(worst, m > 0 ? d / m : d);
  }
  return worst;
}

bool all_ranks(bool ok) {
  int v = ok ? 1 : 0, r = 0;
  MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return r == 1;
}

std::vector<std::array<int, 2>> process_grids() {
  std::vector<std::array<int, 2>> g;
  const int p = world_size();
  for (int a = 1; a <= p; ++a)
    if (p % a == 0) g.push_back({a, p / a});
  return g;
}

std::vector<fft::FftOptions> all_fft_strategies() {
  return fft::FftOptions::every_combination({comm::ExchangeAlgorithm::Alltoallv, comm::ExchangeAlgorithm::Alltoall,
                                             comm::ExchangeAlgorithm::P2P, comm::ExchangeAlgorithm::P2PPipelined},
                                            fft::PlanEffort::Estimate);
}

HostDevicePair host_and_device(const app::Options& base, const std::string& transport, double perturb) {
  app::Options h = base, d = base;
  h.exec = "host";
  d.exec = "cuda";
  // A strategy that moves device memory itself has no host run: the host runs the default.
  for (const auto& e : comm::halo::registry())
    if (e.device_direct && base.halo_strategy == e.name) h.halo_strategy = comm::halo::kDefaultStrategy;
  d.gpu_transport = transport;
  d.magnitude *= 1.0 + perturb;
  HostDevicePair p;
  try {  // the host run too: a strategy this MPI library cannot run is refused on either side
    p.host = std::make_unique<app::Simulation>(MPI_COMM_WORLD, config_for(h, MPI_COMM_WORLD));
    p.dev = std::make_unique<app::Simulation>(MPI_COMM_WORLD, config_for(d, MPI_COMM_WORLD));
  } catch (const NotAvailable& e) {
    p.refusal = e.what();
  }
  return p;
}

bool expected_transport_refusal(const std::string& what, const std::string& why) {
  const bool expected = why.find("not CUDA-aware") != std::string::npos ||
                        why.find("one GPU per rank") != std::string::npos ||
                        why.find("without NCCL") != std::string::npos ||
                        // an MPI library without one-sided support for this memory (RMA strategies)
                        (why.find("cannot make the") != std::string::npos && why.find("window") != std::string::npos);
  if (expected && world_rank() == 0) std::printf("[ NOT RUN  ] %s: %s\n", what.c_str(), why.c_str());
  return expected;
}

MPI_Comm first_ranks(int k) {
  MPI_Comm c;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() < k ? 0 : MPI_UNDEFINED, world_rank(), &c);
  return c;
}

std::vector<std::string> migrate_strategies() {
  std::vector<std::string> names;
  for (const auto& e : comm::migrate::registry())
    if (e.unavailable().empty()) names.push_back(e.name);
  return names;
}

std::vector<std::string> ring_strategies(comm::TransportKind transport) {
  std::vector<std::string> names;
  for (const auto& e : comm::ring::registry())
    if (e.unavailable(transport).empty()) names.push_back(e.name);
  return names;
}

std::vector<std::string> halo_strategies() {
  std::vector<std::string> names;
  for (const auto& e : comm::halo::registry())
    if (e.unavailable(comm::TransportKind::Host).empty()) names.push_back(e.name);
  return names;
}

}  // namespace beatnik::test
