#!/usr/bin/env bash
# Halo-exchange time per strategy (docs/halo.md, "Measured"): low order on a 2x2 process grid,
# each rank owning SIDE x SIDE nodes (-n = 2 x SIDE), a few steps, every --halo-strategy.
#   scripts/halo-bench.sh [DIR] [STEPS] [SIDES...] [-- EXTRA beatnik options...]
# Defaults: DIR=./halo-bench, 5 steps, sides 128 512 2048. Prints, per side and strategy, the
# distribution over steps (p50, p99, max; slowest rank per step, from timers.series) of the two
# halo regions together (halo.state + halo.V), the median over ranks of their wait and post
# phases (seconds per step), and the median step. Outliers are the point: use 20+ steps.
#   BEATNIK=build/cuda/beatnik scripts/halo-bench.sh gpu 5 1024 -- -x cuda --gpu-transport staged
# HALO_RANKS (default 4) and HALO_GRID (default 2x2) change the grid: with HALO_RANKS=2
# HALO_GRID=2x1 each rank owns SIDE x 2 SIDE nodes (two GPUs, one rank each).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-halo-bench}; steps=${2:-5}
shift $(( $# < 2 ? $# : 2 ))
sides=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do sides+=("$1"); shift; done
[ $# -gt 0 ] && shift
extra=("$@")
[ ${#sides[@]} -gt 0 ] || sides=(128 512 2048)
beatnik=${BEATNIK:-$here/build/host/beatnik}
ranks=${HALO_RANKS:-4}; grid=${HALO_GRID:-2x2}
strategies=$("$beatnik" --help | sed -n '/--halo-strategy/,/--gpu-id/p' | awk 'NR>1 && $1 !~ /^--/ {print $1}')
# Strategies that move device memory run only with -x cuda.
case " ${extra[*]:-} " in *" cuda "*) ;; *) strategies=$(printf '%s\n' $strategies | grep -v '^device-' || true) ;; esac
mkdir -p "$dir"
for side in "${sides[@]}"; do
  n=$(( 2 * side ))
  # A stable dt at this n (the default crosses the viscous limit above n ~ 350).
  dt=$(python3 -c "print(0.8 * 2.51 * (2.0/$n)**2 / (4 * 1.0 * 2.0/$n))")
  for s in $strategies; do
    "$here/scripts/mpirun.sh" "$ranks" "$beatnik" -n "$n" --ranks-grid "$grid" -t "$steps" -d "$dt" --fftw-plan estimate \
      --progress-every 0 --halo-strategy "$s" "${extra[@]}" --results "$dir/$side-$s.json" >"$dir/$side-$s.log" 2>&1 ||
      echo "$side $s: failed (see $dir/$side-$s.log)" >&2
  done
done
python3 - "$dir" "${sides[@]}" <<'PY'
import json, os, sys
d, sides = sys.argv[1], sys.argv[2:]

def quantile(xs, q):  # linear interpolation between order statistics
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = q * (len(xs) - 1)
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)

print("per step, slowest rank: halo = halo.state + halo.V; median over ranks for wait and post")
print(f"{'side/rank':>9} {'strategy':<11} {'halo p50':>10} {'halo p99':>10} {'halo max':>10} "
      f"{'wait s':>10} {'post s':>10} {'step p50':>10}")
for side in sides:
    for f in sorted(x for x in os.listdir(d) if x.startswith(side + "-") and x.endswith(".json")):
        t = json.load(open(os.path.join(d, f)))["timers"]
        r, series = t["regions"], t.get("series", {})
        med = lambda *names: sum(r[n]["median"] for n in names if n in r)
        halo = [sum(v) for v in zip(*(series[n] for n in ("halo.state", "halo.V") if n in series))]
        print(f"{side:>9} {f[len(side) + 1:-5]:<11} {quantile(halo, .5):>10.3e} {quantile(halo, .99):>10.3e} "
              f"{max(halo, default=float('nan')):>10.3e} {med('halo.state.wait', 'halo.V.wait'):>10.3e} "
              f"{med('halo.state.post', 'halo.V.post'):>10.3e} {quantile(series.get('step', []), .5):>10.3e}")
PY
