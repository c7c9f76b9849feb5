#!/usr/bin/env python3
"""--case, --case-scale and -T as a user runs them. The expected parameters come from the table in
docs/cases.md (parsed here), never from the program: `--case list`, each case's banner on 1-4
ranks, a case against the same options written out by hand (bitwise the same run), one override
against the case alone (only that option changes in the results' config), short real runs, the
tilt's initial heights and first vorticity against their formulas, and refusals. Standard
library only."""
import argparse
import json
import math
import os
import re
import shutil
import sys
import tempfile

parser = argparse.ArgumentParser()
parser.add_argument("--beatnik", required=True)
parser.add_argument("--mpiexec", default="mpiexec")
parser.add_argument("--docs", required=True, help="docs/cases.md")
args = parser.parse_args()

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from program_checks import Checks, run_beatnik  # noqa: E402

check = Checks()
tmp = tempfile.mkdtemp(prefix="beatnik-cases-")

# A small scale per case: a few dozen nodes per dimension.
SCALE = {"low-weak": 0.01, "low-strong": 0.01, "cutoff-weak": 0.05, "cutoff-strong": 0.0625}


def run(opts, ranks=1, timeout=120):
    return run_beatnik(args.mpiexec, args.beatnik, opts, ranks, timeout, extra=["--progress-every", "0"])


def ok(p):
    return p is not None and p.returncode == 0


def why(p):
    return "hung" if p is None else f"exit {p.returncode}: {p.stderr[-500:]!r}"


def docs_table():
    """The case table of docs/cases.md: {case: {column: text}}."""
    lines = open(args.docs).read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("| case | scaling |"))
    head = [c.strip() for c in lines[start].strip("|").split("|")]
    table = {}
    for l in lines[start + 2:]:
        if not l.startswith("|"):
            break
        cells = [c.strip() for c in l.strip("|").split("|")]
        table[cells[0]] = dict(zip(head, cells))
    return table


DOC = docs_table()
check("docs table has the four cases", sorted(DOC) == ["cutoff-strong", "cutoff-weak", "low-strong", "low-weak"],
      str(sorted(DOC)))
NUMERIC = ["-c", "-m", "-p", "-B", "-n", "-a", "-g", "-M", "-e", "-d", "-t", "laptop"]


def same(a, b):
    """Two table cells: numbers compare as numbers, the rest as text."""
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-12)
    except ValueError:
        return a == b


# 1. `--case list`: exit 0, every row and column as documented.
p = run(["--case", "list"])
check("case list exit 0", ok(p), why(p))
if ok(p):
    lines = p.stdout.splitlines()
    head_i = next((i for i, l in enumerate(lines) if l.split()[:2] == ["name", "scaling"]), None)
    check("case list has a header", head_i is not None, p.stdout[:400])
    if head_i is not None:
        head = lines[head_i].split()
        listed = {}
        for l in lines[head_i + 1:]:
            if not l.strip():
                break
            cells = l.split()
            listed[cells[0]] = dict(zip(head, cells))
        check("case list names", sorted(listed) == sorted(DOC), str(sorted(listed)))
        for name, row in DOC.items():
            for col, want in row.items():
                key = "name" if col == "case" else col
                got = listed.get(name, {}).get(key)
                check(f"case list {name} {col}", got is not None and same(got, want), f"{got!r} != {want!r}")
    check("case list printed once", p.stdout.count("cutoff-strong") == 2, p.stdout)


def scaled_n(row, scale):
    return max(4, round(int(row["-n"]) * scale))


def banner(p):
    """The banner lines by their label."""
    out = {}
    for l in p.stdout.splitlines():
        m = re.match(r"^  (\w+)\s{2,}(.*)$", l)
        if m and m.group(1) not in out:
            out[m.group(1)] = m.group(2)
    out["title"] = p.stdout.splitlines()[0] if p.stdout else ""
    return out


def expect_banner(name, ranks, b):
    """Checks the banner `b` of `--case name --case-scale SCALE` on `ranks` against the docs."""
    row, s = DOC[name], SCALE[name]
    weak = row["scaling"] == "weak"
    w = ranks if weak else 1
    n = int(scaled_n(row, s) * math.sqrt(w))  # -w scales n by sqrt(W), truncated
    B = float(row["-B"]) * math.sqrt(w)
    tag = f"{name} on {ranks} rank(s)"
    check(tag + " order", f"{row['-O']} order" in b["title"], b["title"])
    check(tag + " case line", b.get("case", "").startswith(f"{name} at scale {s:g}"), b.get("case"))
    m = re.match(r"(\d+) x (\d+) nodes \((\w+)\), box \[-([\d.e+-]+), ([\d.e+-]+)\]\^2, weak scale (\d+)",
                 b.get("mesh", ""))
    check(tag + " mesh line", m is not None, b.get("mesh"))
    if m:
        check(tag + " nodes", int(m.group(1)) == n and int(m.group(2)) == n, f"{m.group(1)} != {n}")
        check(tag + " boundary", m.group(3) == row["-b"], m.group(3))
        check(tag + " box", math.isclose(float(m.group(5)), B, rel_tol=1e-5), f"{m.group(5)} != {B}")
        check(tag + " weak scale", int(m.group(6)) == w, m.group(6))
    phys = b.get("physics", "")
    m = re.match(r"A = ([^,]+), g = [^(]+\(([^ ]+) g's\), M = ([^ ]+) .*, e = ([^ ]+) ", phys)
    check(tag + " physics line", m is not None, phys)
    if m:
        for got, col in zip(m.groups(), ["-a", "-g", "-M", "-e"]):
            check(f"{tag} {col}", same(got, row[col]), f"{got} != {row[col]}")
    m = re.match(r"(\w+) m = ([^ ]+) p = ([^ ,]+)", b.get("initial", ""))
    check(tag + " initial line", m is not None, b.get("initial"))
    if m:
        check(tag + " -I", m.group(1) == row["-I"], m.group(1))
        check(tag + " -m", same(m.group(2), row["-m"]), m.group(2))
        check(tag + " -p", same(m.group(3), row["-p"]), m.group(3))
    m = re.match(r"(\d+) steps of dt = ([^ ]+) ", b.get("time", ""))
    check(tag + " time line", m is not None, b.get("time"))
    if m:
        check(tag + " -t", m.group(1) == row["-t"], m.group(1))
        check(tag + " -d", same(m.group(2), row["-d"]), m.group(2))
    if row["-S"] == "cutoff":
        m = re.match(r"cutoff solver, c = ([^ ]+) ", b.get("BR", ""))
        check(tag + " cutoff", m is not None and same(m.group(1), row["-c"]), b.get("BR"))
    else:
        check(tag + " no BR solve", "BR" not in b, b.get("BR"))


# 2. Each case's banner (--setup-only: set up, print, exit) on 1-4 ranks (the weak cases on several).
for name in DOC:
    for ranks in {"low-weak": (1, 2, 3, 4), "cutoff-weak": (1, 3), "low-strong": (3,), "cutoff-strong": (4,)}[name]:
        p = run(["--case", name, "--case-scale", str(SCALE[name]), "--setup-only", "--results", f"{tmp}/dry.json"],
                ranks=ranks)
        check(f"{name} setup-only run on {ranks} exit 0", ok(p), why(p))
        if ok(p):
            expect_banner(name, ranks, banner(p))
check("setup-only run writes no file", not os.listdir(tmp), str(os.listdir(tmp)))


def results(opts, ranks, tag):
    path = os.path.join(tmp, tag + ".json")
    p = run(opts + ["--results", path], ranks=ranks)
    check(tag + " exit 0", ok(p), why(p))
    return json.load(open(path)) if ok(p) and os.path.exists(path) else None


def flat(d, prefix=""):
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flat(v, prefix + k + "."))
        else:
            out[prefix + k] = v
    return out


# 3. A case is exactly its options written out from the docs: the same config (but `case`) and
#    bitwise the same surface after a step. Weak cases on 2 ranks with -w 2.
base_config = {}
for name, row in DOC.items():
    ranks = 2
    by_case = results(["--case", name, "--case-scale", str(SCALE[name]), "-t", "1"], ranks, name + "-case")
    spelled = ["-O", row["-O"], "-S", row["-S"], "-I", row["-I"], "-m", row["-m"], "-p", row["-p"], "-b", row["-b"],
               "-B", row["-B"], "-n", str(scaled_n(row, SCALE[name])), "-a", row["-a"], "-g", row["-g"], "-M", row["-M"],
               "-e", row["-e"], "-d", row["-d"], "-t", "1", "-w", str(ranks if row["scaling"] == "weak" else 1)]
    if row["-c"] != "-":
        spelled += ["-c", row["-c"]]
    by_hand = results(spelled, ranks, name + "-hand")
    if by_case and by_hand:
        a, b = flat(by_case["config"]), flat(by_hand["config"])
        diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        check(f"{name} case = its options spelled out (config)",
              set(diff) == {"case.name", "case.overridden", "case.scale"}, str(diff))
        check(f"{name} case = its options spelled out (surface)", by_case["checksums"] == by_hand["checksums"],
              f"{by_case['checksums']} vs {by_hand['checksums']}")
        check(f"{name} config.case", by_case["config"]["case"] == {"name": name, "scale": SCALE[name],
                                                                  "overridden": ["-t"]}, str(by_case["config"]["case"]))
        check(f"{name} completed", by_case["status"] == "completed" and by_case["steps"]["done"] == 1, "")
        base_config[name] = by_case["config"]

# 4. One override changes that option only (and what is derived from it), nothing else.
geometry = {"nodes_option", "nodes_after_weak_scaling", "mesh_nodes", "operator_spacing", "node_spacing", "mu",
            "epsilon"}
overrides = [
    ("cutoff-weak", ["-m", "0.02"], {"magnitude"}),
    ("cutoff-weak", ["-c", "0.3"], {"br.cutoff.radius"}),
    ("low-strong", ["-a", "0.3"], {"atwood", "tau"}),
    ("low-weak", ["-n", "40"], geometry),
    ("cutoff-strong", ["-d", "0.002"], {"dt"}),
]
for name, extra, changed in overrides:
    base = ["--case", name, "--case-scale", str(SCALE[name]), "-t", "1"]
    tag = f"{name} {' '.join(extra)}"
    b = results(base + extra, 2, "over")
    if name in base_config and b:
        fa, fb = flat(base_config[name]), flat(b["config"])
        # fft_inverse_c2r (and fft_2d_inverse_c2r) is not an option but a choice timed at start-up (measured FFTW plans) or
        # made from the mesh's line lengths: it may follow any override, or none (test_fft checks it).
        diff = {k for k in set(fa) | set(fb) if fa.get(k) != fb.get(k)} - {"fft_inverse_c2r", "fft_2d_inverse_c2r"}
        check(tag + " changes only that option", diff == changed | {"case.overridden"}, str(sorted(diff)))
        check(tag + " recorded as override", fb["case.overridden"] == ["-t", extra[0]] or
              sorted(fb["case.overridden"]) == sorted(["-t", extra[0]]), str(fb["case.overridden"]))

# 5. -T: initial heights z = m sech^2(p r^2) + tan(T) x (one step of dt 1e-9 moves nothing visible),
#    and on a flat tilted plane (m = 0) the first step's vorticity w1 = -2 A g tan(T) dt, w2 = 0,
#    on 1-4 ranks (free boundaries, high order).
A, G, DT = 0.15, 25 * 9.81, 1e-9
for ranks in (1, 2, 3, 4):
    for m, deg in (("0.1", -25.0), ("0", 10.0)):
        state = os.path.join(tmp, "tilt.csv")
        tag = f"tilt {deg} m={m} on {ranks}"
        p = run(["-O", "high", "-b", "free", "-n", "12", "-I", "sech2", "-m", m, "-p", "9", "-a", str(A), "-M", "2",
                 "-e", "2", "-T", str(deg), "-d", str(DT), "-t", "1", "--write-state", state], ranks=ranks)
        check(tag + " exit 0", ok(p), why(p))
        if not ok(p):
            continue
        check(tag + " banner", f"tilted {deg:g} degrees" in p.stdout, p.stdout[:900])
        s = math.tan(math.radians(deg))
        rows = [list(map(float, l.split(","))) for l in open(state).read().splitlines()[1:]]
        check(tag + " all nodes", len(rows) == 144, str(len(rows)))
        zerr = max(abs(z - (float(m) / math.cosh(9 * (x * x + y * y)) ** 2 + s * x)) for i, j, x, y, z, w1, w2 in rows)
        check(tag + " initial heights", zerr < 1e-12, f"max error {zerr:.3e}")
        if m == "0":
            want = -2 * A * G * s * DT
            werr = max(abs(w1 - want) for *_, w1, w2 in rows) / abs(want)
            check(tag + " w1 = -2 A g tan(T) dt", werr < 1e-6, f"relative error {werr:.3e}")
            check(tag + " w2 = 0", max(abs(w2) for *_, w2 in rows) < 1e-9 * abs(want), "")
        os.remove(state)
# No tilt and -T 0 are the same run, bit for bit.
r0 = results(["-O", "high", "-b", "free", "-n", "12", "-I", "sech2", "-m", "0.1", "-p", "9", "-t", "2"], 2, "t-none")
r1 = results(["-O", "high", "-b", "free", "-n", "12", "-I", "sech2", "-m", "0.1", "-p", "9", "-t", "2", "-T", "0"], 2,
             "t-zero")
if r0 and r1:
    check("-T 0 = no tilt", r0["checksums"] == r1["checksums"], "")
    check("tilt in config", r0["config"]["tilt_degrees"] is None and r1["config"]["tilt_degrees"] == 0.0
          and r1["config"]["tilt_slope"] == 0.0, "")

# 6. Refusals: exit 2, one message, no file.
for f in os.listdir(tmp):
    os.remove(os.path.join(tmp, f))
bad = [
    (["--case", "huge"], "unknown --case 'huge'"),
    (["--case-scale", "0.5"], "--case-scale needs --case"),
    (["--case", "low-weak", "--case-scale", "0"], "--case-scale must be a positive number"),
    (["--case", "low-weak", "--case-scale", "nan"], "--case-scale must be a positive number"),
    (["--case", "low-weak", "--case-scale", "x"], "case-scale"),
    (["--case", "low-strong", "--case-scale", "1e300"], "far beyond any machine"),
    (["-T", "10"], "a tilted plane is not periodic"),
    (["--case", "cutoff-weak", "--case-scale", "0.05", "-T", "5"], "a tilted plane is not periodic"),
    (["-O", "high", "-b", "free", "-T", "90"], "strictly between -90 and 90"),
    (["-O", "high", "-b", "free", "-T", "nan"], "strictly between -90 and 90"),
    (["-O", "high", "-b", "free", "-T", "5", "-i", "x.h5"], "does not apply to -i"),
]
for opts, expect in bad:
    name = "bad " + " ".join(opts)
    p = run(opts + ["--results", os.path.join(tmp, "r.json")], ranks=2, timeout=60)
    if p is None:
        check(name, False, "hung")
        continue
    errors = [l for l in p.stderr.splitlines() if l.startswith("beatnik: error:")]
    check(name + " exit 2", p.returncode == 2, why(p))
    check(name + " one message", len(errors) == 1, p.stderr[-400:])
    check(name + " says what", expect in p.stderr, f"{expect!r} not in {p.stderr[-400:]!r}")
    check(name + " no files", not os.listdir(tmp), str(os.listdir(tmp)))

# 7. A tilted case run completes (cutoff-strong is the free one), and its config says so.
r = results(["--case", "cutoff-strong", "--case-scale", "0.0625", "-T", "5", "-t", "2"], 3, "tilted-case")
if r:
    check("tilted case config", r["config"]["tilt_degrees"] == 5.0 and
          math.isclose(r["config"]["tilt_slope"], math.tan(math.radians(5)), rel_tol=1e-15), str(r["config"]))

shutil.rmtree(tmp, ignore_errors=True)
check.finish()
