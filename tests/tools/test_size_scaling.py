#!/usr/bin/env python3
"""beatnik-report's figure of BR call time against problem size (issue 16) on a tiny real study
run here by beatnik-sweep, high order: the tree solver at four sizes (one size twice: a
repetition), the exact solver at two sizes on 1 rank and on 2 ranks (where its pair region runs
once per ring round), and a cutoff run at one size that must draw no series. Every CSV number is
recomputed here from the results files, with the solvers' phase regions named here and 3 BR calls
per step (RK3); the report on the bare results folder (no manifest) must give the same CSV; the
PNG and SVG must be valid and the page must render in headless Chromium with the figure loaded."""
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from program_checks import Checks  # noqa: E402
from test_accuracy_cost import PHASES  # noqa: E402
from test_sweep_report import close, figure_on_page, read_csv, report_figure, run, study_test_main  # noqa: E402

check = Checks()
TREE = "tree TOL=0.001, high order, cos periodic, 1 rank, host"
EXACT1 = "exact, high order, cos periodic, 1 rank, host"
EXACT2 = "exact, high order, cos periodic, 2 ranks, host"
# entry -> (ranks, n, solver options, the series the figure should put it in; None: no series)
ENTRIES = {
    "tree16": (1, 16, ["-S", "tree", "--br-tolerance", "1e-3"], TREE),
    "tree16b": (1, 16, ["-S", "tree", "--br-tolerance", "1e-3"], TREE),
    "tree24": (1, 24, ["-S", "tree", "--br-tolerance", "1e-3"], TREE),
    "tree32": (1, 32, ["-S", "tree", "--br-tolerance", "1e-3"], TREE),
    "tree48": (1, 48, ["-S", "tree", "--br-tolerance", "1e-3"], TREE),
    "exact16": (1, 16, ["-S", "exact"], EXACT1),
    "exact32": (1, 32, ["-S", "exact"], EXACT1),
    "exact2r16": (2, 16, ["-S", "exact"], EXACT2),
    "exact2r24": (2, 24, ["-S", "exact"], EXACT2),
    "cutoff16": (1, 16, ["-S", "cutoff", "-c", "0.5"], None),   # one size only: no series
}
CALLS = 3   # RK3: one BR call per stage
HEADER = ["series", "mesh", "N", "seconds_per_call", "repetitions", "calls_per_step", "ratio_to_previous",
          "nlogn_ratio_to_previous", "measured_over_nlogn_from_smallest"]


def write_study(path, beatnik):
    text = [f'name = "size"\nprogram = "{beatnik}"\nargs = ["-O", "high", "-t", "3", "--warmup", "1"]\n']
    for name, (ranks, n, opts, _) in ENTRIES.items():
        text.append(f'[[entry]]\nname = "{name}"\nranks = [{ranks}]\nargs = {json.dumps(["-n", str(n)] + opts)}\n')
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(text))


def per_call(name, doc):
    """Seconds per BR call of one results file: its solver's phase regions ÷ 3 calls per step."""
    solver = doc["config"]["solver"]
    regions = doc["timers"]["regions"]
    check(f"{name}: the solver's phases timed", PHASES[solver][0] in regions, sorted(regions))
    entered = regions[PHASES[solver][0]]["calls_per_step"]
    check(f"{name}: {solver}'s first phase entered 3 times a step (per rank for exact)",
          entered == CALLS * (doc["decomposition"]["ranks"] if solver == "exact" else 1), entered)
    return sum(regions[r]["median"] for r in PHASES[solver] if r in regions) / CALLS


def expected_rows(runs_dir):
    """[CSV row as a dict] computed from the results files, series by name, sizes by N."""
    by = {}
    for name, (ranks, n, opts, series) in ENTRIES.items():
        doc = json.load(open(os.path.join(runs_dir, f"{name}.np{ranks}.json")))
        check(f"{name}: ran {n}² on {ranks} rank(s)", doc["config"]["mesh_nodes"] == [n, n] and
              doc["decomposition"]["ranks"] == ranks, doc["config"]["mesh_nodes"])
        t = per_call(name, doc)
        if series is not None:
            by.setdefault(series, {}).setdefault(n * n, []).append(t)
    rows = []
    for series in sorted(by):
        sizes = sorted(by[series])
        t0, n0 = statistics.median(by[series][sizes[0]]), sizes[0]
        prev = None
        for N in sizes:
            t = statistics.median(by[series][N])
            row = {"series": series, "mesh": f"{math.isqrt(N)}²", "N": N, "seconds_per_call": t,
                   "repetitions": len(by[series][N]), "calls_per_step": CALLS}
            if prev is not None:
                row.update(ratio_to_previous=t / prev[1],
                           nlogn_ratio_to_previous=N * math.log(N) / (prev[0] * math.log(prev[0])),
                           measured_over_nlogn_from_smallest=(t / t0) / (N * math.log(N) / (n0 * math.log(n0))))
            rows.append(row)
            prev = (N, t)
    return rows


def compare(what, path, want):
    rows = read_csv(path) if os.path.isfile(path) else []
    check(f"{what}: the CSV's columns", bool(rows) and list(rows[0]) == HEADER, list(rows[0]) if rows else path)
    check(f"{what}: one row per series and size, the single-size cutoff run left out",
          [(r["series"], r["N"]) for r in rows] == [(w["series"], str(w["N"])) for w in want],
          ([(r["series"], r["N"]) for r in rows], [(w["series"], w["N"]) for w in want]))
    for r, w in zip(rows, want):
        # a series' smallest N has no ratios: empty cells
        ok = r["mesh"] == w["mesh"] and all(close(r[k], w[k]) if k in w else r[k] == "" for k in HEADER[2:])
        check(f"{what}: {w['series']} N={w['N']}", ok, (r, w))


def report_part(a, tmp, out):
    rep = os.path.join(tmp, "report")
    base = report_figure(check, a.report, [out], rep, "size-scaling")
    want = expected_rows(os.path.join(out, "runs"))
    compare("study", base + ".csv", want)
    figure_on_page(check, a.chromium, rep, "BR call time against problem size",
                   "Birkhoff-Rott call time against problem size", "size-scaling")
    # The runs folder alone, as a benchmark script leaves its results: the same figure.
    bare = os.path.join(tmp, "bare")
    compare("bare results folder", report_figure(check, a.report, [os.path.join(out, "runs")], bare,
                                                 "size-scaling") + ".csv", want)
    # One size per group only: no figure, no file.
    one = os.path.join(tmp, "one")
    code, so, se = run([a.report, os.path.join(out, "runs", "tree16.np1.json"),
                        os.path.join(out, "runs", "exact32.np1.json"), "--out", one])
    check("one size per group: no size-scaling figure", code == 0 and
          not any(f.startswith("size-scaling") for f in os.listdir(one)), (code, se[-300:]))


if __name__ == "__main__":
    study_test_main(check, "size", write_study, report_part)
