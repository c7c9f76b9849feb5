#!/usr/bin/env bash
# The tree solver's device sums (docs/tree.md "On the GPU"): build, the device test under every
# kernel variant, then 1024² periodic (TOL 1e-6) with the old kernel (variant 0) and the default
# one, the default run replaying its 4th call's launches with every variant (kernel-only rates).
#   scripts/gpu-tree-sums.sh OUT_DIR [N]
set -uo pipefail
out=$1 n=${2:-1024}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
t0=$(date +%s)
cmake --preset cuda -DHDF5_PREFER_PARALLEL=OFF >"$out/cmake.log" 2>&1 &&
  cmake --build --preset cuda -j16 --target beatnik test_br_tree_device >>"$out/cmake.log" 2>&1 ||
  { tail -40 "$out/cmake.log"; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
for v in 0 1 2 4; do
  BEATNIK_TREE_SUMS_KERNEL=$v ctest --test-dir build/cuda -R br_tree_device --output-on-failure >"$out/ctest$v.log" 2>&1
  echo "ctest variant $v: rc $? $(grep -h 'tests passed' "$out/ctest$v.log")"; grep -h 'compared' "$out/ctest$v.log" | head -8
done
run() {  # run NAME [env ...]
  local name=$1; shift
  env "$@" timeout 240 "$here/mpirun.sh" 1 build/cuda/beatnik -O high -n "$n" -b periodic -I cos -t 2 --warmup 1 \
    -S tree -x cuda --progress-every 0 --results "$out/$name.json" >"$out/$name.log" 2>&1
  echo "run $name: rc $?"
}
run v0 BEATNIK_TREE_SUMS_KERNEL=0
run new BEATNIK_TREE_SUMS_BENCH=4
grep -h 'tree-sums-bench' "$out/new.log"
python3 "$here/gpu_tree_sums_report.py" "$out/v0.json" "$out/new.json"
