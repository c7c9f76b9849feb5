#!/usr/bin/env bash
# mpiexec with the settings a container or a small machine needs: Open MPI as root and more
# ranks than cores are allowed (MPICH ignores these variables). Usage: scripts/mpirun.sh N prog args...
set -euo pipefail
n=$1; shift
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
# OpenMP threads per rank: the cores shared out among the ranks unless the user chose.
if [ -z "${OMP_NUM_THREADS:-}" ]; then
  cores=$(nproc)
  export OMP_NUM_THREADS=$(( cores / n > 0 ? cores / n : 1 ))
fi
# Open MPI binds each rank to one core by default, which would stack a rank's threads on it.
if [ "${OMP_NUM_THREADS}" -gt 1 ] 2>/dev/null; then
  export OMPI_MCA_hwloc_base_binding_policy=${OMPI_MCA_hwloc_base_binding_policy:-none}
  # Several multi-threaded ranks on a node: idle OpenMP threads sleep instead of spinning, so they
  # do not take the cores that other ranks' threads (and their CUDA and NCCL threads) need. At 4
  # GPUs × 16 threads of one 64-core node the tree solver's call went from 0.33–0.52 s to 0.30–0.31
  # (docs/tree-log.md "OpenMP's wait policy at 4 GPUs"); one rank is unaffected.
  [ "$n" -gt 1 ] && export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
fi
exec mpiexec -n "$n" "$@"
