#!/usr/bin/env bash
# A/B of the edge stage's sort and kernel on one GPU (docs/tree-log.md "The edge stage's sort,
# kernel and tables"): 1024² periodic cosine, TOL 1e-6, -t 2 --warmup 1, with
#   BEATNIK_TREE_EDGE_SORT=segmented|radix   (the tables' sort; radix the default since edgekern)
#   BEATNIK_TREE_EDGE_KERNEL=v               (the edge kernel's variant)
#   BEATNIK_TREE_EDGE_TABLES=v               (the tables' passes, when the build has the switch)
# given as RUNS="name:sort:kernel[:tables] ..." (default below), then the final states of the
# first two runs compared (--write-state, every digit) and every run's checksums.
#   scripts/gpu-tree-edgekern.sh BUILD_DIR OUT_DIR
# One line per run: s/call (step median / 3), br.tree.compute and its edge regions (ms per call).
set -uo pipefail
build=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
opts=(-x cuda --progress-every 0 -O high -n 1024 -b periodic -I cos -S tree --br-tolerance 1e-6 -t 2 --warmup 1)
runs=${RUNS:-"base1:segmented:4:0 new1:radix:8:1 radix4:radix:4:0 tab1:radix:4:1 k7:radix:7:1 k9:radix:9:1 k10:radix:10:1 base2:segmented:4:0 new2:radix:8:1"}
first=()
for spec in $runs; do
  IFS=: read -r name sort kern tabs <<<"$spec"
  extra=()
  [ ${#first[@]} -lt 2 ] && { extra=(--write-state "$out/$name.csv"); first+=("$name"); }
  BEATNIK_TREE_EDGE_SORT=$sort BEATNIK_TREE_EDGE_KERNEL=$kern BEATNIK_TREE_EDGE_TABLES=${tabs:-} timeout 90 \
    "$here/mpirun.sh" 1 "$build/beatnik" "${opts[@]}" --results "$out/$name.json" "${extra[@]}" >"$out/$name.log" 2>&1 ||
    { echo "$name: exit $? (see $out/$name.log)"; tail -5 "$out/$name.log"; continue; }
  python3 - "$out/$name.json" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["timers"]["regions"]
med = lambda k: r.get(k, {}).get("median", 0.0)
ms = lambda k: f"{1e3 * med(k) / 3:6.1f}"
t = d["performance"].get("br_tree", {})
print(f"{sys.argv[2]:<8} {med('step') / 3:.4f} s/call  compute {ms('br.tree.compute')}  edge(host) {ms('br.tree.compute.edge')}"
      f"  keys {ms('br.tree.compute.edge.keys')}  wait {ms('br.tree.compute.edge.wait')}"
      f"  tables {ms('br.tree.compute.edge.tables')}  kernel {ms('br.tree.compute.edge.kernel')}"
      f"  lists {ms('br.tree.compute.lists')}  sums-wait {ms('br.tree.compute.wait')}"
      f"  near/far {ms('br.tree.compute.near.kernel')}/{ms('br.tree.compute.far.kernel')} ms/call"
      f"  edge pairs {t.get('edge_proxy_pairs_per_call', 0):.4e}/{t.get('edge_direct_pairs_per_call', 0):.4e}")
print(f"{'':<8} checksums " + " ".join(f"{k}={v!r}" for k, v in d["checksums"].items()))
PY
done
if [ ${#first[@]} -eq 2 ]; then
  if cmp -s "$out/${first[0]}.csv" "$out/${first[1]}.csv"; then echo "final states ${first[*]}: the same bits"
  else echo "final states ${first[*]}: DIFFER"; fi
fi
