#!/usr/bin/env bash
# A/B of the one-GPU small-mesh and awkward-length switches (docs/gpu-small.md, issue 12):
#   scripts/gpu-small-ab.sh BUILD_DIR OUT_DIR        (e.g. build/cuda /tmp/ab)
# One rank, low order, periodic, the gpu-bench.sh case (-d 0.2312/n), n = 1024, 2048, 4096, 4864,
# each with
#   base         --fft-transform r2c          half spectrum, two 1-D passes, CUDA-event timers
#   c2c+2d       --fft-transform c2c --fft-2d on    one cuFFT 2-D plan (c2c only)
#   c2c+2d+host  --fft-transform c2c --fft-2d on --gpu-timers host   no CUDA events per timer region
#   graph        c2c+2d, the step as one CUDA graph (--gpu-graph on), event timers
#   graph+host   c2c+2d, --gpu-graph on, --gpu-timers host
#   r2c+graph    base with --gpu-graph on
#   graph+z2z    graph with --fft-2d-inverse c2c (the full complex inverse, the defaults before)
#   c2c+2d+z2z   c2c+2d with --fft-2d-inverse c2c (event timers: fft.local per step against c2c+2d)
# Every c2c+2d and graph variant without +z2z runs the default --fft-2d-inverse auto (= c2r on the
# device: the Riesz inverse complex to real). VARIANTS="graph graph+z2z ..." runs only those.
# Every variant without "graph" in its name runs --gpu-graph off. (graph is what the defaults,
# --fft-transform auto --fft-2d auto --gpu-graph auto, run on one GPU.)
# Results files land in OUT_DIR (NAME.json, NAME.log); the table goes to stdout. The bound is
# the passes-as-written traffic bound of gpu_bench_report.py at BW TB/s (default 3.01, the
# H100's measured device-to-device copy; BW=... to change); a 2-D plan counts as its two passes.
set -uo pipefail
[ $# -eq 2 ] || { sed -n 2,20p "$0"; exit 2; }
build=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
bw=${BW:-3.01}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0

variants=("base:--fft-transform r2c --gpu-timers events --gpu-graph off"
          "c2c+2d:--fft-transform c2c --fft-2d on --gpu-timers events --gpu-graph off"
          "c2c+2d+host:--fft-transform c2c --fft-2d on --gpu-timers host --gpu-graph off"
          "graph:--fft-transform c2c --fft-2d on --gpu-timers events --gpu-graph on"
          "graph+host:--fft-transform c2c --fft-2d on --gpu-timers host --gpu-graph on"
          "r2c+graph:--fft-transform r2c --gpu-timers events --gpu-graph on"
          "graph+z2z:--fft-transform c2c --fft-2d on --fft-2d-inverse c2c --gpu-timers events --gpu-graph on"
          "c2c+2d+z2z:--fft-transform c2c --fft-2d on --fft-2d-inverse c2c --gpu-timers events --gpu-graph off")
only=" ${VARIANTS:-} "
files=()
for n in 1024 2048 4096 4864; do
  steps=20; [ "$n" -ge 4096 ] && steps=12
  dt=$(python3 -c "print(0.2312 / $n)")
  for v in "${variants[@]}"; do
    name=${v%%:*} args=${v#*:}
    [ "$only" = "  " ] || [[ "$only" == *" $name "* ]] || continue
    f="$out/n${n}_${name}.json"
    # shellcheck disable=SC2086
    if timeout 300 "$here/mpirun.sh" 1 "$build/beatnik" -x cuda --progress-every 0 -n "$n" -t "$steps" -d "$dt" \
        $args --results "$f" >"$out/n${n}_${name}.log" 2>&1; then
      files+=("$f")
    else
      echo "n=$n $name failed: $(grep -m1 'beatnik: ' "$out/n${n}_${name}.log" || tail -1 "$out/n${n}_${name}.log")"
    fi
  done
done

python3 - "$here" "$bw" "${files[@]}" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[1])
import gpu_bench_report as r
bw = float(sys.argv[2])
rows = {}
for p in sys.argv[3:]:
    d = r.load(p)
    n = d["config"]["mesh_nodes"][0]
    name = os.path.basename(p)[:-5].split("_", 1)[1]
    t = r.step_time(d)
    bound = r.nodes(d) * r.bound_bytes_per_node(d) / (bw * 1e12)
    fl = d["timers"]["regions"].get("fft.local", {})
    graph = d["config"].get("gpu_graph_used", False)
    fft_ms = fl.get("median", 0) * 1e3 if d["config"].get("gpu_timers") == "events" and not graph else None
    bpn = d["performance"].get("device_bytes_per_node_max_rank", 0)
    c2r = d["config"].get("fft_2d_inverse_c2r", False)
    rows.setdefault(n, {})[name] = (t, bound, fft_ms, d["config"].get("fft_2d_plan"), graph, bpn, c2r)
print(f"copy bandwidth {bw} TB/s; time/step = median of the slowest rank's steps (first dropped)\n")
print("| n | variant | time/step (ms) | step/bound | vs base | fft.local/step (ms) | 2-D plan ran | 2-D c2r inverse | graph ran | device B/node |")
print("|---|---|---|---|---|---|---|---|---|---|")
for n in sorted(rows):
    base = rows[n].get("base", (None,))[0]
    for name, (t, bound, fft_ms, two_d, graph, bpn, c2r) in rows[n].items():
        vs = f"{t / base:.3f}" if base else "-"
        fm = f"{fft_ms:.3f}" if fft_ms is not None else ("(in graph)" if graph else "(host timers)")
        print(f"| {n} | {name} | {t*1e3:.3f} | {t/bound:.2f} | {vs} | {fm} | {two_d} | {c2r} | {graph} | {bpn:.0f} |")
PY
