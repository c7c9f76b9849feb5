#!/usr/bin/env bash
# The tree solver's device sums (docs/tree.md "On the GPU"): build, the device test under each
# stream-kernel variant (BEATNIK_TREE_SUMS_KERNEL 8 (the default) on 1 and 2 ranks, 4 (the
# library's rsqrt), 1 and 2 on one), then 1024² periodic (TOL 1e-6) with the first kernel
# (variant 0), variant 4 and the default one (ALL_VARIANTS=1: also 1, 2, 5 and 7), and a run that
# replays its 4th call's launches with every variant, one launch after another, then prints the
# counters (kernel-only rates, BEATNIK_TREE_SUMS_BENCH; its step times include the replays).
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
# The default variant on 1 and 2 ranks, the others on 1 rank.
for v in 8 4 1 2; do
  sel=br_tree_device; [ "$v" != 8 ] && sel=br_tree_device.np1
  BEATNIK_TREE_SUMS_KERNEL=$v ctest --test-dir build/cuda -R "$sel" --timeout 120 -V >"$out/ctest$v.log" 2>&1
  echo "ctest variant $v: rc $? $(grep -h 'tests passed' "$out/ctest$v.log")"; grep -h 'compared' "$out/ctest$v.log" | sort | uniq -c | head -12
done
run() {  # run NAME [env ...]
  local name=$1; shift
  env "$@" timeout 240 "$here/mpirun.sh" 1 build/cuda/beatnik -O high -n "$n" -b periodic -I cos -t 2 --warmup 1 \
    -S tree -x cuda --progress-every 0 --results "$out/$name.json" >"$out/$name.log" 2>&1
  echo "run $name: rc $?"
}
run v0 BEATNIK_TREE_SUMS_KERNEL=0
run v4 BEATNIK_TREE_SUMS_KERNEL=4
run v8 BEATNIK_TREE_SUMS_KERNEL=8
[ "${ALL_VARIANTS:-0}" = 1 ] && for v in 1 2 5 7; do run v$v BEATNIK_TREE_SUMS_KERNEL=$v; done
run bench BEATNIK_TREE_SUMS_BENCH=4
grep -h 'tree-sums-bench' "$out/bench.log"
python3 "$here/gpu_tree_sums_report.py" "$out"/v[0-9].json
