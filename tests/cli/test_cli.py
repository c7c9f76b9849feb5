#!/usr/bin/env python3
"""Runs the beatnik executable under `mpiexec -n 2` the way a user would and checks exit codes,
messages and output files. Standard library only. Exit status 0 when every case passes."""
import argparse
import csv
import json
import os
import resource
import shutil
import sys
import tempfile
import time

parser = argparse.ArgumentParser()
parser.add_argument("--beatnik", required=True)
parser.add_argument("--mpiexec", default="mpiexec")
args = parser.parse_args()

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from program_checks import Checks, run_beatnik  # noqa: E402

check = Checks()


def run(opts, ranks=2, timeout=120):
    return run_beatnik(args.mpiexec, args.beatnik, opts, ranks, timeout)


tmp = tempfile.mkdtemp(prefix="beatnik-cli-")
results = os.path.join(tmp, "r.json")
state = os.path.join(tmp, "s.csv")
plain_fd, plain_file = tempfile.mkstemp(prefix="beatnik-cli-plain-")
os.close(plain_fd)

# Placement map files for 2 ranks (grid 2x1), kept out of `tmp` (which must stay empty).
maps = tempfile.mkdtemp(prefix="beatnik-cli-maps-")


def map_file(name, text):
    path = os.path.join(maps, name)
    with open(path, "w") as f:
        f.write(text)
    return "file:" + path

# (options, text expected in the one error message)
bad_inputs = [
    (["-n", "abc"], "nodes"),
    (["-n", "0"], "at least 4"),
    (["-n", "-5"], "nodes"),
    (["-n", "3"], "at least 4"),
    (["-B", "0"], "bounding-box"),
    (["-B", "-1.5"], "bounding-box"),
    (["-B", "x"], "bounding-box"),
    (["-t", "0"], "timesteps"),
    (["-t", "1.5"], "timesteps"),
    (["-t", "4", "--warmup", "4"], "--warmup must be at least 0 and less than the number of steps (4)"),
    (["-t", "4", "--warmup", "-1"], "--warmup must be at least 0"),
    (["--warmup", "two"], "warmup"),
    (["-d", "0"], "dt"),
    (["-d", "-0.1"], "dt"),
    (["-p", "0"], "period"),
    (["-w", "0"], "weak-scale"),
    (["-g", "-1"], "gravity"),
    (["-M", "-1"], "mu"),
    (["-e", "0"], "epsilon"),
    (["-c", "0"], "cutoff"),
    (["-O", "high", "-S", "cutoff", "-c", "-0.5"], "cutoff"),
    (["-O", "high", "-S", "cutoff", "-c", "inf"], "cutoff"),
    (["-O", "high", "-S", "cutoff", "-c", "5"], "spans more than two periods"),
    (["-O", "high", "-S", "cutoff", "--spatial-partition", "random"], "spatial-partition"),
    (["-O", "high", "-S", "cutoff", "--migrate-strategy", "carrier-pigeon"], "migrate-strategy"),
    (["-O", "high", "--br-strategy", "token-ring"], "unknown ring strategy 'token-ring'"),
    (["-O", "high", "-x", "cuda", "--gpu-transport", "nccl", "--br-strategy", "rma"],
     "ring strategy rma cannot move blocks over the nccl transport"),
    (["-O", "high", "-x", "cuda", "--gpu-transport", "cuda-aware", "--br-strategy", "rma"],
     "ring strategy rma cannot move blocks over the cuda-aware transport"),
    (["-O", "high", "-x", "cuda", "--gpu-transport", "nccl", "--br-strategy", "persistent"],
     "ring strategy persistent cannot move blocks over the nccl transport"),
    (["--halo-strategy", "carrier-pigeon"], "unknown halo strategy"),
    # NCCL replaces the MPI halo strategy: a non-default one is refused, not ignored (checked
    # before the device is touched, so it runs on any build).
    (["-x", "cuda", "--gpu-transport", "nccl", "--halo-strategy", "rma-lock"], "gpu-transport nccl"),
    (["--load-snapshot", "0"], "load-snapshot"),
    (["--load-snapshot", "x"], "load-snapshot"),
    (["-m", "nan"], "magnitude"),
    (["-a", "0"], "tau is undefined"),
    (["--max-stretch", "-1"], "max-stretch"),
    (["-O", "highest"], "unknown order"),
    (["-S", "fmm"], "unknown solver"),
    (["-O", "high", "-S", "tree", "--let-strategy", "bcast"], "unknown LET strategy"),
    (["-O", "high", "-S", "tree", "--tree-theta", "1.5"], "--tree-theta"),
    (["-O", "high", "-S", "tree", "--tree-degree", "99"], "--tree-degree"),
    (["-O", "high", "-S", "tree", "--tree-leaf", "0"], "--tree-leaf"),
    (["-O", "high", "-S", "tree", "--tree-traversal", "triple"], "--tree-traversal"),
    (["-O", "high", "-S", "tree", "--tree-edge-terms", "maybe"], "--tree-edge-terms"),
    (["-O", "high", "-S", "tree", "--tree-edge-margin", "0.9"], "--tree-edge-margin"),
    (["-O", "high", "-S", "tree", "--tree-edge-margin", "nan"], "--tree-edge-margin"),
    (["--br-tolerance", "0"], "--br-tolerance"),
    (["-O", "high", "--br-check", "-1"], "--br-check"),
    (["-O", "high", "--br-check", "100000000"], "--br-check"),
    (["-b", "open"], "unknown boundary"),
    (["--profile", "legacy"], "unknown --profile"),
    (["-I", "square"], "unknown initial condition"),
    (["-x", "hip"], "unknown execution space"),
    (["-H", "8"], "-H"),
    (["-H", "-1"], "-H"),
    (["--fft-exchange", "carrier-pigeon"], "fft-exchange"),
    (["--fft-intermediate", "cube"], "fft-intermediate"),
    (["--fftw-plan", "exhaustive"], "fftw-plan"),
    (["--ranks-grid", "3x1"], "3x1"),
    (["--ranks-grid", "2by1"], "ranks-grid"),
    (["--ranks-grid", "0x2"], "ranks-grid"),
    (["-n", "4", "--profile", "beatnik"], "too many ranks"),
    (["-b", "free"], "free boundaries"),
    (["--no-such-option"], "no-such-option"),
    (["--results", "/nonexistent-dir/r.json"], "does not exist"),
    (["--write-state", "/nonexistent-dir/s.csv"], "does not exist"),
    (["--write-state", tmp], "is a directory"),
    # a plain file where a directory should be (what a read-only directory is to root)
    (["--results", plain_file + "/r.json"], "does not exist"),
    (["-F", "1", "-o", plain_file + "/out"], "cannot be created"),
    (["--write-state-every", "5"], "needs --write-state"),
    (["-T", "0.1"], "a tilted plane is not periodic"),
    (["-i", "checkpoint.h5"], "no such file"),
    (["-F", "1", "-o", "/nonexistent-dir/out"], "cannot be created"),
    (["--checkpoint-every", "-1"], "checkpoint-every"),
    (["--async-output", "--hdf5-mode", "collective"], "async-output"),
    (["--placement", "hilbert"], "unknown --placement 'hilbert'"),
    (["--placement", "file:"], "needs the path"),
    (["--placement", "file:/nonexistent-dir/map.txt"], "cannot open the map file"),
    (["--placement", "file:" + maps], "is a directory"),
    (["--placement", map_file("syntax.txt", "0 0 0\n1 x 0\n")], "line 2: expected 'rank i j'"),
    (["--placement", map_file("dup.txt", "0 0 0\n1 0 0\n")], "line 2: coordinate (0, 0) is given twice"),
    (["--placement", map_file("range.txt", "0 0 0\n1 5 0\n")], "line 2: coordinate (5, 0) is outside"),
    (["--placement", map_file("missing.txt", "1 0 0\n")], "rank(s) missing (0)"),
    (["--ranks-per-node", "0"], "--ranks-per-node must be 1 or more"),
    (["--ranks-per-node", "-2"], "--ranks-per-node must be 1 or more"),
    (["--ranks-per-node", "x"], "ranks-per-node"),
    (["--halo-overlap=maybe"], "halo-overlap"),
    # device-ipc moves GPU memory: refused on a host run (and on a host-only build)
    (["--halo-strategy", "device-ipc"], "halo strategy device-ipc"),
    (["--ranks-per-gpu", "0"], "--ranks-per-gpu must be 1 or more"),
    (["-x", "cuda", "--ranks-per-gpu", "2", "--gpu-id", "0"], "give one of them"),
    (["--fft-transform", "r2r"], "unknown --fft-transform 'r2r'"),
    (["--fft-2d", "maybe"], "unknown --fft-2d 'maybe'"),
    (["--fft-2d-inverse", "half"], "unknown --fft-2d-inverse 'half'"),
    (["--fft-transform", "r2c", "--fft-2d", "on"], "--fft-2d on needs --fft-transform c2c or auto"),
    (["--buffer-align", "3"], "power of two"),
    (["--buffer-align", "0"], "power of two"),
    (["--buffer-align", "2147483648"], "power of two"),
    # --skeleton and --dry-run (docs/skeleton-and-dry-run.md)
    (["--skeleton-compute", "measured"], "needs --skeleton"),
    (["--skeleton", "--skeleton-compute", "fast"], "none, measured or a factor"),
    (["--skeleton", "--skeleton-compute", "-1"], "none, measured or a factor"),
    (["--skeleton", "--write-state", state], "--write-state cannot be used with it"),
    (["--dry-run", "--np", "4"], "plans in one process"),
    (["--np", "4"], "add --dry-run"),
    (["-O", "high", "--skeleton", "--br-check", "4"], "--br-check cannot be used with it"),
]

for opts, expect in bad_inputs:
    name = "bad input " + " ".join(opts)
    extra = ["--results", results] if "--results" not in opts else []
    if "--write-state" not in opts and "--write-state-every" not in opts:
        extra += ["--write-state", state]
    p = run(opts + extra, ranks=2, timeout=60)
    if p is None:
        check(name, False, "hung (no exit within 60 s)")
        continue
    errors = [l for l in p.stderr.splitlines() if l.startswith("beatnik: error:")]
    check(name + " exit code", p.returncode == 2, f"exit {p.returncode}, stderr {p.stderr[-400:]!r}")
    check(name + " one message", len(errors) == 1, f"{len(errors)} error lines: {p.stderr[-400:]!r}")
    check(name + " says what is wrong", expect in p.stderr, f"{expect!r} not in {p.stderr[-400:]!r}")
    check(name + " no abort trace", "MPI_ABORT" not in p.stderr and "MPI_Abort" not in p.stderr, p.stderr[-400:])
    check(name + " no files", not os.path.exists(results) and not os.path.exists(state)
          and not os.listdir(tmp), str(os.listdir(tmp)))

# An environment knob given a value it does not take (base/env.hpp; docs/tree.md "Environment
# knobs") is refused as a bad option is: exit 2, one message naming the variable, no hang.
p = run_beatnik(args.mpiexec, args.beatnik, ["-O", "high", "-S", "tree", "-n", "16", "-t", "1", "--results", results],
                2, 60, env=dict(os.environ, BEATNIK_TREE_DUAL_LISTS="fastest"))
check("bad environment knob exits", p is not None, "hung (no exit within 60 s)")
if p is not None:
    errors = [l for l in p.stderr.splitlines() if l.startswith("beatnik: error:")]
    check("bad environment knob exit code", p.returncode == 2, f"exit {p.returncode}, stderr {p.stderr[-400:]!r}")
    check("bad environment knob one message", len(errors) == 1 and "BEATNIK_TREE_DUAL_LISTS='fastest'" in errors[0]
          and "reference or fast" in errors[0], p.stderr[-400:])
    check("bad environment knob no results", not os.path.exists(results), str(os.listdir(tmp)))

# BEATNIK_HOST_KERNEL picks the host pair kernels' SIMD path (docs/tree.md "Environment knobs"):
# another value is refused like a bad option; a path this CPU lacks is refused with its name;
# each path it has runs, says so in the results, and reaches the default path's surface to
# round-off (the paths differ in how they form d^(-3/2)).
flags = open("/proc/cpuinfo").read().split() if os.path.exists("/proc/cpuinfo") else []
kernel_runs = {}
for value in ["avx3", "portable", "avx2", "avx512", ""]:
    env = dict(os.environ, BEATNIK_HOST_KERNEL=value)
    p = run_beatnik(args.mpiexec, args.beatnik, ["-O", "high", "-S", "tree", "-n", "24", "-t", "1", "--tree-leaf", "16",
                                                 "--results", results], 2, 60, env=env)
    name = f"BEATNIK_HOST_KERNEL={value!r}"
    check(name + " exits", p is not None, "hung (no exit within 60 s)")
    if p is None:
        continue
    errors = [l for l in p.stderr.splitlines() if l.startswith("beatnik: error:")]
    lacks = {"avx2": not ("avx2" in flags and "fma" in flags), "avx512": "avx512f" not in flags}.get(value, False)
    if value == "avx3" or lacks:
        expect = "avx512, avx2 or portable is expected" if value == "avx3" else "this CPU lacks"
        check(name + " refused: exit 2", p.returncode == 2, f"exit {p.returncode}, stderr {p.stderr[-400:]!r}")
        check(name + " refused: one message", len(errors) == 1 and "BEATNIK_HOST_KERNEL" in errors[0]
              and expect in errors[0], p.stderr[-400:])
        check(name + " refused: no results", not os.path.exists(results), str(os.listdir(tmp)))
    else:
        check(name + " runs", p.returncode == 0, p.stderr[-400:])
        if p.returncode == 0:
            doc = json.load(open(results))
            kernel_runs[value] = (doc["config"]["br"]["host_kernel"], doc["checksums"]["sum_abs_w"])
    for f in os.listdir(tmp):
        os.remove(os.path.join(tmp, f))
names = {"portable": "portable-simd", "avx2": "avx2-fma", "avx512": "avx512"}
for value, (kernel, _) in kernel_runs.items():
    if value:
        check(f"BEATNIK_HOST_KERNEL={value} reported", kernel == names[value], kernel)
if "" in kernel_runs:
    ref = kernel_runs[""][1]
    for value, (kernel, w) in kernel_runs.items():
        check(f"BEATNIK_HOST_KERNEL={value or 'unset'} ({kernel}) reaches the default's surface",
              abs(w - ref) <= 1e-11 * abs(ref), f"sum|w| {w!r} against {ref!r}")

# A file that cannot be written is never reported as written: exit 5, the file and the system's
# reason named once, on every rank count (the device /dev/full refuses every write).
if os.path.exists("/dev/full"):
    for ranks in (1, 3):
        for opts in (["--results", "/dev/full"], ["--write-state", "/dev/full"]):
            name = f"unwritable {' '.join(opts)} on {ranks} rank(s)"
            p = run(["-n", "16", "-t", "2", "--progress-every", "0"] + opts, ranks=ranks, timeout=60)
            if p is None:
                check(name, False, "hung")
                continue
            errors = [l for l in p.stderr.splitlines() if l.startswith("beatnik: error:")]
            check(name + " exit 5", p.returncode == 5, f"exit {p.returncode} {p.stderr[-300:]!r}")
            check(name + " one message naming the file and reason", len(errors) == 1 and "/dev/full" in errors[0]
                  and "No space left" in errors[0], p.stderr[-400:])
            check(name + " not reported written", "written to /dev/full" not in p.stdout, p.stdout[-200:])
    check("/dev/full still a device", os.path.exists("/dev/full") and not os.path.isfile("/dev/full"), "")
# Writing to a device works (no temporary file renamed over it).
p = run(["-n", "16", "-t", "2", "--progress-every", "0", "--results", "/dev/null", "--write-state", "/dev/null"],
        ranks=2)
check("results to /dev/null", p is not None and p.returncode == 0 and not os.path.isfile("/dev/null"),
      "" if p is None else p.stderr[-300:])

# An impossible mesh is refused before anything large is allocated: exit 2 naming the largest n
# that fits, a small peak RSS (ru_maxrss of the waited-for ranks), on 1 and 3 ranks.
for ranks in (1, 3):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    p = run(["-n", "100000000", "-t", "2", "--results", results], ranks=ranks, timeout=60)
    rss_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    name = f"impossible -n on {ranks} rank(s)"
    if p is None:
        check(name, False, "hung")
        continue
    errors = [l for l in p.stderr.splitlines() if l.startswith("beatnik: error:")]
    check(name + " exit 2", p.returncode == 2, f"exit {p.returncode} {p.stderr[-300:]!r}")
    check(name + " names the largest n", len(errors) == 1 and "largest n that fits" in errors[0], p.stderr[-400:])
    check(name + " peak RSS small", rss_kb < 400 * 1024, f"{rss_kb} KB (before: {before} KB)")
    check(name + " no files", not os.path.exists(results), "")

# Help and version: exit 0, printed once.
p = run(["--help"])
check("help exit", p is not None and p.returncode == 0, "")
if p is not None:
    for group in ["Problem", "Mesh and decomposition", "Physics and model", "Time stepping", "Execution",
                  "Distributed FFT", "Output"]:
        check(f"help has group {group}", group in p.stdout, "")
    for strategy in ["blocking", "overlap", "persistent", "rma"]:
        check(f"help lists ring strategy {strategy}", f"  {strategy} " in p.stdout, "")
    check("help printed once", p.stdout.count("Usage:") == 1 or p.stdout.count("beatnik [OPTIONS]") == 1,
          p.stdout[:200])
p = run(["--version"])
check("version", p is not None and p.returncode == 0 and p.stdout.startswith("beatnik ")
      and p.stdout.count("beatnik ") == 1, "" if p is None else p.stdout)

# A small successful run: results file and state file complete and consistent.
p = run(["-n", "16", "-t", "3", "--results", results, "--write-state", state])
check("small run exit", p is not None and p.returncode == 0, "" if p is None else p.stderr[-400:])
if p is not None and p.returncode == 0:
    doc = json.load(open(results))
    check("results schema", doc.get("schema") == "beatnik-results" and doc.get("schema_version") == 1, "")
    check("results status", doc.get("status") == "completed", doc.get("status"))
    check("results steps", doc["steps"]["done"] == 3 and len(doc["steps"]["seconds"]) == 3, "")
    check("results timers", "step" in doc["timers"]["regions"] and "fft.local" in doc["timers"]["regions"], "")
    check("results comm", doc["communication"]["halo"]["bytes_total"]["on_node"] > 0, "")
    check("results decomposition", doc["decomposition"]["ranks"] == 2, "")
    rows = list(csv.reader(open(state)))
    check("state header", rows[0] == ["i", "j", "x", "y", "z", "w1", "w2"], str(rows[0]))
    check("state rows", len(rows) == 1 + 16 * 16, str(len(rows)))
    order = [(int(r[0]), int(r[1])) for r in rows[1:]]
    check("state order", order == sorted(order) and order[0] == (0, 0) and order[-1] == (15, 15), "")
    check("state max z matches results", abs(max(float(r[4]) for r in rows[1:]) - doc["checksums"]["max_z3"])
          <= 1e-15 * abs(doc["checksums"]["max_z3"]), "")
    check("progress printed", "step      3/3" in p.stdout, p.stdout[-300:])
    check("summary printed", "figure of merit" in p.stdout and "Timer regions" in p.stdout, "")
    check("no temp files left", sorted(os.listdir(tmp)) == ["r.json", "s.csv"], str(os.listdir(tmp)))
    small_doc = doc
for f in os.listdir(tmp):
    os.remove(os.path.join(tmp, f))

# --warmup: 2 of 6 steps run but are left out; statistics over the 4 measured steps.
p = run(["-n", "16", "-t", "6", "--warmup", "2", "--results", results])
check("warmup run exit", p is not None and p.returncode == 0, "" if p is None else p.stderr[-400:])
if p is not None and p.returncode == 0:
    doc = json.load(open(results))
    st = doc["steps"]
    check("warmup reported", doc["warmup"]["steps"] == 2 and len(doc["warmup"]["step_seconds"]) == 2
          and doc["warmup"]["seconds"] > 0, str(doc.get("warmup")))
    check("warmup measured steps", st["done"] == 6 and st["measured"] == 4 and len(st["seconds"]) == 4, str(st))
    q = st["statistics"]
    check("warmup quantiles ordered", q["count"] == 4 and q["min"] <= q["p50"] <= q["p90"] <= q["p99"] <= q["max"]
          and q["min"] == min(st["seconds"]) and q["max"] == max(st["seconds"]), str(q))
    w = st["window2"]
    pairs = [a + b for a, b in zip(st["seconds"], st["seconds"][1:])]
    check("warmup window of two", w["count"] == 3 and abs(w["max"] - max(pairs)) <= 1e-12 * max(pairs)
          and w["min"] <= w["p50"] <= w["p90"] <= w["p99"] <= w["max"], str(w))
    check("warmup outliers listed", isinstance(st["outliers"], list)
          and all(4 > o["step"] - 3 >= 0 and o["seconds"] > q["outlier_threshold"] for o in st["outliers"]),
          str(st["outliers"]))
    series = doc["timers"]["series"]
    check("warmup series lengths", "step" in series and all(len(s) == 4 for s in series.values()),
          str({k: len(s) for k, s in series.items()}))
    check("warmup step calls", doc["timers"]["regions"]["step"]["calls_per_step"] == 1.0,
          str(doc["timers"]["regions"]["step"]))
    if "small_doc" in globals():
        check("warmup bytes per step as without warm-up",
              doc["communication"]["halo"]["bytes_per_step_total"] == small_doc["communication"]["halo"]["bytes_per_step_total"],
              str(doc["communication"]["halo"]))
    check("warmup summary", "warm-up               2 step(s)" in p.stdout and "Step time" in p.stdout
          and "two steps" in p.stdout, p.stdout[-1500:])
for f in os.listdir(tmp):
    os.remove(os.path.join(tmp, f))

# A small cutoff-solver run: its timer regions, patterns and load-balance report.
p = run(["-O", "high", "-S", "cutoff", "-n", "16", "-c", "0.3", "-t", "2", "--spatial-partition", "balanced",
         "--load-snapshot", "1,2,7", "--results", results])
check("cutoff run exit", p is not None and p.returncode == 0, "" if p is None else p.stderr[-400:])
if p is not None and p.returncode == 0:
    doc = json.load(open(results))
    regions = doc["timers"]["regions"]
    for r in ["br.cutoff.to_spatial", "br.cutoff.ghosts", "br.cutoff.bin", "br.cutoff.compute", "br.cutoff.to_surface"]:
        check(f"cutoff timer {r}", r in regions, str(sorted(regions)))
    check("cutoff patterns", "migrate" in doc["communication"] and "ghost" in doc["communication"],
          str(sorted(doc["communication"])))
    lb = doc.get("load_balance", {})
    check("cutoff load snapshots", sorted(lb.get("snapshots", {})) == ["1", "2"]
          and len(lb["snapshots"]["2"]["particles"]) == 2
          and sum(lb["snapshots"]["1"]["particles"]) == 16 * 16, str(lb.get("snapshots")))
    check("cutoff load series", len(lb["per_step"]["pairs"]["max"]) == 2 and lb["run_mean"]["pairs"]["min"] > 0, "")
    check("cutoff config", doc["config"]["br"]["cutoff"]["spatial_partition"] == "balanced", "")
    check("cutoff summary", "Load balance" in p.stdout and "pairs within the cutoff" in p.stdout, p.stdout[-600:])
for f in os.listdir(tmp):
    os.remove(os.path.join(tmp, f))

# A small tree-solver run (one rank) with --br-check: its timer regions, the check per step,
# the interaction counts.
p = run(["-O", "high", "-S", "tree", "-n", "24", "-t", "2", "--tree-leaf", "16", "--br-check", "40",
         "--results", results], ranks=1)
check("tree run exit", p is not None and p.returncode == 0, "" if p is None else p.stderr[-400:])
if p is not None and p.returncode == 0:
    doc = json.load(open(results))
    regions = doc["timers"]["regions"]
    for r in ["br.tree.build", "br.tree.upward", "br.tree.compute", "br.tree.compute.near", "br.tree.compute.far",
              "br.tree.compute.down", "br.check"]:
        check(f"tree timer {r}", r in regions, str(sorted(regions)))
    bc = doc.get("br_check", {})
    check("tree br_check", bc.get("samples") == 40 and len(bc.get("steps", [])) == 2
          and all(s["calls"] == 3 and 0 < s["rms_rel"] < 1e-5 for s in bc["steps"]), str(bc))
    check("tree counts", doc["performance"]["br_tree"]["direct_pairs_per_call"] > 0, str(doc["performance"]))
    check("tree config: the default tolerance picked theta and degree",
          doc["config"]["br"]["tree"]["tolerance"] == 1e-6, str(doc["config"]["br"]))
    check("tree config: the dual traversal by default", doc["config"]["br"]["tree"]["traversal"] == "dual",
          str(doc["config"]["br"]))
    check("tree config: TOL 1e-6's edge margin", doc["config"]["br"]["tree"]["edge_margin"] == 1.0,
          str(doc["config"]["br"]))
    check("tree banner: the edge margin", "edge terms on (margin 1)" in p.stdout, p.stdout[:900])
    check("tree summary", "BR check" in p.stdout and "tree solver" in p.stdout, p.stdout[-600:])
    check("tree banner: the periodic images", "3x3 images centred on the nearest" in p.stdout, p.stdout[:900])
for f in os.listdir(tmp):
    os.remove(os.path.join(tmp, f))

# On a free surface no solver takes periodic images (their period is 0): the banner and the
# results say so, for the exact and the tree solver alike.
for solver in ["exact", "tree"]:
    p = run(["-O", "high", "-S", solver, "-n", "16", "-t", "1", "-b", "free", "--results", results], ranks=1)
    check(f"free {solver} run exit", p is not None and p.returncode == 0, "" if p is None else p.stderr[-400:])
    if p is not None and p.returncode == 0:
        banner = [line for line in p.stdout.splitlines() if line.strip().startswith("BR ")]
        check(f"free {solver} banner: no periodic images", len(banner) == 1 and "no periodic images" in banner[0]
              and "3x3" not in banner[0], str(banner))
        images = json.load(open(results))["config"]["br"]["images"]
        check(f"free {solver} results: no periodic images", images == "no periodic images (free)", images)
    for f in os.listdir(tmp):
        os.remove(os.path.join(tmp, f))

# The tree solver on 2 ranks with each LET strategy: the LET's timer region and its bytes
# (pattern "let", between ranks only), the config names the strategy, and all reach the same
# surface; rma pulls what the push sends (bar the block headers and a 12th double per cluster
# record), so its bytes are within a few per cent of alltoallv's.
tree_z, tree_let_bytes = {}, {}
for strategy in ["alltoallv", "sparse", "rma"]:
    # θ and degree given (the values TOL 1e-6 picks): no tolerance in the config.
    p = run(["-O", "high", "-S", "tree", "-n", "24", "-t", "2", "--tree-leaf", "16", "--let-strategy", strategy,
             "--tree-theta", "0.5", "--tree-degree", "10", "--spatial-partition", "balanced", "--results", results],
            ranks=2)
    check(f"tree {strategy} exit", p is not None and p.returncode == 0, "" if p is None else p.stderr[-400:])
    if p is None or p.returncode != 0:
        continue
    doc = json.load(open(results))
    check(f"tree {strategy} timer", "br.tree.let" in doc["timers"]["regions"], str(sorted(doc["timers"]["regions"])))
    let = doc["communication"].get("let", {})
    b = let.get("bytes_total", {})
    check(f"tree {strategy} let bytes", let.get("exchanges_per_step_rank0", 0) > 0 and b.get("self", 1) == 0
          and b.get("on_node", 0) + b.get("off_node", 0) > 0, str(let))
    tc = doc["config"]["br"]["tree"]
    check(f"tree {strategy} config", tc["let_strategy"] == strategy and tc["tolerance"] is None
          and tc["theta"] == 0.5 and tc["degree"] == 10 and tc["let_path"] == "mpi", str(doc["config"]["br"]))
    tree_z[strategy] = doc["checksums"]["max_z3"]
    tree_let_bytes[strategy] = b.get("on_node", 0) + b.get("off_node", 0)
check("tree LET strategies agree", len(tree_z) == 3 and len(set(tree_z.values())) == 1, str(tree_z))
if len(tree_let_bytes) == 3:
    check("tree LET rma bytes", 0.95 < tree_let_bytes["rma"] / tree_let_bytes["alltoallv"] < 1.25
          and tree_let_bytes["sparse"] == tree_let_bytes["alltoallv"], str(tree_let_bytes))
# The tree solver's per-rank load (load_balance, as the cutoff solver reports it): one step on 2
# ranks, the ranks' counts at the snapshot add up to the totals the solver keeps apart
# (performance.br_tree: its own counters over the step's 3 calls).
p = run(["-O", "high", "-S", "tree", "-n", "24", "-t", "1", "--tree-leaf", "16", "--load-snapshot", "1",
         "--results", results], ranks=2)
check("tree load exit", p is not None and p.returncode == 0, "" if p is None else p.stderr[-400:])
if p is not None and p.returncode == 0:
    doc = json.load(open(results))
    lb, t = doc.get("load_balance") or {}, doc["performance"]["br_tree"]
    snap = (lb.get("snapshots") or {}).get("1", {})
    check("tree load solver", lb.get("solver") == "tree" and lb.get("quantities", [])[:3] == [
        "particles", "let_particles", "direct_pairs"] and len(snap.get("particles", [])) == 2, json.dumps(lb)[:400])
    close = lambda a, b: abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1.0)  # noqa: E731
    if snap and t["calls"] == 3:
        check("tree load pairs", close(sum(snap["direct_pairs"]), 3 * t["direct_pairs_per_call"])
              and close(sum(snap["proxy_pairs"]), 3 * t["proxy_pairs_per_call"])
              and close(sum(snap["cluster_terms"]), 3 * t["cluster_terms_per_call"]), f"{snap} {t}")
        check("tree load let bytes", close(max(snap["let_bytes"]), 3 * t["let_bytes_per_call_max_rank"])
              and min(snap["let_bytes"]) > 0, f"{snap} {t}")
    else:
        check("tree load calls", False, f"{t} {snap}")
    check("tree load summary", "Load balance, tree Birkhoff-Rott" in p.stdout, p.stdout[-600:])
for f in os.listdir(tmp):
    os.remove(os.path.join(tmp, f))

# A small high-order run with each ring strategy: the banner and the results name it, the ring's
# timer regions and bytes are there, and every strategy reaches the same surface.
max_z = {}
for strategy in ["blocking", "overlap", "persistent", "rma"]:
    p = run(["-O", "high", "-n", "16", "-t", "2", "--br-strategy", strategy, "--results", results])
    check(f"ring {strategy} run exit", p is not None and p.returncode == 0, "" if p is None else p.stderr[-400:])
    if p is None or p.returncode != 0:
        continue
    doc = json.load(open(results))
    check(f"ring {strategy} config", doc["config"]["br"]["strategy"] == strategy, str(doc["config"].get("br")))
    check(f"ring {strategy} banner", f"ring {strategy}," in p.stdout, p.stdout[:800])
    kernel = doc["config"]["br"].get("host_kernel")  # chosen by cpuid (docs/br.md)
    check(f"ring {strategy} host kernel", kernel in ("avx512", "avx2-fma", "portable-simd")
          and f"host kernel {kernel}" in p.stdout, str(kernel))
    regions = doc["timers"]["regions"]
    for r in ["br.exact.compute", "br.exact.ring", "br.exact.ring.hidden"]:
        check(f"ring {strategy} timer {r}", r in regions, str(sorted(regions)))
    check(f"ring {strategy} bytes", doc["communication"]["ring"]["bytes_total"]["on_node"] > 0,
          str(doc["communication"].get("ring")))
    max_z[strategy] = doc["checksums"]["max_z3"]
check("ring strategies agree", len(set(max_z.values())) == 1, str(max_z))
# A non-default halo strategy: carried into the results' config and banner, its phases timed.
p = run(["-n", "16", "-t", "2", "--halo-strategy", "rma-pscw", "--results", results])
check("halo strategy run exit", p is not None and p.returncode == 0, "" if p is None else p.stderr[-400:])
if p is not None and p.returncode == 0:
    doc = json.load(open(results))
    check("halo strategy config", doc["config"].get("halo_strategy") == "rma-pscw", str(doc["config"].get("halo_strategy")))
    check("halo strategy banner", "strategy rma-pscw" in p.stdout, p.stdout[:600])
    regions = doc["timers"]["regions"]
    for r in ["halo.state", "halo.V"]:
        for phase in ["pack", "post", "wait", "unpack"]:
            check(f"halo phase timer {r}.{phase}", f"{r}.{phase}" in regions, str(sorted(regions)))
# --buffer-align changes where buffers lie, never what they hold: the state is bitwise the same.
states = {}
for align in ("4096", "2097152", "8"):
    out = os.path.join(maps, f"align-{align}.csv")
    p = run(["-n", "16", "-t", "2", "--buffer-align", align, "--write-state", out, "--results", results])
    check(f"buffer-align {align} run exit", p is not None and p.returncode == 0, "" if p is None else p.stderr[-400:])
    if p is not None and p.returncode == 0:
        states[align] = open(out).read()
        doc = json.load(open(results))
        check(f"buffer-align {align} in config", doc["config"].get("buffer_align") == int(align), str(doc["config"].get("buffer_align")))
check("buffer-align keeps the state", len(states) == 3 and len(set(states.values())) == 1, str(list(states)))
p = run(["--help"])
if p is not None:
    for name in ["isend", "persistent", "neighbor", "rma-fence", "rma-pscw", "rma-lock", "device-ipc"]:
        check(f"help lists halo strategy {name}", name in p.stdout, "")
# Placement: the map and nodes in the banner and results, the counted bytes following the
# nodes (--ranks-per-node 1: no rank shares a node, so nothing is on-node), and the results
# written when grid rank 0 is not the first rank (the reversed map on 2 ranks).
for ranks, placement in ((3, "node-blocks"), (3, "random"), (2, map_file("rev.txt", "0 1 0\n1 0 0\n"))):
    name = f"placement {placement} on {ranks} ranks"
    p = run(["-n", "16", "-t", "2", "--placement", placement, "--ranks-per-node", "1", "--results", results],
            ranks=ranks)
    check(name + " exit", p is not None and p.returncode == 0, "" if p is None else p.stderr[-400:])
    if p is None or p.returncode != 0:
        continue
    check(name + " banner", "placement   " in p.stdout and "map         rank:(i,j)node" in p.stdout, p.stdout[:800])
    check(name + " results written once", p.stdout.count("results written to") == 1, p.stdout[-300:])
    doc = json.load(open(results))
    pl = doc["decomposition"]["placement"]
    coords = [tuple(c) for c in pl["coords_of_rank"]]
    grid = doc["decomposition"]["grid"]
    check(name + " map is a permutation", sorted(coords) == [(i, j) for i in range(grid[0]) for j in range(grid[1])],
          str(coords))
    check(name + " nodes", pl["nodes_from"] == "ranks-per-node" and pl["node_of_rank"] == list(range(ranks)), str(pl))
    for pat, c in doc["communication"].items():
        check(f"{name} {pat} nothing on-node", c["bytes_total"]["on_node"] == 0 and c["bytes_total"]["off_node"] > 0,
              str(c["bytes_total"]))
    if placement.startswith("file:"):
        check(name + " reversed map", coords == [(1, 0), (0, 0)], str(coords))
for f in os.listdir(tmp):
    os.remove(os.path.join(tmp, f))

# --halo-overlap: the banner and the results config say so, the halo regions time start and
# finish apart (twice the calls), and the surface is bitwise the one without overlap.
runs = {}
for overlap in (False, True):
    p = run(["-n", "16", "-t", "2", "--results", results] + (["--halo-overlap"] if overlap else []), ranks=3)
    check(f"overlap={overlap} run exit", p is not None and p.returncode == 0, "" if p is None else p.stderr[-400:])
    if p is None or p.returncode != 0:
        continue
    doc = json.load(open(results))
    check(f"overlap={overlap} config", doc["config"].get("halo_overlap") is overlap, str(doc["config"].get("halo_overlap")))
    check(f"overlap={overlap} banner", ("overlapped with interior work" in p.stdout) == overlap, p.stdout[:900])
    runs[overlap] = doc
if len(runs) == 2:
    calls = {o: runs[o]["timers"]["regions"]["halo.state"]["calls_per_step"] for o in runs}
    check("overlap times start and finish", calls[True] == 2 * calls[False], str(calls))
    check("overlap bitwise equal checksums", runs[True]["checksums"] == runs[False]["checksums"],
          f"{runs[True]['checksums']} vs {runs[False]['checksums']}")
for f in os.listdir(tmp):
    os.remove(os.path.join(tmp, f))

# The reference's unstable default problem at n = 32: the run stops with exit 3, names step,
# rank and node, and still writes the results (status failed) and the state.
p = run(["--profile", "beatnik", "-n", "32", "-t", "60", "--results", results, "--write-state", state])
check("blow-up exit 3", p is not None and p.returncode == 3, "" if p is None else f"{p.returncode} {p.stderr[-300:]}")
if p is not None:
    check("blow-up message", "step" in p.stderr and "rank" in p.stderr and "node" in p.stderr, p.stderr[-300:])
    ok = os.path.exists(results)
    check("blow-up results written", ok, "")
    if ok:
        doc = json.load(open(results))
        check("blow-up results status", doc["status"] == "failed" and "step" in doc["message"], doc["status"])
    check("blow-up state written", os.path.exists(state), "")

# --dry-run of the paper's 1024-rank low-order weak-scaling case (4864^2 nodes per rank): fast, in
# one process, nothing of the 155648^2 mesh allocated; the FFT bytes rank 5 sends per step
# (self included) follow from 3 derivatives x 2 transforms x 3 pencil reshapes.
for f in os.listdir(tmp):
    os.remove(os.path.join(tmp, f))
t0 = time.time()
p = run(["--dry-run", "-np", "1024", "-n", "4864", "-w", "1024", "--ranks-per-node", "4", "--results", results],
        ranks=1)
took = time.time() - t0
check("dry run 1024 exit", p is not None and p.returncode == 0, "" if p is None else p.stderr[-400:])
if p is not None and p.returncode == 0:
    check("dry run 1024 fast", took < 60, f"{took:.1f} s")
    doc = json.load(open(results))
    fft = doc["dry_run"]["per_rank_per_step"][5]["patterns"]["fft"]["bytes"]
    # The half spectrum (docs/fft.md): the first (column) reshape carries all 4864^2 nodes complex
    # forward (16 B) and real back (8 B). After the x transforms the x-lines are cut to
    # [0, 155648/2 + 1 = 77825): rank 5 (grid row 0, column 5) holds 77825 x (4864/32 = 152) of
    # them, sent as two complex fields (32 B) to the half blocks, its own half block being
    # [0, 2433) x 4864 (77825 split 32 ways, row 0 gets the remainder); back it sends that block
    # one field (16 B). The row reshape sends the half block two fields forward (32 B) and its
    # y-lines, 76 of the block's 2433 i (column 5) x 155648, one field back (16 B).
    m = 4864 * 4864
    riesz = 24 * m + 32 * 77825 * 152 + (16 + 32) * 2433 * 4864 + 16 * 76 * 155648
    check("dry run 1024 fft bytes", sum(fft.values()) == 3 * riesz, str(fft))
    check("dry run 1024 nodes", doc["decomposition"]["node_count"] == 256, str(doc["decomposition"]["node_count"]))

# --dry-run of the cutoff-weak case (16 ranks, laptop scale): migrate and ghost are estimated from
# the initial surface and say so, in the table and in the results.
p = run(["--case", "cutoff-weak", "--case-scale", "0.125", "--dry-run", "--np", "16", "--ranks-per-node", "4",
         "--results", results], ranks=1)
check("dry run cutoff exit", p is not None and p.returncode == 0, "" if p is None else p.stderr[-400:])
if p is not None and p.returncode == 0:
    check("dry run cutoff marked", "ghost*" in p.stdout and "estimated from the initial surface" in p.stdout,
          p.stdout[-600:])
    doc = json.load(open(results))
    pats = doc["dry_run"]["per_rank_per_step"][0]["patterns"]
    check("dry run cutoff estimated", pats["ghost"]["estimated"] and pats["migrate"]["estimated"]
          and not pats["halo"]["estimated"] and doc["dry_run"]["estimated"]["patterns"] == ["ghost", "migrate"],
          json.dumps(doc["dry_run"]["estimated"]))
    check("dry run cutoff sections", "ghost" in doc["communication"] and "migrate" in doc["communication"],
          str(list(doc["communication"])))
# A -x cuda run over NCCL is planned on this host build too (its messages need no device).
p = run(["--dry-run", "--np", "4", "-n", "18", "-x", "cuda", "--gpu-transport", "nccl", "--fft-exchange",
         "alltoall", "--results", results], ranks=1)
check("dry run nccl exit", p is not None and p.returncode == 0, "" if p is None else p.stderr[-400:])
if p is not None and p.returncode == 0:
    check("dry run nccl transport", json.load(open(results))["dry_run"]["transport"] == "nccl", p.stdout[-400:])
# The tree solver's migration and locally essential tree are estimated from the initial surface
# (not planned as the exact solver's ring pass); the pulled LET too.
for let in ("alltoallv", "rma"):
    p = run(["--dry-run", "--np", "2", "-n", "16", "-O", "medium", "-S", "tree", "--let-strategy", let,
             "--results", results], ranks=1)
    check(f"dry run tree {let} exit", p is not None and p.returncode == 0, "" if p is None else p.stderr[-400:])
    if p is not None and p.returncode == 0:
        doc = json.load(open(results))
        check(f"dry run tree {let} sections", "let" in doc["communication"] and "migrate" in doc["communication"]
              and "ring" not in doc["communication"] and doc["dry_run"]["estimated"]["patterns"] == ["let", "migrate"],
              str(list(doc["communication"])))

shutil.rmtree(maps, ignore_errors=True)
shutil.rmtree(tmp, ignore_errors=True)
os.remove(plain_file)
check.finish()
