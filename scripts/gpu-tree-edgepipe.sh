#!/usr/bin/env bash
# A/B of the tree solver's edge stage on one GPU (docs/tree-log.md "The edge stage pipelined with the
# lists"): one-shot after the lists (BEATNIK_TREE_EDGE_PIPE=0, the default) against pipelined
# with them (=1, a piece every run), alternated old, new, old, new, then pipelined every 2 and 4 runs
# while the time lasts (BUDGET seconds from the start, default 300).
#   scripts/gpu-tree-edgepipe.sh BUILD_DIR OUT_DIR
# One line per run: s/call (step median / 3), br.tree.compute and its edge regions (ms per call),
# the checksums; then whether the first old and new runs' final states (--write-state, every
# digit) are the same bits.
set -uo pipefail
build=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
budget=${BUDGET:-300}
start=$SECONDS
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
opts=(-x cuda --progress-every 0 -O high -n 1024 -b periodic -I cos -S tree --br-tolerance 1e-6 -t 3 --warmup 1)

run() {  # name pipe [extra options]
  local name=$1 pipe=$2
  shift 2
  BEATNIK_TREE_EDGE_PIPE=$pipe timeout 90 "$here/mpirun.sh" 1 "$build/beatnik" "${opts[@]}" --results "$out/$name.json" \
    "$@" >"$out/$name.log" 2>&1 || { echo "$name: exit $? (see $out/$name.log)"; tail -5 "$out/$name.log"; return; }
  python3 - "$out/$name.json" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["timers"]["regions"]
med = lambda k: r.get(k, {}).get("median", 0.0)
ms = lambda k: f"{1e3 * med(k) / 3:6.1f}"
c = d["checksums"]
print(f"{sys.argv[2]:<10} {med('step') / 3:.4f} s/call  compute {ms('br.tree.compute')}  edge(host) {ms('br.tree.compute.edge')}"
      f"  keys {ms('br.tree.compute.edge.keys')}  wait {ms('br.tree.compute.edge.wait')}"
      f"  tables {ms('br.tree.compute.edge.tables')}  kernel {ms('br.tree.compute.edge.kernel')}"
      f"  lists {ms('br.tree.compute.lists')}  sums-wait {ms('br.tree.compute.wait')}"
      f"  near/far {ms('br.tree.compute.near.kernel')}/{ms('br.tree.compute.far.kernel')} ms/call")
print(f"{'':<10} checksums " + " ".join(f"{k}={v!r}" for k, v in c.items()))
PY
}

run old1 0 --write-state "$out/old1.csv"
run new1 1 --write-state "$out/new1.csv"
run old2 0
run new2 1
for p in 2 4; do
  [ $((SECONDS - start)) -lt "$budget" ] && run "pipe$p" "$p"
done
if cmp -s "$out/old1.csv" "$out/new1.csv"; then echo "final states old1 ~ new1: the same bits"
else echo "final states old1 ~ new1: DIFFER"; fi
python3 - "$out"/old1.json "$out"/new1.json "$out"/old2.json "$out"/new2.json <<'PY'
import json, sys
cs = [json.load(open(f))["checksums"] for f in sys.argv[1:]]
for k in cs[0]:
    same = len({repr(c.get(k)) for c in cs}) == 1
    print(f"checksum {k}: {'equal in all four' if same else 'differs: ' + ', '.join(repr(c.get(k)) for c in cs)}")
PY
