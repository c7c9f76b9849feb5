#!/usr/bin/env bash
# The GPU tests under NVIDIA's compute-sanitizer (docs/reliability.md shows the results):
# memcheck (out-of-bounds and misaligned accesses, leaks), racecheck (shared-memory hazards) and
# synccheck (barrier misuse) on one rank, over every GPU test binary of BUILD_DIR.
#   scripts/gpu-sanitize.sh BUILD_DIR OUT_DIR [TOOLS]    (TOOLS default: "memcheck racecheck synccheck";
#   TESTS="tests/unit/test_fft_device ..." narrows the binaries)
# One log per tool and test lands in OUT_DIR; one line per run goes to stdout. Exit 1 when any
# run reports an error or fails.
set -uo pipefail
build=$1 out=$2 tools=${3:-memcheck racecheck synccheck}
mkdir -p "$out"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$cs" ] || { echo "compute-sanitizer not found" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=2
tests=(${TESTS:-tests/unit/test_cell_list_device tests/unit/test_fft_device tests/physics/test_device
       tests/physics/test_br_device tests/cuda/test_gpu_vs_host})
status=0
for tool in $tools; do
  extra=()
  # NCCL's start-up probes kernels of other architectures (cudaFuncGetAttributes answers
  # "no kernel image"): API errors are beatnik's own to check (cuda_check), not the sanitizer's.
  [ "$tool" = memcheck ] && extra=(--leak-check full --report-api-errors no)
  for t in "${tests[@]}"; do
    bin=$build/$t
    [ -x "$bin" ] || { echo "$tool $t: not built"; status=1; continue; }
    log=$out/${tool}_$(basename "$t").log
    timeout 900 "$cs" --tool "$tool" "${extra[@]}" --error-exitcode 99 "$bin" >"$log" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
    tests_line=$(grep -E "^\[  (PASSED|FAILED)  \]" "$log" | tr '\n' ' ')
    echo "$tool $(basename "$t"): exit $rc; ${summary:-no summary}; $tests_line"
    [ $rc -eq 0 ] || status=1
  done
done
exit $status
