#!/usr/bin/env bash
# Halo-exchange time per strategy (docs/halo.md, "Measured"): low order on a 2x2 process grid,
# each rank owning SIDE x SIDE nodes (-n = 2 x SIDE), a few steps, every --halo-strategy.
#   scripts/halo-bench.sh [DIR] [STEPS] [SIDES...] [-- EXTRA beatnik options...]
# Defaults: DIR=./halo-bench, 5 steps, sides 128 512 2048. Prints, per side and strategy, the
# median over ranks (seconds per step) of the two halo regions (halo.state + halo.V) and of
# their wait phases (halo.*.wait), with the step time.
#   BEATNIK=build/cuda/beatnik scripts/halo-bench.sh gpu 5 1024 -- -x cuda --gpu-transport staged
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-halo-bench}; steps=${2:-5}
shift $(( $# < 2 ? $# : 2 ))
sides=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do sides+=("$1"); shift; done
[ $# -gt 0 ] && shift
extra=("$@")
[ ${#sides[@]} -gt 0 ] || sides=(128 512 2048)
beatnik=${BEATNIK:-$here/build/host/beatnik}
strategies=$("$beatnik" --help | sed -n '/--halo-strategy/,/--gpu-id/p' | awk 'NR>1 && $1 !~ /^--/ {print $1}')
mkdir -p "$dir"
for side in "${sides[@]}"; do
  n=$(( 2 * side ))
  # A stable dt at this n (the default crosses the viscous limit above n ~ 350).
  dt=$(python3 -c "print(0.8 * 2.51 * (2.0/$n)**2 / (4 * 1.0 * 2.0/$n))")
  for s in $strategies; do
    "$here/scripts/mpirun.sh" 4 "$beatnik" -n "$n" --ranks-grid 2x2 -t "$steps" -d "$dt" --fftw-plan estimate \
      --progress-every 0 --halo-strategy "$s" "${extra[@]}" --results "$dir/$side-$s.json" >"$dir/$side-$s.log" 2>&1 ||
      echo "$side $s: failed (see $dir/$side-$s.log)" >&2
  done
done
python3 - "$dir" "${sides[@]}" <<'PY'
import json, os, sys
d, sides = sys.argv[1], sys.argv[2:]
print(f"{'side/rank':>9} {'strategy':<11} {'halo s/step':>12} {'wait s/step':>12} {'post s/step':>12} {'step s':>10}")
for side in sides:
    for f in sorted(x for x in os.listdir(d) if x.startswith(side + "-") and x.endswith(".json")):
        r = json.load(open(os.path.join(d, f)))["timers"]["regions"]
        med = lambda *names: sum(r[n]["median"] for n in names if n in r)
        print(f"{side:>9} {f[len(side) + 1:-5]:<11} {med('halo.state', 'halo.V'):>12.4e} "
              f"{med('halo.state.wait', 'halo.V.wait'):>12.4e} {med('halo.state.post', 'halo.V.post'):>12.4e} "
              f"{r['step']['median']:>10.4e}")
PY
