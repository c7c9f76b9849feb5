#!/usr/bin/env python3
"""beatnik-report's accuracy-cost figure (docs/tree.md, "Accuracy and cost") on a tiny real study
run here by beatnik-sweep: the paper's two high-order cases at a laptop scale, each with the exact,
cutoff and tree solvers and --br-check (two repetitions, one tree entry on 2 ranks, one run
without the check). Every CSV number is recomputed here from the results files: time per BR call
= the solver's phase regions (named here) ÷ 3 calls per step (RK3), error = br_check; the PNG and
SVG must be valid, the page must render in headless Chromium with every figure loaded, and
runs without --br-check draw no such figure."""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from program_checks import Checks  # noqa: E402
from test_sweep_report import close, figure_on_page, read_csv, report_figure, run, study_test_main  # noqa: E402

check = Checks()
CHECK = ["--br-check", "16"]
# entry -> (case, scale, ranks, solver options, setting as the figure should label it)
ENTRIES = {
    "weak-exact": ("cutoff-weak", 0.03125, 1, ["-S", "exact"], "exact"),
    "weak-cut": ("cutoff-weak", 0.03125, 1, ["-S", "cutoff", "-c", "1.5"], "c=1.5"),
    "weak-tree": ("cutoff-weak", 0.03125, 1, ["-S", "tree", "--br-tolerance", "1e-3"], "TOL=0.001"),
    "strong-exact": ("cutoff-strong", 0.0625, 1, ["-S", "exact"], "exact"),
    "strong-cut": ("cutoff-strong", 0.0625, 1, ["-S", "cutoff", "-c", "0.75"], "c=0.75"),
    "strong-tree": ("cutoff-strong", 0.0625, 1, ["-S", "tree", "--tree-theta", "0.6", "--tree-degree", "6"],
                    "θ=0.6 p=6"),
    "strong-tree2": ("cutoff-strong", 0.0625, 2, ["-S", "tree", "--br-tolerance", "1e-6"], "TOL=1e-06"),
}
# The phases of one BR call, per solver (docs/br.md, cutoff.md, tree.md); br.check is not one.
PHASES = {"exact": ["br.exact.compute", "br.exact.ring"],
          "cutoff": ["br.cutoff.to_spatial", "br.cutoff.ghosts", "br.cutoff.bin", "br.cutoff.compute",
                     "br.cutoff.to_surface"],
          "tree": ["br.tree.to_spatial", "br.tree.let", "br.tree.build", "br.tree.upward", "br.tree.low",
                   "br.tree.compute", "br.tree.to_surface"]}
REPS = 2


def write_study(path, beatnik):
    text = [f'name = "acc"\nprogram = "{beatnik}"\nrepetitions = {REPS}\nargs = ["-t", "2", "--warmup", "1"]\n']
    for name, (case, scale, ranks, opts, _) in ENTRIES.items():
        text.append(f'[[entry]]\nname = "{name}"\ncase = "{case}"\ncase_scale = {scale}\nranks = [{ranks}]\n'
                    f"args = {json.dumps(opts + CHECK)}\n")
    text.append('[[entry]]\nname = "nocheck"\ncase = "cutoff-weak"\ncase_scale = 0.03125\nranks = [1]\n'
                'args = ["-S", "exact"]\n')
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(text))


def expected_rows(out):
    """{(panel, solver, setting): row} computed from the results files of the study in `out`."""
    want = {}
    for name, (case, scale, ranks, opts, setting) in ENTRIES.items():
        docs = [json.load(open(os.path.join(out, "runs", f"{name}.np{ranks}.r{k}.json"))) for k in range(1, REPS + 1)]
        solver = opts[1]
        per_call, rms, mx = [], [], []
        for d in docs:
            regions = d["timers"]["regions"]
            bc = d["br_check"]
            check(f"{name}: every step's 3 BR calls checked at 16 nodes",
                  bc["samples"] == 16 and [s["calls"] for s in bc["steps"]] == [3, 3], bc)
            check(f"{name}: the solver's phases timed", PHASES[solver][0] in regions and
                  all(r in PHASES[solver] or not r.startswith(f"br.{solver}.") or
                      any(r.startswith(p + ".") for p in PHASES[solver]) for r in regions), sorted(regions))
            per_call.append(sum(regions[r]["median"] for r in PHASES[solver] if r in regions) / 3)
            rms.append(bc["rms_rel"])
            mx.append(bc["max_rel"])
        c = docs[0]["config"]
        if solver == "tree":
            tol = c["br"]["tree"]["tolerance"]
            check(f"{name}: config.br.tree.tolerance", tol == (float(opts[3]) if opts[2] == "--br-tolerance"
                                                               else None), c["br"]["tree"])
        panel = f"{case}, {c['mesh_nodes'][0]}×{c['mesh_nodes'][1]} nodes, {ranks} rank{'s' if ranks > 1 else ''}"
        want[(panel, solver, setting)] = {"seconds_per_call": statistics.median(per_call),
                                          "rms_rel": statistics.median(rms), "max_rel": statistics.median(mx),
                                          "runs": REPS, "samples": 16, "calls_per_step": 3}
    return want


def report_part(a, tmp, out):
    rep = os.path.join(tmp, "report")
    base = report_figure(check, a.report, [out], rep, "accuracy-cost")
    rows = read_csv(base + ".csv") if os.path.isfile(base + ".csv") else []
    want = expected_rows(out)
    got = {(r["panel"], r["solver"], r["setting"]): r for r in rows}
    check("accuracy-cost: one row per checked series (the run without --br-check left out)",
          sorted(got) == sorted(want) and len(rows) == len(want), (sorted(got), sorted(want)))
    for key, w in want.items():
        r = got.get(key)
        check(f"accuracy-cost {key}", r is not None and all(close(r[k], w[k]) for k in w),
              (r, w))
    figure_on_page(check, a.chromium, rep, "Accuracy and cost of the BR solvers",
                   "Accuracy and cost of the Birkhoff-Rott solvers", "accuracy-cost")
    # A report of the run without --br-check only: no accuracy-cost figure.
    plain = os.path.join(out, "runs", "nocheck.np1.r1.json")
    code, so, se = run([a.report, plain, "--out", os.path.join(tmp, "plain")])
    check("no --br-check: no accuracy-cost figure", code == 0 and os.path.isdir(os.path.join(tmp, "plain")) and
          not any(f.startswith("accuracy-cost") for f in os.listdir(os.path.join(tmp, "plain"))), (code, se))


if __name__ == "__main__":
    study_test_main(check, "acc", write_study, report_part)
