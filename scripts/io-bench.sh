#!/usr/bin/env bash
# Output bandwidth and the cost of mesh output on the step time (docs/io.md, "Performance").
#   scripts/io-bench.sh [DIR] [N] [RANKS] [STEPS] [EXTRA beatnik options...]
# Defaults: DIR=./io-bench, n = 1024 on 2 ranks, 20 steps, host. Writes every EVERY steps
# (default 1: -F 1) in each mode, then compares with dd writing the same bytes to the same disk.
# On one GPU (n = 4096, output every 10 steps):
#   EVERY=10 BEATNIK=build/cuda/beatnik scripts/io-bench.sh /local/scratch/io 4096 1 20 -x cuda
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-io-bench}; n=${2:-1024}; ranks=${3:-2}; steps=${4:-20}; shift $(( $# < 4 ? $# : 4 ))
extra=("$@")
every=${EVERY:-1}
beatnik=${BEATNIK:-$here/build/host/beatnik}
mkdir -p "$dir"
# A stable dt at this n (the default crosses the viscous limit above n ~ 350).
dt=$(python3 -c "print(0.8 * 2.51 * (2.0/$n)**2 / (4 * 1.0 * 2.0/$n))")
common=(-n "$n" -t "$steps" -d "$dt" --fftw-plan estimate --progress-every 0 -o "$dir/out")
run() {  # label, options...
  local label=$1; shift
  rm -rf "$dir/out"
  "$here/scripts/mpirun.sh" "$ranks" "$beatnik" "${common[@]}" "${extra[@]}" --results "$dir/$label.json" "$@" >"$dir/$label.log" 2>&1 ||
    return 1
  python3 - "$dir/$label.json" "$label" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); p = d["performance"]; io = d.get("io", {}).get("mesh", {})
step = d["timers"]["regions"]["step"]["median"]; mesh = d["timers"]["regions"].get("io.mesh", {}).get("median", 0.0)
print(f"{sys.argv[2]:<22} step {step:.4e} s  io.mesh {mesh:.4e} s/step  step+io {step + mesh:.4e} s  "
      f"bytes {io.get('bytes', 0)}  {io.get('GB_per_s', 0):.3f} GB/s")
PY
}
run none
run collective -F "$every" --hdf5-mode collective || echo "collective: not in this build"
run blocks -F "$every" --hdf5-mode blocks
run async -F "$every" --async-output
bytes=$(python3 -c "import json; print(json.load(open('$dir/blocks.json'))['io']['mesh']['bytes'])")
mb=$(( bytes / 1048576 + 1 ))
for sync in "" "conv=fdatasync"; do
  rm -f "$dir/dd.bin"
  out=$(dd if=/dev/zero of="$dir/dd.bin" bs=1M count="$mb" $sync 2>&1 | tail -1)
  echo "dd ${sync:-(page cache)}: $out"
done
rm -rf "$dir/dd.bin" "$dir/out"
