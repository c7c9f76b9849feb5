#!/usr/bin/env python3
"""scripts/cpu-tree-goal.sh (the treecode's CPU goal, docs/tree.md) as a user runs it, on a tiny
case (GOAL_N=24, GOAL_RANKS=2, one round): it exits 0 and prints one row per job; each row's CPU
and wall seconds equal what the job's .time file holds, its step time, pairs and sum|w| what its
results file holds (pairs summed here from performance.br_tree); the two tree runs give the same sum|w| (a run is
bitwise reproducible) and the exact run the same to 1e-6; the round's and the final ratios (CPU, wall,
step time) equal exact / tree recomputed here from the .time and results files. Bad ROUNDS and a missing binary exit 2.
Usage: test_cpu_tree_goal.py --script scripts/cpu-tree-goal.sh --beatnik build/host/beatnik"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from program_checks import Checks  # noqa: E402

PAIRS = ("direct_pairs_per_call", "proxy_pairs_per_call", "cluster_cluster_pairs_per_call",
         "edge_proxy_pairs_per_call", "edge_direct_pairs_per_call")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--beatnik", required=True)
    a = ap.parse_args()
    check = Checks()
    env = dict(os.environ, BEATNIK=a.beatnik, GOAL_N="24", GOAL_RANKS="2")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "goal")
        p = subprocess.run(["bash", a.script, out, "1"], capture_output=True, text=True, env=env, timeout=240)
        check("exit 0", p.returncode == 0, f"exit {p.returncode}: {p.stderr[-2000:]}")
        lines = p.stdout.splitlines()
        rows = {}
        for line in lines:
            f = line.split()
            if f and f[0] in ("tree-1-a", "exact-1", "tree-1-b"):
                rows[f[0]] = f
        check("three rows", sorted(rows) == ["exact-1", "tree-1-a", "tree-1-b"], p.stdout)
        times = {}
        for name, f in rows.items():
            cpu, wall = map(float, open(os.path.join(out, name + ".time")).read().split())
            d = json.load(open(os.path.join(out, name + ".json")))
            step = sum(d["steps"]["seconds"])  # the slowest rank's measured step (one step)
            times[name] = (cpu, wall, step)
            check(f"{name} CPU and wall printed", abs(float(f[1]) - cpu) <= 0.006 and abs(float(f[2]) - wall) <= 0.006,
                  f"{f} against {cpu} {wall}")
            check(f"{name} step time printed", abs(float(f[3]) - step) <= 0.006, f"{f} against {step}")
            check(f"{name} times positive, the step within the job", cpu > 0 and 0 < step < wall,
                  f"{cpu} {wall} {step}")
            check(f"{name} sum|w| printed", float(f[-1]) == float(f"{d['checksums']['sum_abs_w']:.15g}"),
                  f"{f[-1]} against {d['checksums']['sum_abs_w']}")
            t = d["performance"].get("br_tree")
            if name.startswith("tree"):
                check(f"{name} is a tree run", t is not None and d["config"]["solver"] == "tree",
                      str(d["config"]["solver"]))
                if t:
                    pairs = sum(t[k] for k in PAIRS)
                    check(f"{name} pairs printed", abs(float(f[4]) / pairs - 1) < 1e-3, f"{f[4]} against {pairs}")
            else:
                check("exact run", t is None and d["config"]["solver"] == "exact", str(d["config"]["solver"]))
        if len(rows) == 3:
            wa, we, wb = (float(rows[n][-1]) for n in ("tree-1-a", "exact-1", "tree-1-b"))
            check("tree runs reproducible", wa == wb, f"{wa} {wb}")
            check("tree agrees with exact", abs(wa / we - 1) < 1e-6, f"{wa} {we}")
            e, ta, tb = times["exact-1"], times["tree-1-a"], times["tree-1-b"]
            m = re.search(r"round 1: exact / tree ([\d.]+)x and ([\d.]+)x by CPU time, ([\d.]+)x by wall time, "
                          r"([\d.]+)x by step time", p.stdout)
            check("round line", m is not None, p.stdout)
            if m:
                want = (e[0] / ta[0], e[0] / tb[0], e[1] / statistics.median([ta[1], tb[1]]),
                        e[2] / statistics.median([ta[2], tb[2]]))
                got = tuple(float(x) for x in m.groups())
                check("round ratios", all(abs(g - w) <= 0.051 for g, w in zip(got, want)), f"{got} against {want}")
            m = re.search(r"ratio \(medians\): ([\d.]+)x by CPU time, ([\d.]+)x by wall time, ([\d.]+)x by step time; "
                          r"goal >= 20x: (met|not met) by CPU time, (met|not met) by step time", p.stdout)
            check("ratio line", m is not None, p.stdout)
            if m:
                cpu = e[0] / statistics.median([ta[0], tb[0]])
                step = e[2] / statistics.median([ta[2], tb[2]])
                check("median ratio", abs(float(m.group(1)) - cpu) <= 0.051, f"{m.group(1)} against {cpu}")
                check("median step ratio", abs(float(m.group(3)) - step) <= 0.051, f"{m.group(3)} against {step}")
                check("goal verdicts", (m.group(4) == "met") == (float(m.group(1)) >= 20)
                      and (m.group(5) == "met") == (float(m.group(3)) >= 20), m.group(0))
        for args, why in (([out, "0"], "ROUNDS 0"), ([out, "x"], "ROUNDS x")):
            q = subprocess.run(["bash", a.script, *args], capture_output=True, text=True, env=env, timeout=60)
            check(f"{why} exits 2", q.returncode == 2 and "ROUNDS" in q.stderr, f"{q.returncode}: {q.stderr}")
        q = subprocess.run(["bash", a.script, out, "1"], capture_output=True, text=True,
                           env=dict(env, BEATNIK=os.path.join(tmp, "none")), timeout=60)
        check("missing binary exits 2", q.returncode == 2 and "no beatnik binary" in q.stderr,
              f"{q.returncode}: {q.stderr}")
    check.finish()


if __name__ == "__main__":
    main()
