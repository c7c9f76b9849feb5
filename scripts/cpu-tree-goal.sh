#!/usr/bin/env bash
# The treecode's CPU goal (docs/tree.md, "Goals"): -S tree against -S exact on this machine, 4 ranks
# of one thread each, high order, 256^2 periodic multi-mode cosine, TOL 1e-6, one step (3 BR calls),
# measured by CPU time (user + system of every process of the job), by wall time, and by the step's
# time (the slowest rank's measured step from the results file: the 3 BR calls and the rest of the
# step, without the job's start-up and set-up, as the GPU goals' time a call is measured).
#   scripts/cpu-tree-goal.sh [OUT_DIR] [ROUNDS] [-- extra beatnik options for both solvers]
# Each round runs the tree, the exact solver, then the tree again, so that the machine's drift falls
# on both; the ratio is the exact run's time over the median of the tree runs of all rounds (and
# per round). Default OUT_DIR ./cpu-tree-goal, ROUNDS 1 (the exact run takes ~15-20x the tree's:
# ~100 s of wall on a 2-core host). Results files and logs land in OUT_DIR.
# Environment: BEATNIK (the binary; default build/host/beatnik), GOAL_N (256), GOAL_RANKS (4),
# GOAL_TOL (1e-6). The host kernel (AVX-512, AVX2 + FMA or portable) is the CPU's, as in any run;
# BEATNIK_HOST_KERNEL picks another for both solvers.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-cpu-tree-goal}; rounds=${2:-1}
shift $(( $# < 2 ? $# : 2 ))
[ "${1:-}" = "--" ] && shift
extra=("$@")
beatnik=${BEATNIK:-$here/build/host/beatnik}
n=${GOAL_N:-256}; ranks=${GOAL_RANKS:-4}; tol=${GOAL_TOL:-1e-6}
case "$rounds" in ''|*[!0-9]*|0) echo "cpu-tree-goal: ROUNDS must be a positive integer (got '$rounds')" >&2; exit 2 ;; esac
[ -x "$beatnik" ] || { echo "cpu-tree-goal: no beatnik binary at $beatnik (build it, or set BEATNIK)" >&2; exit 2; }
mkdir -p "$out"
common=(-O high -n "$n" -b periodic -I cos -t 1 --progress-every 0)

# One job: CPU seconds of all its processes (RUSAGE_CHILDREN: mpiexec waits for its ranks, so theirs
# are included) and wall seconds, into $out/NAME.time; the job's output into $out/NAME.log.
job() {  # name beatnik-options...
  local name=$1; shift
  echo "cpu-tree-goal: $name ..." >&2
  python3 - "$out/$name.time" "$out/$name.log" "$here/scripts/mpirun.sh" "$ranks" "$beatnik" "${common[@]}" \
    --results "$out/$name.json" "$@" "${extra[@]}" <<'PY'
import resource, subprocess, sys, time
timef, logf, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
t0 = time.monotonic()
with open(logf, "w") as log:
    rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT).returncode
wall = time.monotonic() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
if rc != 0:
    sys.exit(f"cpu-tree-goal: {' '.join(cmd)} exited {rc} (see {logf})")
open(timef, "w").write(f"{r.ru_utime + r.ru_stime} {wall}\n")
PY
}

export OMP_NUM_THREADS=1
for ((i = 1; i <= rounds; ++i)); do
  job "tree-$i-a" -S tree --br-tolerance "$tol"
  job "exact-$i" -S exact
  job "tree-$i-b" -S tree --br-tolerance "$tol"
done

python3 - "$out" "$rounds" "$n" "$ranks" "$tol" <<'PY'
import json, os, platform, statistics, sys
out, rounds, n, ranks, tol = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
def timed(name):
    cpu, wall = map(float, open(os.path.join(out, name + ".time")).read().split())
    return cpu, wall
def model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"
kernel = ""
for line in open(os.path.join(out, "exact-1.log")):
    if "host kernel" in line:
        kernel = line.split("host kernel", 1)[1].strip()
print(f"CPU goal: {ranks} ranks x 1 thread, {n}^2 periodic cos, one step (3 BR calls), TOL {tol}")
print(f"machine: {model()}, {os.cpu_count()} logical CPUs; exact solver's host kernel {kernel or '?'}")
print(f"{'run':<12} {'CPU s':>9} {'wall s':>9} {'step s':>9} {'pairs/call':>11}  sum|w|")
trees, exacts = [], []
for i in range(1, rounds + 1):
    for name in (f"tree-{i}-a", f"exact-{i}", f"tree-{i}-b"):
        cpu, wall = timed(name)
        d = json.load(open(os.path.join(out, name + ".json")))
        t = d["performance"].get("br_tree")
        pairs = "" if not t else "%.3e" % sum(t[k] for k in (
            "direct_pairs_per_call", "proxy_pairs_per_call", "cluster_cluster_pairs_per_call",
            "edge_proxy_pairs_per_call", "edge_direct_pairs_per_call"))
        # The step's time: the slowest rank's (its 3 BR calls and the rest of the step), without the
        # job's start-up and set-up, as the GPU goals' "s a call" are measured.
        step = sum(d["steps"]["seconds"])
        print(f"{name:<12} {cpu:>9.2f} {wall:>9.2f} {step:>9.2f} {pairs:>11}  {d['checksums']['sum_abs_w']:.15g}")
        (trees if t else exacts).append((cpu, wall, step))
    e, ta, tb = exacts[-1], trees[-2], trees[-1]
    print(f"  round {i}: exact / tree {e[0] / ta[0]:.1f}x and {e[0] / tb[0]:.1f}x by CPU time, "
          f"{e[1] / statistics.median([ta[1], tb[1]]):.1f}x by wall time, "
          f"{e[2] / statistics.median([ta[2], tb[2]]):.1f}x by step time")
ratio = [statistics.median(x[k] for x in exacts) / statistics.median(x[k] for x in trees) for k in range(3)]
verdict = lambda r: "met" if r >= 20 else "not met"
print(f"ratio (medians): {ratio[0]:.1f}x by CPU time, {ratio[1]:.1f}x by wall time, {ratio[2]:.1f}x by step time; "
      f"goal >= 20x: {verdict(ratio[0])} by CPU time, {verdict(ratio[2])} by step time")
PY
