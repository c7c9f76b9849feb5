#!/usr/bin/env bash
# GPU benchmarks of the cutoff Birkhoff-Rott solver (docs/cutoff.md shows the tables this prints).
#   scripts/gpu-cutoff-bench.sh single BUILD_DIR OUT_DIR   one GPU, the paper's per-GPU sizes:
#       768^2 multi-mode cos on a +-3 box with c = 0.2; 512^2 single-mode sech2 (free) with c = 0.5
#   scripts/gpu-cutoff-bench.sh multi BUILD_DIR OUT_DIR [GPUS]   weak scaling of the 768^2 case
#       (-w P: n and the box grow by sqrt(P)) and strong scaling of the 512^2 case on 1..GPUS GPUs,
#       uniform against balanced spatial partition, with the load-imbalance figures
# Results files land in OUT_DIR; one table row per run goes to stdout.
set -uo pipefail
mode=$1 build=$2 out=$3 gpus=${4:-2}
bin=$build/beatnik
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 OMP_NUM_THREADS=1

cos768=(-O high -S cutoff -n 768 -B 3 -c 0.2 -I cos -m 0.05 -p 1)
sech512=(-O high -S cutoff -n 512 -I sech2 -m 0.1 -p 9 -b free -a 0.15 -M 2 -e 2 -c 0.5)

run() {  # name ranks options...
  local name=$1 np=$2
  shift 2
  "$here/mpirun.sh" "$np" "$bin" -x cuda --progress-every 0 --results "$out/$name.json" "$@" >"$out/$name.log" 2>&1 ||
    echo "$name: exit $? (see $out/$name.log)"
  python3 - "$out/$name.json" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["timers"]["regions"]; p = d["performance"]; lb = d.get("load_balance", {}).get("run_mean", {})
med = lambda k: r.get(k, {}).get("median", 0.0)
step = med("step")
search = sum(med("br.cutoff." + k) for k in ("to_spatial", "ghosts", "bin", "to_surface"))
print(f"{sys.argv[2]:<28} {d['decomposition']['ranks']} GPU  {1e3 * p['seconds_per_step']:9.2f} ms/step  "
      f"{p.get('br_pairs_per_second', 0):.3e} pairs/s  compute {1e3 * med('br.cutoff.compute'):8.2f} ms  "
      f"search+migration+ghosts {100 * search / step if step else 0:5.1f} %  "
      f"pairs max/mean {lb.get('pairs', {}).get('max_over_mean', 0):.3f}  "
      f"particles max/mean {lb.get('particles', {}).get('max_over_mean', 0):.3f}")
PY
}

case $mode in
  single)
    run cos768 1 "${cos768[@]}" -t 6
    run cos768_beatnik 1 "${cos768[@]}" -t 6 --profile beatnik
    run sech512 1 "${sech512[@]}" -t 3
    ;;
  multi)
    for p in $(seq 1 "$gpus"); do
      for part in uniform balanced; do
        run "weak_cos768_${p}gpu_$part" "$p" "${cos768[@]}" -w "$p" -t 6 --spatial-partition "$part"
        run "strong_sech512_${p}gpu_$part" "$p" "${sech512[@]}" -t 3 --spatial-partition "$part"
      done
    done
    ;;
  *) echo "usage: $0 single|multi BUILD_DIR OUT_DIR [GPUS]" >&2; exit 2 ;;
esac
