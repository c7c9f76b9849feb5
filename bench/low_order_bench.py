#!/usr/bin/env python3
"""Low-order step benchmark: runs beatnik for each mesh size and rank count and prints time per
step, figure of merit (node updates per second) and memory per mesh node, from the results files.

  bench/low_order_bench.py --beatnik build/host/beatnik --sizes 256,512,1024 --ranks 1,2 --steps 10
Extra beatnik options go after `--`, e.g. `-- -H 7`.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument("--beatnik", default=os.path.join(here, "..", "build", "host", "beatnik"))
p.add_argument("--sizes", default="256,512,1024")
p.add_argument("--ranks", default="1,2")
p.add_argument("--steps", type=int, default=10)
p.add_argument("--threads", type=int, default=1, help="OpenMP threads per rank")
p.add_argument("--json", help="also write all results documents into this JSON file")
p.add_argument("extra", nargs=argparse.REMAINDER)
a = p.parse_args()
extra = [x for x in a.extra if x != "--"]
mpirun = os.path.join(here, "..", "scripts", "mpirun.sh")
env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))

print(f"{'n':>6} {'ranks':>5} {'s/step':>11} {'node-upd/s':>11} {'ns/upd':>8} {'buf B/node':>10} "
      f"{'RSS B/node':>10}  fft config")
docs = []
for n in [int(s) for s in a.sizes.split(",")]:
    for r in [int(s) for s in a.ranks.split(",")]:
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            # A stable step: the default tau/25 unless the viscous limit (about 1.25/n at the
            # default box and -M 1) is smaller; `-- -d X` overrides.
            dt = [] if "-d" in extra or "--dt" in extra else ["-d", f"{min(0.0036121891279, 0.8 / n):.10g}"]
            cmd = [mpirun, str(r), a.beatnik, "-n", str(n), "-t", str(a.steps), "--progress-every", "0",
                   "--results", out] + dt + extra
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if proc.returncode != 0:
                print(f"{n:>6} {r:>5}  failed: {proc.stderr.strip()[-300:]}")
                continue
            doc = json.load(open(out))
        docs.append(doc)
        perf = doc["performance"]
        # Time per step: median over steps of the slowest rank (the first step includes warm-up).
        times = sorted(doc["steps"]["seconds"][1:] or doc["steps"]["seconds"])
        med = times[len(times) // 2]
        nodes = doc["config"]["mesh_nodes"][0] * doc["config"]["mesh_nodes"][1]
        print(f"{n:>6} {r:>5} {med:>11.4e} {nodes / med:>11.4e} {med / nodes * 1e9:>8.2f} "
              f"{perf['buffer_bytes_per_node_max_rank']:>10.0f} {perf['rss_bytes_per_node_max_rank']:>10.0f}  "
              f"{doc['config']['fft']}", flush=True)
if a.json:
    json.dump(docs, open(a.json, "w"), indent=1)
