#!/usr/bin/env python3
"""Property-based test of the command line (hypothesis): random combinations of options and
values, valid and invalid, repeated and extreme, run on 2 ranks the way a user would. Whatever
is drawn, the program must exit 0, 2 (refused) or 3 (the simulation failed), never hang, and on
exit 2 print exactly one error message (rank 0) and leave no file behind. Small meshes and few
steps keep every valid run short. Examples are derandomised, so CI draws the same cases every
time; FUZZ_EXAMPLES sets how many (default 60), FUZZ_SEED draws another set."""
import argparse
import os
import shutil
import sys
import tempfile

from hypothesis import HealthCheck, Phase, given, settings, strategies as st
from hypothesis import seed as hypothesis_seed

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from program_checks import run_beatnik  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--beatnik", required=True)
parser.add_argument("--mpiexec", default="mpiexec")
args = parser.parse_args()

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))
TIMEOUT = 60
VERBOSE = bool(os.environ.get("FUZZ_VERBOSE"))  # print every drawn command line and its exit code

JUNK = ["", "x", "-1", "nan", "inf", "-inf", "1e400", "0x10", "3.5.1", "--", "é", "1,2"]


# Value generators: each takes a random.Random and returns the option's text.
def choice(*names):
    return lambda r: r.choice(names)


def real(lo, hi):
    return lambda r: f"{r.uniform(lo, hi):.6g}"


def ints(lo, hi):
    return lambda r: str(r.randint(lo, hi))


def any_real(r):
    return r.choice([repr(r.uniform(-1e6, 1e6)), repr(r.uniform(-2, 2)), "0", "-0.5", "1e-300", "1e300", *JUNK])


def any_int(r):
    return r.choice([str(r.randint(-3, 40)), str(r.randint(-2**40, 2**40)), *JUNK])


# Each option: values a user may give (small meshes, few steps: a valid run stays short), and
# anything else (invalid, extreme, malformed). A command line mostly of valid options reaches the
# deep checks and the run itself; a wholly random one would stop at the first bad value.
OPTIONS = {
    "-n": (choice("8", "12", "16", "24", "32"),
           choice("4", "3", "0", "-8", "100000000", "2147483647", "99999999999", *JUNK)),
    "-t": (ints(1, 3), any_int), "-O": (choice("low", "medium", "high"), choice("huge", "LOW", "")),
    "-S": (choice("exact", "cutoff", "tree"), choice("fmm", "")),
    "--br-tolerance": (choice("1e-3", "1e-6"), any_real), "--tree-theta": (choice("0", "0.5"), any_real),
    "--tree-degree": (ints(0, 6), any_int), "--tree-leaf": (ints(1, 64), any_int),
    "--tree-traversal": (choice("auto", "single", "dual"), choice("triple", "")),
    "--tree-edge-terms": (choice("on", "off"), choice("maybe", "")),
    "--tree-edge-margin": (choice("1", "1.1", "1.5"), any_real),
    "--br-check": (ints(0, 20), any_int), "-c": (real(0.05, 3.0), any_real),
    "-b": (choice("periodic", "free"), choice("x", "")),
    "-I": (choice("cos", "sech2", "random", "gaussian"), choice("square", "")),
    "-m": (real(0.0, 0.2), any_real), "-p": (real(0.5, 10.0), any_real), "-a": (real(-1.0, 1.0), any_real),
    "-g": (real(0.0, 2.0), any_real), "-M": (real(0.0, 2.0), any_real), "-e": (real(0.0, 2.0), any_real),
    "-d": (real(1e-4, 1e-2), any_real), "-B": (real(0.5, 5.0), any_real), "-w": (ints(1, 2), any_int),
    "--profile": (choice("consistent", "beatnik"), choice("reference", "")), "--seed": (ints(0, 99), any_int),
    "--ranks-grid": (choice("1x2", "2x1"), choice("2x2", "1x1", "0x2", "axb", "3")),
    "--br-images": (ints(0, 2), any_int),
    "--br-strategy": (choice("overlap", "blocking", "persistent", "rma"), choice("nope", "")),
    "--halo-strategy": (choice("isend", "persistent", "neighbor", "rma-fence", "rma-pscw", "rma-lock"),
                        choice("x", "")),
    "--spatial-partition": (choice("uniform", "balanced"), choice("x", "")),
    "--migrate-strategy": (choice("alltoallv", "sparse", "neighbor"), choice("x", "")),
    "--placement": (choice("linear", "cart", "node-blocks", "random"), choice("hilbert", "file:", "file:/none")),
    "--ranks-per-node": (ints(1, 2), any_int), "--warmup": (ints(0, 1), any_int),
    "--load-snapshot": (choice("1", "1,2"), choice("-1", "x", "0")), "--max-stretch": (choice("0", "100"), any_real),
    "-x": (choice("host", "serial", "openmp"), choice("cuda", "gpu")),
    "--gpu-transport": (choice("staged", "auto"), choice("nccl", "x")),
    "-H": (ints(0, 7), choice("8", "-1")),
    "--fft-exchange": (choice("alltoallv", "alltoall", "p2p", "p2p-pipelined"), choice("nccl", "x")),
    "--fft-intermediate": (choice("slab", "pencil"), choice("x")),
    "--fft-reorder": (choice("contiguous", "strided"), choice("x")),
    "--fft-spectrum": (choice("intermediate", "input"), choice("x")),
    "--metric-power": (real(0.5, 1.0), any_real), "--progress-every": (ints(0, 2), any_int),
    "-T": (choice("0"), any_real), "--hdf5-mode": (choice("auto", "blocks"), choice("collective", "x")),
    "--checkpoint-keep": (ints(1, 3), any_int),
    "--case": (choice("low-weak", "low-strong", "cutoff-weak", "cutoff-strong"), choice("huge", "", "LIST")),
    "--case-scale": (real(0.002, 0.01), any_real),
    "--skeleton-compute": (choice("none", "measured", "0.5"), choice("x", "-1", "")), "--np": (ints(1, 4), any_int),
}
FLAGS = ["--async-output", "--halo-overlap", "--setup-only", "--skeleton", "--dry-run"]
KEYS = sorted(OPTIONS)


def command_line(r):
    """Up to 6 options (repeats allowed), three in four with a valid value; one in five a flag."""
    opts = []
    for _ in range(r.randint(0, 6)):
        if r.random() < 0.2:
            opts.append(r.choice(FLAGS))
            continue
        key = r.choice(KEYS)
        good, bad = OPTIONS[key]
        opts += [key, (good if r.random() < 0.75 else bad)(r)]
    return opts

@settings(max_examples=EXAMPLES, deadline=None, derandomize="FUZZ_SEED" not in os.environ, database=None,
          suppress_health_check=list(HealthCheck), print_blob=True,
          phases=[Phase.explicit, Phase.generate])  # no shrinking: each example is a job of its own
@given(st.randoms(use_true_random=True))  # a seeded random.Random per example: diverse draws
def test_any_command_line(rnd):
    opts = command_line(rnd)
    # Steps stay few unless the draw set them; the files go to a fresh directory.
    if "-t" not in opts:
        opts += ["-t", "2"]
    if "-n" not in opts:
        opts += ["-n", "16"]
    d = tempfile.mkdtemp(prefix="beatnik-fuzz-")
    try:
        files = ["--results", os.path.join(d, "r.json"), "--write-state", os.path.join(d, "s.csv")]
        p = run_beatnik(args.mpiexec, args.beatnik, opts + files, 2, TIMEOUT, extra=["--progress-every", "0"])
        shown = " ".join(opts)
        if VERBOSE:
            print(f"exit {p.returncode if p else 'hung'}: beatnik {shown}", flush=True)
        assert p is not None, f"hung (no exit within {TIMEOUT} s): beatnik {shown}"
        assert p.returncode in (0, 2, 3), f"exit {p.returncode}: beatnik {shown}\n{p.stderr[-1500:]}"
        if p.returncode == 2:
            errors = [l for l in p.stderr.splitlines() if l.startswith("beatnik: error:")]
            assert len(errors) == 1, f"{len(errors)} error lines: beatnik {shown}\n{p.stderr[-800:]}"
            left = os.listdir(d)
            assert not left, f"files left after exit 2: {left}: beatnik {shown}"
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    if "FUZZ_SEED" in os.environ:
        test_any_command_line = hypothesis_seed(int(os.environ["FUZZ_SEED"]))(test_any_command_line)
    try:
        test_any_command_line()
    except AssertionError as e:
        print(f"FAIL {e}")
        sys.exit(1)
    print(f"{EXAMPLES} drawn command lines: every one exited 0, 2 or 3 in time, with one message and no files on 2")
