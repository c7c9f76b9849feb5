#!/usr/bin/env bash
# A/B of the edge terms on one GPU (-S tree -x cuda; docs/tree.md "On the GPU"):
#   scripts/gpu-tree-edge.sh BUILD_DIR OUT_DIR
# 1024^2 and 2048^2 periodic multi-mode cosine at TOL 1e-6 with --tree-edge-terms on and off, and
# the BR error at 1024^2 with them on (--br-check 64). One warm-up step, then the measured steps (3
# BR calls each); one line per run: s/call (step median / 3), the split per call from the timer
# regions, and the pairs per call. RUN_TIMEOUT (seconds, default 600) bounds each run.
set -uo pipefail
build=$1 out=$2
bin=$build/beatnik
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
cos=(-O high -b periodic -I cos -S tree --br-tolerance 1e-6)

run() {  # name options...
  local name=$1
  shift
  timeout "${RUN_TIMEOUT:-600}" "$here/mpirun.sh" 1 "$bin" -x cuda --progress-every 0 --results "$out/$name.json" "${cos[@]}" "$@" \
    >"$out/$name.log" 2>&1 || { echo "$name: exit $? (see $out/$name.log)"; tail -5 "$out/$name.log"; return; }
  python3 - "$out/$name.json" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["timers"]["regions"]; t = d["performance"].get("br_tree", {})
c = lambda k: r.get(k, {}).get("median", 0.0) / 3
split = " ".join(f"{k.replace('br.tree.', '')} {c(k):.3f}" for k in (
    "br.tree.compute.lists", "br.tree.compute.pack", "br.tree.compute.copy", "br.tree.compute.wait",
    "br.tree.compute.near.kernel", "br.tree.compute.far.kernel", "br.tree.compute.edge",
    "br.tree.compute.edge.keys", "br.tree.compute.edge.tables", "br.tree.compute.edge.kernel",
    "br.tree.compute.edge.copy", "br.tree.compute", "br.tree.low", "br.tree.upward", "br.tree.build"))
line = (f"{sys.argv[2]:<18} {c('step'):.4f} s/call | {split} | direct {t.get('direct_pairs_per_call', 0):.3e} "
        f"proxy {t.get('proxy_pairs_per_call', 0):.3e} edge terms {t.get('edge_terms_per_call', 0):.3e} "
        f"edge proxy {t.get('edge_proxy_pairs_per_call', 0):.3e} edge direct {t.get('edge_direct_pairs_per_call', 0):.3e}")
chk = d.get("br_check")
if chk:
    line += f" | error rms {chk.get('rms_rel', 0.0):.2e} max {chk.get('max_rel', 0.0):.2e}"
print(line)
PY
}

run edge_on_1024 -n 1024 --tree-edge-terms on -t 2 --warmup 1
run edge_off_1024 -n 1024 --tree-edge-terms off -t 2 --warmup 1
run check_on_1024 -n 1024 --tree-edge-terms on -t 1 --br-check 64
run edge_on_2048 -n 2048 --tree-edge-terms on -t 2 --warmup 1
run edge_off_2048 -n 2048 --tree-edge-terms off -t 2 --warmup 1
