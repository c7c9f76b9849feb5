#!/usr/bin/env python3
"""The dual traversal's accuracy does not depend on the rank count (issue 16; docs/tree-log.md "The
LET and the dual traversal"): the error --br-check measures on N ranks is within 2x the error of
one rank on the same surface and tolerance, and at least 10 below it. The surface is README
example 2's free sech2 at 512^2 nodes, TOL 1e-3: the smallest case found where remote clusters the
dual could not split (their particle counts did not travel with the LET) made the multi-rank error
16x (2 ranks) and 27x (4 ranks) one rank's, its largest sample above TOL. --br-check 64: the same
64 sampled nodes on any rank count. Standard library only."""
import argparse
import json
import os
import shutil
import sys
import tempfile

parser = argparse.ArgumentParser()
parser.add_argument("--beatnik", required=True)
parser.add_argument("--mpiexec", default="mpiexec")
parser.add_argument("--ranks", type=int, required=True)
args = parser.parse_args()

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from program_checks import Checks, run_beatnik  # noqa: E402

check = Checks()
tmp = tempfile.mkdtemp(prefix="beatnik-tree-ranks-")
TOL = 1e-3
OPTS = ["-O", "high", "-n", "512", "-b", "free", "-I", "sech2", "-m", "0.1", "-p", "9", "-a", "0.15", "-M", "2",
        "-e", "2", "-t", "1", "-S", "tree", "--tree-traversal", "dual", "--br-tolerance", str(TOL),
        "--br-check", "64", "--progress-every", "0"]


def measured(ranks):
    """The run's br_check block (max_rel, rms_rel) and its proxy pairs per call, or None."""
    res = os.path.join(tmp, f"np{ranks}.json")
    p = run_beatnik(args.mpiexec, args.beatnik, OPTS + ["--results", res], ranks, 600)
    ok = p is not None and p.returncode == 0
    check(f"{ranks} rank(s): runs", ok, "timeout" if p is None else f"rc {p.returncode}: {p.stderr[-1500:]}")
    if not ok:
        return None
    with open(res) as f:
        r = json.load(f)
    return r["br_check"], r["performance"]["br_tree"]["proxy_pairs_per_call"]


one = measured(1)
many = measured(args.ranks) if args.ranks > 1 else one
if one is not None and many is not None:
    (c1, proxy1), (cn, proxyn) = one, many
    print(f"512^2 free sech2, TOL {TOL:g}: 1 rank error max {c1['max_rel']:.3e} RMS {c1['rms_rel']:.3e}; "
          f"{args.ranks} rank(s) max {cn['max_rel']:.3e} RMS {cn['rms_rel']:.3e} "
          f"({proxyn:.3g} proxy pairs per BR call)", flush=True)
    check("the far field is used", proxyn > 0 and proxy1 > 0, f"{proxy1} and {proxyn} proxy pairs per call")
    check(f"{args.ranks} rank(s): RMS error within 2x one rank's", cn["rms_rel"] <= 2.0 * c1["rms_rel"],
          f"{cn['rms_rel']:.3e} against {c1['rms_rel']:.3e}")
    check(f"{args.ranks} rank(s): every sample at least 10 below TOL", cn["max_rel"] <= TOL / 10,
          f"{cn['max_rel']:.3e}")
    check(f"{args.ranks} rank(s): the error is measured", cn["rms_rel"] > 0.0 and cn["samples"] == 64,
          f"{cn['samples']} samples")

shutil.rmtree(tmp)
check.finish()
