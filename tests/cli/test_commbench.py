#!/usr/bin/env python3
"""beatnik-commbench and beatnik --bounds on N ranks (docs/commbench.md):
- commbench -c checks every received byte and passes; a planted corruption (--test-corrupt) is
  detected (exit 1);
- the bounds file's bytes and messages per pattern equal a real run's accounting (results file)
  for the same problem options;
- beatnik --bounds with the matching file gives every pattern an achieved GB/s and a % of
  achievable; with a file made for another -n it says "bounds do not match this run";
- a pattern slowed on purpose (BEATNIK_TEST_SLOW_PATTERN) shows a lower % of achievable, the
  other patterns less changed;
- bad inputs exit 2 with one message.
Standard library only."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

parser = argparse.ArgumentParser()
parser.add_argument("--beatnik", required=True)
parser.add_argument("--commbench", required=True)
parser.add_argument("--mpiexec", default="mpiexec")
parser.add_argument("--ranks", type=int, required=True)
args = parser.parse_args()

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from program_checks import Checks  # noqa: E402

check = Checks()
N = args.ranks
tmp = tempfile.mkdtemp(prefix="beatnik-commbench-")
PROBLEM = ["-n", "24", "-O", "medium", "--fftw-plan", "estimate"]
QUICK = ["--min", "1", "--max", "4096", "--warmup", "1", "--iterations", "3", "--window", "4", "--reps", "5"]


def commbench(opts, problem=PROBLEM, env=None, timeout=120):
    cmd = [args.mpiexec, "-n", str(N), args.commbench, *opts, "--", *problem]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None


def beatnik(opts, env=None):
    cmd = [args.mpiexec, "-n", str(N), args.beatnik, "--progress-every", "0", *opts]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    except subprocess.TimeoutExpired:
        return None


def ok(p):
    return p is not None and p.returncode == 0


def why(p):
    return "timeout" if p is None else f"exit {p.returncode}: {p.stderr[-1500:]}"


# 1. Validation passes, and a planted corruption is caught.
bounds = os.path.join(tmp, "bounds.json")
p = commbench(["-c", *QUICK, "-o", bounds])
check("commbench -c runs", ok(p), why(p))
check("commbench -c: every byte checked", ok(p) and "validation: every received byte as sent" in p.stdout,
      p.stdout[-1500:] if p else "")
p = commbench(["-c", "--test-corrupt", *QUICK, "--tests", "alltoall,patterns"])
check("commbench -c detects a corrupted byte", p is not None and p.returncode == 1 and "FAILED" in p.stdout, why(p))

# 2. The bounds file's message sets against a real run's accounting.
res = os.path.join(tmp, "run.json")
p = beatnik(PROBLEM + ["-t", "2", "--results", res])
check("reference run", ok(p), why(p))
if ok(p) and os.path.exists(bounds):
    b = json.load(open(bounds))
    r = json.load(open(res))
    steps = len(r["steps"]["seconds"])
    run_patterns = set(r["communication"])
    check("bounds file: the run's patterns", set(b["patterns"]) == run_patterns,
          f"{sorted(b['patterns'])} vs {sorted(run_patterns)}")
    for name, c in r["communication"].items():
        if name not in b["patterns"]:
            continue
        bp = b["patterns"][name]
        run_bytes = sum(c["bytes_per_step_total"].values())
        run_msgs = sum(c["messages_total"].values()) / steps
        check(f"{name}: bytes per step", bp["bytes_per_step_total"] == run_bytes,
              f"bounds {bp['bytes_per_step_total']} vs run {run_bytes}")
        check(f"{name}: messages per step", bp["messages_per_step"] == run_msgs,
              f"bounds {bp['messages_per_step']} vs run {run_msgs}")
        check(f"{name}: sizes add up", sum(s * n for s, n in bp["message_sizes"]) == run_bytes, str(bp["message_sizes"]))
        check(f"{name}: a positive bound", bp["gb_per_s"] > 0 and bp["seconds_min"] <= bp["seconds_p50"], str(bp))
    if N >= 2:
        lat = b["point_to_point"]["latency"]
        check("latency curve", len(lat) == 13 and all(x["seconds"] > 0 for x in lat), str(lat)[:300])

# 3. beatnik --bounds: matching and not matching.
def with_bounds(name, problem, file=bounds, env=None):
    out = os.path.join(tmp, f"{name}.json")
    p = beatnik(problem + ["-t", "4", "--warmup", "1", "--bounds", file, "--results", out], env)
    check(f"{name}: runs", ok(p), why(p))
    return (p, json.load(open(out))) if ok(p) else (p, None)


p, doc = with_bounds("matching", PROBLEM)
if doc:
    check("matching: the summary's columns", "% achv" in p.stdout, p.stdout[-2000:])
    for name, c in doc["communication"].items():
        check(f"matching: {name} matched", c.get("bounds_status") == "matched", str(c.get("bounds_status")))
        check(f"matching: {name} % of achievable", isinstance(c.get("percent_of_achievable"), float)
              and c["percent_of_achievable"] > 0, str(c.get("percent_of_achievable")))
        check(f"matching: {name} achieved GB/s", c.get("achieved_gb_per_s", 0) > 0, str(c.get("achieved_gb_per_s")))
    check("matching: results name the file", doc.get("bounds", {}).get("file") == bounds, str(doc.get("bounds")))
p, doc = with_bounds("other-n", ["-n", "32"] + PROBLEM[2:])
if doc:
    check("other-n: says so", "bounds do not match this run" in p.stdout, p.stdout[-2000:])
    for name, c in doc["communication"].items():
        check(f"other-n: {name} no number", c.get("percent_of_achievable") is None
              and c.get("bounds_status") == "bounds do not match this run", str(c))

# 4. A pattern slowed on purpose: its % of achievable drops against the matching run's, the others' much less.
# Low order, where the halo is not lost behind the Birkhoff-Rott sum's imbalance.
LOW = ["-n", "32", "--fftw-plan", "estimate"]
bounds_low = os.path.join(tmp, "bounds-low.json")
p = commbench(["--tests", "patterns", "--reps", "10", "-o", bounds_low], LOW)
check("commbench low order", ok(p), why(p))
env = dict(os.environ, BEATNIK_TEST_SLOW_PATTERN="halo:5000")
base_p, base = with_bounds("unslowed", LOW, bounds_low)
slow_p, slow = with_bounds("slowed", LOW, bounds_low, env)
if base and slow:
    # On a shared, oversubscribed machine the sleeping ranks wake up out of step and the other
    # patterns lose some speed too: the slowed one must lose at least twice as much (relatively)
    # as any other, and at least half of its own.
    pct = lambda d, k: d["communication"][k]["percent_of_achievable"]  # noqa: E731
    drop = {k: pct(slow, k) / pct(base, k) for k in base["communication"]}
    check("slowed halo: lower % of achievable", drop["halo"] < 0.5, f"{pct(slow, 'halo')} vs {pct(base, 'halo')}")
    for k, r in drop.items():
        if k != "halo":
            check(f"slowed halo: {k} drops less", drop["halo"] < 0.5 * r, f"halo kept {drop['halo']:.3f}, {k} {r:.3f}")

# 5. Bad input: exit 2 and one message (on 2 ranks: the checks run before any collective work).
if N == 2:
    notbounds = res  # a results file is not a bounds file
    cases = [
        ("commbench --min 0", lambda: commbench(["--min", "0"])),
        ("commbench --tests bogus", lambda: commbench(["--tests", "bogus"])),
        ("commbench --buffer device on a host build", lambda: commbench(["--buffer", "device"])),
        ("commbench --transport nccl", lambda: commbench(["--transport", "nccl"])),
        ("commbench bad problem option", lambda: commbench(["--tests", "patterns"], ["-n", "-4"])),
        ("beatnik --bounds missing file", lambda: beatnik(PROBLEM + ["-t", "1", "--bounds", os.path.join(tmp, "none")])),
        ("beatnik --bounds not a bounds file", lambda: beatnik(PROBLEM + ["-t", "1", "--bounds", notbounds])),
        ("BEATNIK_TEST_SLOW_PATTERN bogus",
         lambda: beatnik(PROBLEM + ["-t", "1"], dict(os.environ, BEATNIK_TEST_SLOW_PATTERN="halo:x"))),
    ]
    for name, f in cases:
        p = f()
        if "--buffer device" in name and p is not None and p.returncode == 0:
            continue  # a CUDA build: the option is valid there
        check(f"{name}: exit 2", p is not None and p.returncode == 2, why(p))
        check(f"{name}: one message", p is not None and p.stderr.count("error:") == 1, p.stderr[-800:] if p else "")

shutil.rmtree(tmp, ignore_errors=True)
check.finish()
