#!/usr/bin/env python3
"""Property-based test of the command line (hypothesis): random combinations of options and
values, valid and invalid, repeated and extreme, run on 2 ranks the way a user would. Whatever
is drawn, the program must exit 0, 2 (refused) or 3 (the simulation failed), never hang, and on
exit 2 print exactly one error message (rank 0) and leave no file behind. Small meshes and few
steps keep every valid run short. Examples are derandomised, so CI draws the same cases every
time; FUZZ_EXAMPLES sets how many (default 40), FUZZ_SEED draws another set."""
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

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
TIMEOUT = 60

junk = st.sampled_from(["", "x", "-1", "nan", "inf", "-inf", "1e400", "0x10", "3.5.1", "--", "é", "1,2"])
small_int = st.one_of(st.integers(-3, 40).map(str), junk)
real = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64).map(repr),
                 st.sampled_from(["0", "0.1", "0.5", "1", "2", "-0.5", "1e-300", "1e300"]), junk)
# Valid runs stay small: at most 32² nodes (or an absurd n the memory check must refuse).
nodes = st.one_of(st.sampled_from(["4", "8", "12", "16", "24", "32", "3", "0", "-8", "100000000", "2147483647",
                                   "99999999999"]), junk)

OPTIONS = {
    "-n": nodes, "-t": small_int, "-O": st.sampled_from(["low", "medium", "high", "huge", "LOW"]),
    "-S": st.sampled_from(["exact", "cutoff", "fmm"]), "-c": real, "-b": st.sampled_from(["periodic", "free", "x"]),
    "-I": st.sampled_from(["cos", "sech2", "random", "gaussian", "square"]), "-m": real, "-p": real,
    "-a": real, "-g": real, "-M": real, "-e": real, "-d": real, "-B": real, "-w": small_int,
    "--profile": st.sampled_from(["consistent", "beatnik", "reference"]), "--seed": small_int,
    "--ranks-grid": st.sampled_from(["1x2", "2x1", "2x2", "1x1", "0x2", "axb", "3"]),
    "--br-images": small_int, "--br-strategy": st.sampled_from(["overlap", "blocking", "nope"]),
    "--spatial-partition": st.sampled_from(["uniform", "balanced", "x"]),
    "--migrate-strategy": st.sampled_from(["alltoallv", "sparse", "neighbor", "x"]),
    "--load-snapshot": st.sampled_from(["1", "1,2", "-1", "x", "0"]), "--max-stretch": real,
    "-x": st.sampled_from(["host", "serial", "openmp", "cuda", "gpu"]),
    "--gpu-transport": st.sampled_from(["staged", "nccl", "auto", "x"]),
    "-H": st.sampled_from(["0", "3", "7", "8", "-1"]),
    "--fft-exchange": st.sampled_from(["alltoallv", "alltoall", "p2p", "p2p-pipelined", "nccl", "x"]),
    "--fft-intermediate": st.sampled_from(["slab", "pencil", "x"]),
    "--fft-reorder": st.sampled_from(["contiguous", "strided", "x"]),
    "--fft-spectrum": st.sampled_from(["intermediate", "input", "x"]),
    "--metric-power": real, "--progress-every": small_int, "-T": real,
    "--hdf5-mode": st.sampled_from(["auto", "blocks", "collective", "x"]),
    "--checkpoint-keep": small_int, "--warmup": small_int,
}
FLAGS = ["--async-output"]

option_list = st.lists(
    st.one_of(st.sampled_from(sorted(OPTIONS)).flatmap(lambda k: OPTIONS[k].map(lambda v: [k, v])),
              st.sampled_from(FLAGS).map(lambda f: [f])),
    min_size=0, max_size=7)

@settings(max_examples=EXAMPLES, deadline=None, derandomize="FUZZ_SEED" not in os.environ, database=None,
          suppress_health_check=list(HealthCheck), print_blob=True,
          phases=[Phase.explicit, Phase.generate])  # no shrinking: each example is a job of its own
@given(option_list)
def test_any_command_line(drawn):
    opts = [x for pair in drawn for x in pair]
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
