#!/usr/bin/env bash
# Run-to-run reproducibility on the GPU (-x cuda): each case twice, then the final states
# (--write-state, every digit) and the results' checksums compared; and the tree's LET
# strategies against each other. Usage: scripts/gpu-repro.sh BUILD_DIR OUT_DIR [RANKS]
# Prints one line per case: "same" or where the two runs differ. Exit 1 if any differs.
# X=host N=32 run the same comparison on the CPU (a smaller mesh).
set -uo pipefail
build=$1 out=$2 ranks=${3:-2}
bin=$build/beatnik
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
case_opts=(-O high -n "${N:-128}" -b periodic -I cos -m 0.1 -p 3 -t 4 --progress-every 0)
bad=0

run() {  # name ranks options...
  local name=$1 np=$2
  shift 2
  "$here/mpirun.sh" "$np" "$bin" -x "${X:-cuda}" "${case_opts[@]}" --write-state "$out/$name.csv" \
    --results "$out/$name.json" "$@" >"$out/$name.log" 2>&1 || { echo "$name: exit $? (see $out/$name.log)"; bad=1; }
}

same() {  # a b: the same state file and checksums?
  local what
  if ! cmp -s "$out/$1.csv" "$out/$2.csv"; then what="states differ"
  else what=$(python3 - "$out/$1.json" "$out/$2.json" <<'PY'
import json, sys
a, b = (json.load(open(f))["checksums"] for f in sys.argv[1:])
diff = [k for k in a if a[k] != b[k]]
print("checksums differ: " + ", ".join(diff) if diff else "same")
PY
)
  fi
  printf '%-46s %s\n' "$1 ~ $2" "$what"
  [ "$what" = same ] || bad=1
}

for np in 1 "$ranks"; do
  run "exact_np${np}_a" "$np" -S exact
  run "exact_np${np}_b" "$np" -S exact
  same "exact_np${np}_a" "exact_np${np}_b"
  for let in alltoallv sparse rma; do
    run "tree_np${np}_${let}_a" "$np" -S tree --let-strategy "$let"
    run "tree_np${np}_${let}_b" "$np" -S tree --let-strategy "$let"
    same "tree_np${np}_${let}_a" "tree_np${np}_${let}_b"
    [ "$let" = alltoallv ] || same "tree_np${np}_alltoallv_a" "tree_np${np}_${let}_a"
  done
done
exit $bad
