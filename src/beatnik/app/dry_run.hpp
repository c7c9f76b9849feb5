#pragma once
// --dry-run --np P (docs/skeleton-and-dry-run.md): plans every pattern's messages for P ranks in
// this one process (app/dry_run_plan.hpp), prints per pattern the bytes and messages per rank
// (on-node / off-node), the largest degree, and with --results FILE writes a results document
// whose `communication` section has the form of a real run's, plus the sparse rank-pair matrix.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "beatnik/app/dry_run_plan.hpp"
#include "beatnik/app/options.hpp"

namespace beatnik::app {

// The `communication` section of a run of `steps` measured steps, from the plan (the same
// fields and meaning as results_document's).
nlohmann::json dry_run_communication(const DryRunPlan& plan, long steps);

// The configuration a dry run plans for `np` ranks: make_run_config's, except that a -x cuda run
// is modelled in a build without CUDA too (its messages need no device): the options are checked
// as a host run's, then the device's own refusals that bear on what travels are repeated
// (--gpu-transport names, --halo-strategy against the transport, --fft-exchange nccl without the
// NCCL transport, -S tree). Throws InputError / NotAvailable like make_run_config.
RunConfig dry_run_config(const Options& o, int np);

// The whole program of a dry run: exit code (0, or 2 with one message on bad input, 5 when the
// results file cannot be written). mpi_size: ranks this process runs among (must be 1).
int run_dry_run(const Options& o, int mpi_size, const std::vector<std::string>& argv);

}  // namespace beatnik::app
