#!/usr/bin/env python3
"""beatnik-sweep and beatnik-report as a user runs them. A tiny study runs here (1-2 ranks, a
failing entry first), is rerun (finished runs skipped), and written as Slurm scripts that are
checked line by line against scripts built here; the report on those real runs must give every
figure as a valid PNG and SVG whose CSV equals numbers computed here from the results files, and
an HTML page that headless Chromium renders with every figure loaded. Bad inputs: exit 2."""
import argparse
import copy
import csv
import json
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from program_checks import Checks  # noqa: E402

check = Checks()
COMMON = ["-n", "32", "-t", "5", "--warmup", "1", "--fftw-plan", "estimate"]
CUTOFF = ["-n", "16", "-O", "high", "-S", "cutoff", "-c", "0.5", "-t", "3", "--fftw-plan", "estimate",
          "--load-snapshot", "2,3"]


def run(cmd, timeout=300):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def close(a, b, rel=1e-12):
    return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=1e-300)


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def write_study(path, beatnik, extra=""):
    with open(path, "w", encoding="utf-8") as f:
        f.write(f'''name = "tiny"
program = "{beatnik}"

[[entry]]
name = "bad"
ranks = [1]
args = ["-n", "0"]

[[entry]]
name = "low"
ranks = [1, 2]
args = {json.dumps(COMMON)}

[[entry]]
name = "cut"
ranks = [2]
args = {json.dumps(CUTOFF)}

[vary]
"-H" = [0, 2]
{extra}''')


# ---------------------------------------------------------------- the sweep, run here
def sweep_part(a, tmp):
    study = os.path.join(tmp, "tiny.toml")
    write_study(study, a.beatnik)
    out = os.path.join(tmp, "study")
    code, so, se = run([a.sweep, study, "--out", out])
    check("sweep: exit 1 when a run failed, the study went on", code == 1, f"exit {code}: {se[-500:]}")
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    jobs = {j["id"]: j for j in manifest["jobs"]}
    expected = {f"bad.np1.H{h}" for h in (0, 2)} | {f"low.np{n}.H{h}" for n in (1, 2) for h in (0, 2)} | \
               {f"cut.np2.H{h}" for h in (0, 2)}
    check("sweep: one job per entry x ranks x -H", set(jobs) == expected, sorted(jobs))
    for jid, j in jobs.items():
        bad = jid.startswith("bad")
        check(f"sweep: {jid} status", j["status"] == ("failed" if bad else "done"), j["status"])
        check(f"sweep: {jid} progress line", re.search(rf"\] {re.escape(jid)}: ({'FAILED' if bad else 'done'})", so)
              is not None, so[-300:])
        cmd = j["command"]
        h = jid.split(".H")[1]
        entry_args = {"bad": ["-n", "0"], "low": COMMON, "cut": CUTOFF}[j["entry"]]
        results = os.path.join(out, "runs", jid + ".json")
        want_tail = [a.beatnik, *entry_args, "-H", h, "--results", results]
        check(f"sweep: {jid} command line", cmd[-len(want_tail):] == want_tail and cmd[1] == str(j["ranks"])
              and cmd[0].endswith("mpirun.sh"), shlex.join(cmd))
        if bad:
            check(f"sweep: {jid} failure recorded", "exit" in j.get("message", ""), j.get("message"))
            continue
        doc = json.load(open(results))
        check(f"sweep: {jid} ran what the manifest says",
              doc["provenance"]["command_line"] == want_tail and doc["decomposition"]["ranks"] == j["ranks"]
              and doc["config"]["heffte_configuration"] == int(h) and doc["status"] == "completed",
              doc["provenance"]["command_line"])
    mtimes = {f: os.path.getmtime(os.path.join(out, "runs", f)) for f in os.listdir(os.path.join(out, "runs"))}
    code, so, se = run([a.sweep, study, "--out", out])
    check("sweep rerun: exit 1 (the bad entry fails again)", code == 1, f"exit {code}: {se[-300:]}")
    check("sweep rerun: finished runs skipped", "0 ran, 6 finished before, 2 failed" in so, so[-400:])
    check("sweep rerun: results files untouched",
          all(os.path.getmtime(os.path.join(out, "runs", f)) == t for f, t in mtimes.items()), "")
    code, so, se = run([a.sweep, study, "--out", out, "--dry"])
    check("sweep --dry: lists 8 jobs", code == 0 and "8 jobs" in so, so[-200:])
    return out


# ---------------------------------------------------------------- Slurm scripts
def expected_script(name, jid, ranks, nodes, per_node, gpus, out, beatnik, args):
    results = os.path.join(out, "runs", jid + ".json")
    return [
        "#!/bin/bash",
        f"#SBATCH --job-name={name}.{jid}",
        f"#SBATCH --nodes={nodes}",
        f"#SBATCH --ntasks={ranks}",
        f"#SBATCH --ntasks-per-node={per_node}",
        "#SBATCH --cpus-per-task=16",
        f"#SBATCH --gpus-per-node={gpus}",
        "#SBATCH --time=01:30:00",
        "#SBATCH --account=proj42",
        "#SBATCH --partition=gpu",
        f"#SBATCH --output={os.path.join(out, 'logs', jid + '.%j.log')}",
        "set -euo pipefail",
        "module load openmpi",
        "export OMP_NUM_THREADS=16",
        shlex.join(["srun", f"--ntasks={ranks}", f"--ntasks-per-node={per_node}", "--cpus-per-task=16",
                    "--cpu-bind=cores", "--gpu-bind=single:1", beatnik, *args, "--results", results]),
    ]


def slurm_part(a, tmp, study_out):
    study = os.path.join(tmp, "cluster.toml")
    with open(study, "w", encoding="utf-8") as f:
        f.write('''name = "cluster"
program = "/opt/beatnik/bin/beatnik"
ranks = [1, 4, 6]
args = ["-x", "cuda"]

[[entry]]
name = "low-weak"
case = "low-weak"
case_scale = 0.25

[vary]
"--halo-strategy" = ["isend", "persistent"]

[slurm]
ranks_per_node = 4
gpus_per_node = 4
cpus_per_task = 16
time = "01:30:00"
account = "proj42"
partition = "gpu"
modules = ["openmpi"]
''')
    out = os.path.join(tmp, "cluster")
    code, so, se = run([a.sweep, study, "--out", out, "--slurm"])
    check("slurm: exit 0", code == 0, se)
    # ranks -> (nodes, tasks per node, GPUs per node) for 4 ranks and 4 GPUs per node
    geometry = {1: (1, 1, 1), 4: (1, 4, 4), 6: (2, 4, 4)}
    submit = open(os.path.join(out, "slurm", "submit-all.sh")).read().splitlines()
    for ranks, (nodes, per_node, gpus) in geometry.items():
        for strategy in ("isend", "persistent"):
            jid = f"low-weak.np{ranks}.halo-strategy={strategy}"
            args = ["-x", "cuda", "--case", "low-weak", "--case-scale", "0.25", "--halo-strategy", strategy]
            want = expected_script("cluster", jid, ranks, nodes, per_node, gpus, out, "/opt/beatnik/bin/beatnik",
                                   args)
            path = os.path.join(out, "slurm", jid + ".sbatch")
            got = open(path).read().splitlines() if os.path.isfile(path) else []
            for k, line in enumerate(want):
                check(f"slurm: {jid} line {k + 1}", k < len(got) and got[k] == line,
                      f"want {line!r}, got {got[k] if k < len(got) else None!r}")
            check(f"slurm: {jid} no extra lines", len(got) == len(want), len(got))
            check(f"slurm: {jid} submitted by submit-all",
                  f"[ -e runs/{jid}.json ] || sbatch slurm/{jid}.sbatch" in submit, "")
    # The local study's folder: the finished runs are not submitted again, the failed ones are.
    code, so, se = run([a.sweep, os.path.join(tmp, "tiny.toml"), "--out", study_out, "--slurm"])
    submit = open(os.path.join(study_out, "slurm", "submit-all.sh")).read()
    check("slurm: only unfinished runs in submit-all", code == 0 and "sbatch slurm/bad.np1.H0.sbatch" in submit
          and "low.np" not in submit and "cut.np" not in submit and "6 already finished" in so, submit)
    # Bad study files: exit 2, one message naming the file.
    for name, text, needle in (("nokey.toml", 'name = "x"\nranks = [1]\nbogus = 1\n[[entry]]\nname="a"\nargs=["-t","1"]\n',
                                "unknown key bogus"),
                               ("noentry.toml", 'name = "x"\nranks = [1]\n', "[[entry]]"),
                               ("badranks.toml", 'name = "x"\nranks = [0]\n[[entry]]\nname="a"\nargs=["-t","1"]\n',
                                "positive integers"),
                               ("results.toml", 'name = "x"\nranks = [1]\n[[entry]]\nname="a"\nargs=["--results","f"]\n',
                                "--results"),
                               ("broken.toml", 'name = "x\n', "not valid TOML")):
        path = os.path.join(tmp, name)
        open(path, "w").write(text)
        code, so, se = run([a.sweep, path, "--out", os.path.join(tmp, "never")])
        check(f"sweep bad study {name}: exit 2, clear message", code == 2 and needle in se and path in se
              and len(se.strip().splitlines()) == 1, f"exit {code}: {se}")
    check("sweep bad studies: nothing written", not os.path.exists(os.path.join(tmp, "never")), "")


# ---------------------------------------------------------------- the report
def png_ok(path):
    from PIL import Image
    try:
        with Image.open(path) as im:
            im.verify()
        with Image.open(path) as im:
            im = im.convert("L")
            lo, hi = im.getextrema()
            return im.size[0] > 100 and im.size[1] > 100 and hi - lo > 100
    except Exception:   # noqa: BLE001 - any decoding error means: not a valid image
        return False


def svg_ok(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return False
    return root.tag.endswith("svg") and len(list(root.iter())) > 20


def top_level(regions):
    names = [r for r in regions if r != "step" and not r.startswith("io.")]
    nested = {r for r in names for p in names if p != r and r.startswith(p + ".")}
    return [r for r in names if r not in nested]


def report_part(a, tmp, study_out):
    runs_dir = os.path.join(study_out, "runs")
    docs = {f[:-5]: json.load(open(os.path.join(runs_dir, f))) for f in sorted(os.listdir(runs_dir))
            if f.endswith(".json")}
    check("report: the study's six results files", len(docs) == 6, sorted(docs))
    out = os.path.join(tmp, "report")
    code, so, se = run([a.report, study_out, "--out", out])
    check("report: exit 0", code == 0, se[-800:])
    figs = sorted(f[:-4] for f in os.listdir(out) if f.endswith(".png"))
    for name in figs:
        base = os.path.join(out, name)
        check(f"report: {name}.png is a valid image", png_ok(base + ".png"), "")
        check(f"report: {name}.svg is a valid SVG", svg_ok(base + ".svg"), "")
        check(f"report: {name}.csv has rows", os.path.isfile(base + ".csv") and len(read_csv(base + ".csv")) > 0, "")

    def region(jid, name):
        return docs[jid]["timers"]["regions"][name]["median"]

    # Scaling: series "low H0" and "low H2", strong (-n fixed), E = T1 / (2 T2).
    for h in (0, 2):
        rows = read_csv(os.path.join(out, f"scaling-low-H{h}.csv")) if f"scaling-low-H{h}" in figs else []
        check(f"scaling H{h}: figure drawn", bool(rows), figs)
        one, two = f"low.np1.H{h}", f"low.np2.H{h}"
        want = ["step"] + [r for r in top_level(docs[one]["timers"]["regions"]) if r in docs[two]["timers"]["regions"]]
        check(f"scaling H{h}: regions", sorted({r["region"] for r in rows}) == sorted(want), rows[:2])
        for r in rows:
            jid = f"low.np{r['ranks']}.H{h}"
            t, t1 = region(jid, r["region"]), region(one, r["region"])
            eff = t1 * 1 / (t * int(r["ranks"]))
            check(f"scaling H{h} {r['region']} {r['ranks']}", r["kind"] == "strong" and close(r["seconds_per_step"], t)
                  and close(r["efficiency"], eff) and r["series"] == f"low H{h}", (r, t, eff))
    # Heatmaps: ranks x -H of the low series and of the cutoff series.
    heat = [f for f in figs if f.startswith("heatmap-")]
    check("heatmap: one per series", sorted(heat) == ["heatmap-cut", "heatmap-low"], heat)
    cells = []
    for f in heat:
        cells += read_csv(os.path.join(out, f + ".csv"))
    want = {}
    for jid, d in docs.items():
        want[(jid.split(".")[0], d["decomposition"]["ranks"], d["config"]["heffte_configuration"])] = region(jid, "step")
    got = {}
    for f in heat:
        series = f[len("heatmap-"):]
        for r in read_csv(os.path.join(out, f + ".csv")):
            got[(series, int(r["ranks"]), int(r["heffte_configuration"]))] = float(r["seconds_per_step"])
    check("heatmap: every cell equals its run's step time", set(got) == set(want)
          and all(close(got[k], want[k]) for k in want), (got, want))
    # Phases: every region of every run, `other` = step - sum.
    rows = read_csv(os.path.join(out, "phases.csv"))
    label = {f"low.np{n}.H{h}": (f"low H{h}", n) for n in (1, 2) for h in (0, 2)}
    label |= {f"cut.np2.H{h}": (f"cut H{h}", 2) for h in (0, 2)}
    for jid, (series, n) in label.items():
        mine = {r["region"]: float(r["seconds_per_step"]) for r in rows if r["series"] == series and int(r["ranks"]) == n}
        regs = top_level(docs[jid]["timers"]["regions"])
        other = max(0.0, region(jid, "step") - sum(region(jid, x) for x in regs))
        check(f"phases {jid}", set(mine) == set(regs) | {"other"} and all(close(mine[x], region(jid, x)) for x in regs)
              and math.isclose(mine["other"], other, rel_tol=1e-9, abs_tol=1e-15), (mine, other))
    # Load distribution of the cutoff runs: every rank's value at every snapshot step.
    for h in (0, 2):
        jid = f"cut.np2.H{h}"
        path = os.path.join(out, f"load-{jid}.csv")
        rows = read_csv(path) if os.path.isfile(path) else []
        snaps = docs[jid]["load_balance"]["snapshots"]
        want = {(s, q, k): float(v) for s in snaps for q in ("particles", "ghosts", "pairs")
                for k, v in enumerate(snaps[s][q])}
        got = {(r["step"], r["quantity"], int(r["grid_rank"])): float(r["value"]) for r in rows}
        check(f"load {jid}: snapshot values", got == want and len(snaps) == 2, (len(got), len(want)))
    # Step-time histograms, one per series, a panel per rank count: every measured step in its bin, the median.
    for jid, d in docs.items():
        series, n = label[jid]
        path = os.path.join(out, "steps-" + series.replace(" ", "-") + ".csv")
        rows = [r for r in read_csv(path) if int(r["ranks"]) == n] if os.path.isfile(path) else []
        secs = d["steps"]["seconds"]
        counts = [0] * len(rows)
        for s in secs:
            for k, r in enumerate(rows):
                lo, hi = float(r["bin_low_seconds"]), float(r["bin_high_seconds"])
                if lo <= s < hi or (k == len(rows) - 1 and s == hi):
                    counts[k] += 1
                    break
        check(f"histogram {jid}", rows and counts == [int(r["steps"]) for r in rows] and sum(counts) == len(secs)
              and all(close(r["median_seconds"], statistics.median(secs)) and r["series"] == series for r in rows),
              (rows, secs))
    # Bytes per placement: the per-step split of every pattern.
    rows = read_csv(os.path.join(out, "bytes-per-placement.csv"))
    got = {(r["run"], r["pattern"]): (float(r["self_bytes_per_step"]), float(r["on_node_bytes_per_step"]),
                                      float(r["off_node_bytes_per_step"])) for r in rows}
    want = {(jid, p): tuple(float(c["bytes_per_step_total"][k]) for k in ("self", "on_node", "off_node"))
            for jid, d in docs.items() for p, c in d["communication"].items()}
    check("bytes per placement: every run and pattern", got == want, (got, want))
    check("report: no rank-pair matrix without rank pairs", not any(f.startswith("pairs-") for f in figs), figs)
    html_part(a, out, figs)

    # The rank-pair matrix from a results file that has one (the program does not write it yet).
    doc = copy.deepcopy(docs["low.np2.H0"])
    doc["communication"]["halo"]["rank_pairs"] = [[0, 1, 100], [1, 0, 50]]
    doc["communication"]["fft"]["rank_pairs"] = [[0, 1, 7], [1, 1, 3]]
    pairs_file = os.path.join(tmp, "pairs.json")
    json.dump(doc, open(pairs_file, "w"))
    code, so, se = run([a.report, pairs_file, "--out", os.path.join(tmp, "pairs")])
    path = os.path.join(tmp, "pairs", "pairs-pairs.csv")
    rows = read_csv(path) if os.path.isfile(path) else []
    check("rank-pair matrix: summed over patterns", code == 0 and
          {(int(r["from_rank"]), int(r["to_rank"])): float(r["bytes"]) for r in rows} == {(0, 1): 107, (1, 0): 50, (1, 1): 3}
          and png_ok(os.path.join(tmp, "pairs", "pairs-pairs.png")), (code, se, rows))
    bare_files_part(a, tmp, docs)
    bad_inputs_part(a, tmp, docs)


def bare_files_part(a, tmp, docs):
    """Results files without a manifest: the series is the command line (the value of -w left
    out); a mesh that grows with the ranks makes it weak scaling, E = T(1) / T(p)."""
    bare = os.path.join(tmp, "bare")
    os.makedirs(bare)
    one, two = copy.deepcopy(docs["low.np1.H0"]), copy.deepcopy(docs["low.np2.H0"])
    for d, w in ((one, "1"), (two, "2")):
        argv = d["provenance"]["command_line"]
        argv[1:1] = ["-w", w]
    two["config"]["mesh_nodes"] = [45, 45]   # as -w 2 grows a 32² mesh
    for name, d in (("one.json", one), ("two.json", two)):
        json.dump(d, open(os.path.join(bare, name), "w"))
    out = os.path.join(tmp, "bare-report")
    code, so, se = run([a.report, bare, "--out", out])
    scal = [f for f in os.listdir(out) if f.startswith("scaling-") and f.endswith(".csv")] if code == 0 else []
    check("bare files: one scaling series", len(scal) == 1, (code, se, scal))
    if len(scal) != 1:
        return
    rows = read_csv(os.path.join(out, scal[0]))
    series = " ".join(["-w", "W", *one["provenance"]["command_line"][3:-2]])
    for r in rows:
        t = (one if r["ranks"] == "1" else two)["timers"]["regions"][r["region"]]["median"]
        t1 = one["timers"]["regions"][r["region"]]["median"]
        check(f"bare files: weak {r['region']} {r['ranks']}", r["kind"] == "weak" and r["series"] == series
              and close(r["seconds_per_step"], t) and close(r["efficiency"], t1 / t), (r, series))


def chromium_dom(chromium, page):
    """The page's DOM after headless Chromium ran its scripts, and Chromium's exit code."""
    with tempfile.TemporaryDirectory() as profile:
        try:
            p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                f"--user-data-dir={profile}", "--virtual-time-budget=10000", "--dump-dom",
                                "file://" + page], capture_output=True, text=True, timeout=120)
            return p.stdout, p.returncode
        except subprocess.TimeoutExpired:
            return "", "timeout"


def report_figure(checks, report, inputs, rep, name):
    """beatnik-report on `inputs` into `rep`: exit 0, NAME.png a valid image and NAME.svg a valid
    SVG (checks: the calling test's Checks). Returns rep/NAME, the figure's path without extension."""
    code, so, se = run([report, *inputs, "--out", rep])
    checks(f"report into {os.path.basename(rep)}: exit 0", code == 0, se[-800:])
    base = os.path.join(rep, name)
    checks(f"{name}.png is a valid image", png_ok(base + ".png"), rep)
    checks(f"{name}.svg is a valid SVG", svg_ok(base + ".svg"), rep)
    return base


def figure_on_page(checks, chromium, rep, alt, heading, name):
    """The figure whose alt text is `alt` is on the page in `rep` under `heading`, and headless
    Chromium loads every figure of the page, that one included (checks: the calling test's Checks)."""
    text = open(os.path.join(rep, "index.html"), encoding="utf-8").read()
    checks(f"html: the {name} figure on the page", f'alt="{alt}"' in text and f"{heading}</h2>" in text, "")
    if not chromium or chromium.endswith("NOTFOUND"):
        checks("html: headless Chromium available", False, "install chromium (scripts/install-deps.sh)")
        return
    figs = len([f for f in os.listdir(rep) if f.endswith(".png")])
    dom, code = chromium_dom(chromium, os.path.join(rep, "index.html"))
    img = re.search(rf'<img[^>]*alt="{re.escape(alt)}"[^>]*>', dom)
    status = re.search(r'id="render-check">([^<]*)<', dom)
    checks(f"html: Chromium loaded every figure, the {name} one included",
           code == 0 and img is not None and 'data-loaded="yes"' in img.group(0) and status is not None
           and status.group(1) == f"{figs} of {figs} figures loaded",
           f"exit {code}, {status.group(1) if status else 'no status'}")


def study_test_main(checks, name, write_study, report_part):
    """main() of a report figure's test: the commands' paths from the command line, the study
    `name` written by write_study(path, beatnik), run by beatnik-sweep in a temporary folder, then
    report_part(args, tmp, study folder); exits through checks.finish()."""
    p = argparse.ArgumentParser()
    for opt in ("--sweep", "--report", "--beatnik", "--chromium"):
        p.add_argument(opt, required=opt != "--chromium")
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix=f"beatnik-{name}-") as tmp:
        study = os.path.join(tmp, f"{name}.toml")
        write_study(study, a.beatnik)
        out = os.path.join(tmp, "study")
        code, so, se = run([a.sweep, study, "--out", out])
        checks("sweep: exit 0", code == 0, f"exit {code}: {so[-500:]} {se[-500:]}")
        if code == 0:
            report_part(a, tmp, out)
    checks.finish()


def html_part(a, out, figs):
    page = os.path.join(out, "index.html")
    text = open(page, encoding="utf-8").read()
    srcs = re.findall(r'<img[^>]* src="([^"]{0,30})', text)
    check("html: every figure embedded", len(srcs) == len(figs) and all(s.startswith("data:image/png;base64,")
                                                                         for s in srcs), (len(srcs), len(figs)))
    if not a.chromium or a.chromium.endswith("NOTFOUND"):
        check("html: headless Chromium available", False, "install chromium (scripts/install-deps.sh)")
        return
    dom, code = chromium_dom(a.chromium, page)
    loaded = len(re.findall(r'<img[^>]*data-loaded="yes"', dom))
    status = re.search(r'id="render-check">([^<]*)<', dom)
    check("html: Chromium rendered every figure", code == 0 and loaded == len(figs) and status is not None
          and status.group(1) == f"{len(figs)} of {len(figs)} figures loaded",
          f"exit {code}, {loaded} of {len(figs)} loaded, {status.group(1) if status else 'no status'}")


def bad_inputs_part(a, tmp, docs):
    doc = docs["low.np1.H0"]
    bad = os.path.join(tmp, "bad")
    os.makedirs(bad)
    cases = {
        "notjson.json": ("{ this is not json", "not valid JSON"),
        "other.json": (json.dumps({"schema": "something-else", "schema_version": 1}), "not a beatnik results file"),
        "future.json": (json.dumps(doc | {"schema_version": 99}), "schema_version 99 is not one this reader knows"),
        "notimers.json": (json.dumps({k: v for k, v in doc.items() if k != "timers"}), "missing timers"),
    }
    for name, (text, needle) in cases.items():
        path = os.path.join(bad, name)
        open(path, "w").write(text)
        code, so, se = run([a.report, path, "--out", os.path.join(tmp, "never")])
        check(f"report bad input {name}: exit 2, clear message", code == 2 and needle in se and path in se
              and len(se.strip().splitlines()) == 1, f"exit {code}: {se}")
    good = os.path.join(bad, "good.json")
    json.dump(doc, open(good, "w"))
    code, so, se = run([a.report, good, os.path.join(bad, "future.json"), "--out", os.path.join(tmp, "never")])
    check("report mixed schema versions: exit 2", code == 2 and "mixed results schema versions" in se, se)
    code, so, se = run([a.report, os.path.join(tmp, "nothing-here"), "--out", os.path.join(tmp, "never")])
    check("report missing input: exit 2", code == 2 and "no such file or folder" in se, se)
    os.makedirs(os.path.join(tmp, "empty"))
    code, so, se = run([a.report, os.path.join(tmp, "empty"), "--out", os.path.join(tmp, "never")])
    check("report empty folder: exit 2", code == 2 and "no results files" in se, se)
    check("report bad inputs: nothing written", not os.path.exists(os.path.join(tmp, "never")), "")


# ---------------------------------------------------------------- a case entry, run here
def case_part(a, tmp):
    study = os.path.join(tmp, "case.toml")
    with open(study, "w", encoding="utf-8") as f:
        f.write(f'''name = "cases"
program = "{a.beatnik}"

[[entry]]
name = "strong"
case = "cutoff-strong"
case_scale = 0.0625
ranks = [2]
args = ["-t", "2"]
''')
    out = os.path.join(tmp, "case-study")
    code, so, se = run([a.sweep, study, "--out", out])
    check("case sweep: exit 0", code == 0, f"exit {code}: {se[-500:]}")
    results = os.path.join(out, "runs", "strong.np2.json")
    if not os.path.isfile(results):
        check("case sweep: results file", False, str(os.listdir(os.path.join(out, "runs"))))
        return
    doc = json.load(open(results))
    line = doc["provenance"]["command_line"]
    check("case sweep: --case and --case-scale passed", "--case" in line and
          line[line.index("--case") + 1] == "cutoff-strong" and "--case-scale" in line, shlex.join(line))
    check("case sweep: the run is the case", doc["config"]["case"]["name"] == "cutoff-strong"
          and close(doc["config"]["case"]["scale"], 0.0625) and doc["steps"]["done"] == 2, str(doc["config"].get("case")))


# ---------------------------------------------------------------- a dry run's rank-pair matrix
def dry_run_part(a, tmp):
    results = os.path.join(tmp, "dry16.json")
    code, so, se = run([a.beatnik, "--dry-run", "--np", "16", "-n", "32", "-w", "16", "--ranks-per-node", "4",
                        "--results", results])
    check("dry run: exit 0", code == 0, se[-300:])
    if code != 0:
        return
    out = os.path.join(tmp, "dry-report")
    code, so, se = run([a.report, results, "--out", out])
    check("report of a dry run: exit 0", code == 0, se[-300:])
    entries = json.load(open(results))["dry_run"]["matrix"]["entries"]
    csv_path = os.path.join(out, "pairs-dry16.csv")
    rows = read_csv(csv_path) if os.path.isfile(csv_path) else []
    got = {(int(r["from_rank"]), int(r["to_rank"])): float(r["bytes"]) for r in rows}
    want = {}
    for s, d, b in entries:
        want[(int(s), int(d))] = want.get((int(s), int(d)), 0.0) + float(b)
    check("report of a dry run: the matrix CSV equals dry_run.matrix.entries", got == want and len(want) > 16,
          f"{len(got)} vs {len(want)} pairs")


def main():
    p = argparse.ArgumentParser()
    for opt in ("--sweep", "--report", "--beatnik", "--chromium"):
        p.add_argument(opt, required=opt != "--chromium")
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="beatnik-tools-") as tmp:
        study_out = sweep_part(a, tmp)
        slurm_part(a, tmp, study_out)
        report_part(a, tmp, study_out)
        case_part(a, tmp)
        dry_run_part(a, tmp)
    check.finish()


if __name__ == "__main__":
    main()
