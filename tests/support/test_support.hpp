#pragma once
// Shared helpers of the tests: small run configurations, running a simulation on a
// communicator, gathering fields, and comparing against serial references.
#include <mpi.h>

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "beatnik/app/problem.hpp"
#include "beatnik/app/simulation.hpp"
#include "beatnik/comm/transport.hpp"
#include "beatnik/fft/fft_options.hpp"

namespace beatnik::test {

int world_rank();
int world_size();

// Options for a small, fast run (FFTW estimate plans, no progress output).
app::Options small_options(int nodes = 32);

// The reference's README example 2 (sech² roll-up, MODEL.md §2.2) in the beatnik profile:
// -O high -n nodes -I sech2 -m 0.1 -p 9 -b free -a 0.15 -M 2 -e 2.
app::Options readme_example2_options(int nodes);

// Configuration for `comm` (its size picks the process grid unless options say otherwise).
app::RunConfig config_for(const app::Options& o, MPI_Comm comm);

// Runs `steps` steps on `comm`; returns the gathered state (5 values per node in global
// (i, j) order) on the communicator's rank 0, empty elsewhere.
std::vector<double> run_and_gather(const app::Options& o, long steps, MPI_Comm comm = MPI_COMM_WORLD);

// The same run on one rank (MPI_COMM_SELF), computed on world rank 0 only.
std::vector<double> serial_reference(const app::Options& o, long steps);

// max |a - b| / max |b| over all entries (component by component when stride > 1).
double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b, int stride = 1);

// True on every rank if `ok` is true on every rank (so ranks agree before asserting).
bool all_ranks(bool ok);

// Every process grid p x q with p·q = world size (1xP, ..., Px1).
std::vector<std::array<int, 2>> process_grids();

// Every MPI exchange algorithm x intermediate x reorder x spectrum layout (32 FFT plans),
// with FFTW estimate planning.
std::vector<fft::FftOptions> all_fft_strategies();

// GPU tests: the same options run on the host and, with `transport`, on the device. `dev` is
// null and `refusal` says why when the device run is refused (NotAvailable, raised on every
// rank alike). `perturb` scales the device run's initial amplitude by 1 + perturb (to show a
// comparison has teeth).
struct HostDevicePair {
  std::unique_ptr<app::Simulation> host, dev;
  std::string refusal;
};
HostDevicePair host_and_device(const app::Options& base, const std::string& transport, double perturb = 0.0);

// GPU tests: is `why` (a transport's refusal) one this machine may legitimately give (MPI not
// CUDA-aware, ranks sharing a GPU, no NCCL, no RMA window over this memory)? Rank 0 prints "[ NOT RUN  ] what: why" when so.
bool expected_transport_refusal(const std::string& what, const std::string& why);

// Names of the migration strategies this build and MPI library can run (the registry's).
std::vector<std::string> migrate_strategies();

// Names of the ring-pass strategies (comm/ring/registry) that can move blocks over `transport`,
// in registry order: the test matrix of the exact solver picks up a new strategy by itself.
std::vector<std::string> ring_strategies(comm::TransportKind transport = comm::TransportKind::Host);

// Names of the halo strategies this MPI library can run on the host (the registry's).
std::vector<std::string> halo_strategies();

// Sub-communicator of the first k world ranks (MPI_COMM_NULL on the others).
MPI_Comm first_ranks(int k);

}  // namespace beatnik::test
