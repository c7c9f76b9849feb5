#!/usr/bin/env bash
# GPU benchmarks of the treecode Birkhoff-Rott solver (-S tree -x cuda; docs/tree.md "On the GPU").
#   scripts/gpu-tree-bench.sh weak BUILD_DIR OUT_DIR [GPUS]   weak scaling at 1024^2 per GPU (-w P: n and
#       the box grow by sqrt(P)), periodic multi-mode cosine, TOL 1e-6, on 1..GPUS GPUs (1, 2, 4 when
#       GPUS = 4), every LET strategy on more than one GPU: time per BR call, efficiency against one
#       GPU, LET bytes per rank and the LET's share of the call
#   scripts/gpu-tree-bench.sh let BUILD_DIR OUT_DIR [GPUS]   the LET over the GPU transport against host
#       MPI: weak 1024^2 per GPU on 2 and GPUS GPUs, alltoallv and sparse, --gpu-transport nccl (the
#       blocks by NCCL) then staged (the blocks by host MPI), and one GPU as the baseline
#   scripts/gpu-tree-bench.sh migrate BUILD_DIR OUT_DIR [GPUS]   the particles' migration on the device
#       against the host round trip (BEATNIK_TREE_MIGRATE=host): weak 1024^2 per GPU on 1, 2 and GPUS
#       GPUs, alltoallv LET, each pair in the same job; the same checksum expected (the same bits)
#   scripts/gpu-tree-bench.sh sizes BUILD_DIR OUT_DIR   one GPU: the 1024^2 case's tree (dual traversal) at 256^2, 512^2,
#       1024^2 and 2048^2 (the BR call time against N; beatnik-report OUT_DIR draws it with N log N)
#   scripts/gpu-tree-bench.sh single BUILD_DIR OUT_DIR   one GPU: 1024^2 periodic tree against the
#       exact solver, and 2048^2; the paper's single-mode case (512^2 free sech2) tree at TOL 1e-6 against the
#       cutoff solver at c = 0.5, each with its error measured by --br-check 64
#   scripts/gpu-tree-bench.sh ab BUILD_DIR OUT_DIR VAR=V1,V2[,...] [ROUNDS]   one GPU: an A/B of an
#       environment knob (docs/tree.md "Environment knobs") on the 1024^2 and 2048^2 periodic cases,
#       the values interleaved within each of ROUNDS rounds (default 2), so that the machine's drift
#       falls on every value alike; each row names its value and gives sum|w| (a knob that keeps the
#       bits keeps it too)
#   scripts/gpu-tree-bench.sh weak-ab BUILD_DIR OUT_DIR GPUS BEATNIK_VAR=V1,V2[,...] [ROUNDS]   the
#       same A/B on the weak-scaling case: per round and value one GPU, then GPUS GPUs (alltoallv LET),
#       each efficiency against that value's own one-GPU run (a knob that helps several GPUs and not
#       one shows there; docs/tree.md "Not done yet")
# One warm-up step, then the measured steps (3 BR calls each). Results files land in OUT_DIR; one
# table row per run goes to stdout.
set -uo pipefail
mode=$1 build=$2 out=$3 gpus=${4:-4}
bin=$build/beatnik
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}

cos1024=(-O high -n 1024 -b periodic -I cos -S tree --br-tolerance 1e-6)
sech512=(-O high -n 512 -I sech2 -m 0.1 -p 9 -b free -a 0.15 -M 2 -e 2)

run() {  # name ranks options...
  local name=$1 np=$2
  shift 2
  "$here/mpirun.sh" "$np" "$bin" -x cuda --progress-every 0 --results "$out/$name.json" "$@" >"$out/$name.log" 2>&1 ||
    { echo "$name: exit $? (see $out/$name.log)"; tail -5 "$out/$name.log"; return; }
  python3 - "$out/$name.json" "$name" "$out/one_gpu_s_per_call" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
r = d["timers"]["regions"]; p = d["performance"]
med = lambda k: r.get(k, {}).get("median", 0.0)
per_call = med("step") / 3
ranks = d["decomposition"]["ranks"]
base = sys.argv[3]
if ranks == 1 and os.path.basename(sys.argv[1]).startswith("weak"):
    open(base, "w").write(str(per_call))
eff = ""
if os.path.basename(sys.argv[1]).startswith("weak") and os.path.exists(base):
    eff = f"  efficiency {100 * float(open(base).read()) / per_call:5.1f} %"
tree = p.get("br_tree", {})
let = med("br.tree.let") / 3
split = "/".join(f"{1e3 * med('br.tree.let.' + k) / 3:.1f}" for k in ("pack", "exchange", "unpack"))
line = f"{sys.argv[2]:<26} {ranks} GPU  {per_call:8.4f} s/call{eff}"
if tree:
    line += (f"  LET {1e3 * let:7.2f} ms/call ({100 * let / per_call if per_call else 0:4.1f} %;"
             f" pack/exchange/unpack {split} ms, {d['config']['br']['tree'].get('let_path', '?')})"
             f"  LET MB/call busiest rank {tree.get('let_bytes_per_call_max_rank', 0) / 1e6:8.2f}"
             f"  direct {tree.get('direct_pairs_per_call', 0):.3e}  proxy {tree.get('proxy_pairs_per_call', 0):.3e}")
if tree:
    mig = "/".join(f"{1e3 * med(k) / 3:.1f}" for k in ("br.tree.to_spatial", "br.tree.build", "br.tree.build.copy",
                                                        "br.tree.to_surface"))
    line += f"  to_spatial/build/build.copy/to_surface {mig} ms"
    line += f"  sum|w| {d.get('checksums', {}).get('sum_abs_w', 0.0):.17g}"
chk = d.get("br_check")
if chk:
    line += f"  error rms {chk.get('rms_rel', 0.0):.2e} max {chk.get('max_rel', 0.0):.2e}"
print(line)
PY
}

# An A/B's knob and its values (sets var, vals, rounds; exits 2 with the usage line otherwise).
ab_spec() {  # spec rounds usage
  local spec=$1
  var=${spec%%=*} values=${spec#*=} rounds=$2
  if [[ ! "$var" =~ ^BEATNIK_[A-Z0-9_]+$ ]] || [ "$values" = "$spec" ] || [ -z "$values" ] ||
     [[ ! "$rounds" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 $3" >&2
    exit 2
  fi
  IFS=, read -r -a vals <<<"$values"
}

case $mode in
  weak)
    for p in 1 2 4 8 16; do
      [ "$p" -gt "$gpus" ] && break
      if [ "$p" -eq 1 ]; then
        run weak_1gpu 1 "${cos1024[@]}" -t 3 --warmup 1
      else
        for let in alltoallv sparse rma; do
          run "weak_${p}gpu_$let" "$p" "${cos1024[@]}" -w "$p" -t 3 --warmup 1 --let-strategy "$let"
        done
      fi
    done
    ;;
  let)
    run weak_1gpu 1 "${cos1024[@]}" -t 3 --warmup 1
    for p in 2 "$gpus"; do
      for let in alltoallv sparse; do
        for t in nccl staged; do
          run "let_${p}gpu_${let}_$t" "$p" "${cos1024[@]}" -w "$p" -t 3 --warmup 1 --let-strategy "$let" --gpu-transport "$t"
        done
      done
    done
    ;;
  migrate)
    for p in 1 2 "$gpus"; do
      [ "$p" -gt "$gpus" ] && break
      BEATNIK_TREE_MIGRATE=host run "migrate_${p}gpu_host" "$p" "${cos1024[@]}" -w "$p" -t 3 --warmup 1 --let-strategy alltoallv
      run "migrate_${p}gpu_device" "$p" "${cos1024[@]}" -w "$p" -t 3 --warmup 1 --let-strategy alltoallv
    done
    ;;
  sizes)
    for n in 256 512 1024 2048; do
      # One traversal at every size (auto would run single at 256²: a series of its own in the report).
      run "size_tree_cos$n" 1 -O high -n "$n" -b periodic -I cos -S tree --br-tolerance 1e-6 --tree-traversal dual \
        -t 3 --warmup 1
    done
    ;;
  single)
    run tree_cos1024 1 "${cos1024[@]}" -t 3 --warmup 1
    run exact_cos1024 1 -O high -n 1024 -b periodic -I cos -S exact -t 1
    run tree_cos2048 1 -O high -n 2048 -b periodic -I cos -S tree --br-tolerance 1e-6 -t 2 --warmup 1
    run tree_sech512 1 "${sech512[@]}" -S tree --br-tolerance 1e-6 -t 3 --warmup 1 --br-check 64
    run cutoff_sech512 1 "${sech512[@]}" -S cutoff -c 0.5 -t 3 --warmup 1 --br-check 64
    ;;
  ab)
    ab_spec "${4:-}" "${5:-2}" "ab BUILD_DIR OUT_DIR BEATNIK_VAR=V1,V2[,...] [ROUNDS]"
    for r in $(seq 1 "$rounds"); do
      for n in 1024 2048; do
        steps=3; [ "$n" -ge 2048 ] && steps=2
        for v in "${vals[@]}"; do
          (export "$var=$v"; run "ab_n${n}_${var}_${v}_r$r" 1 -O high -n "$n" -b periodic -I cos -S tree \
            --br-tolerance 1e-6 -t "$steps" --warmup 1)
        done
      done
    done
    ;;
  weak-ab)
    if [[ ! "$gpus" =~ ^[1-9][0-9]*$ ]] || [ "$gpus" -lt 2 ]; then
      echo "usage: $0 weak-ab BUILD_DIR OUT_DIR GPUS BEATNIK_VAR=V1,V2[,...] [ROUNDS] (GPUS at least 2)" >&2
      exit 2
    fi
    ab_spec "${5:-}" "${6:-2}" "weak-ab BUILD_DIR OUT_DIR GPUS BEATNIK_VAR=V1,V2[,...] [ROUNDS]"
    for r in $(seq 1 "$rounds"); do
      for v in "${vals[@]}"; do
        # "weak_" names: run() keeps the one-GPU time as the base of the next run's efficiency.
        (export "$var=$v"
         run "weak_ab_1gpu_${var}_${v}_r$r" 1 "${cos1024[@]}" -t 3 --warmup 1
         run "weak_ab_${gpus}gpu_${var}_${v}_r$r" "$gpus" "${cos1024[@]}" -w "$gpus" -t 3 --warmup 1 \
           --let-strategy alltoallv)
      done
    done
    ;;
  *)
    echo "usage: $0 weak|let|migrate|single|sizes|ab|weak-ab BUILD_DIR OUT_DIR [GPUS] [BEATNIK_VAR=V1,V2 [ROUNDS]]" >&2
    exit 2
    ;;
esac
