"""beatnik-report DIR|FILES... --out DIR: draws the figures of a study's results files (scaling,
-H heatmap, phase breakdown, per-rank load, step-time histograms, bytes per placement, rank-pair
matrix, accuracy against cost of the BR solvers, BR call time against problem size: each when the
inputs hold what it needs) as PNG, SVG and CSV, and one HTML page."""
import argparse
import os
import sys

from . import UsageError
from .html_page import write_page
from .runs import load_runs


def _parser():
    p = argparse.ArgumentParser(prog="beatnik-report", description=__doc__.split("\n\n")[0])
    p.add_argument("inputs", nargs="+", metavar="DIR|FILE", help="study folders (beatnik-sweep --out) or results files")
    p.add_argument("--out", required=True, metavar="DIR", help="where the figures and index.html go")
    return p


def main(argv=None, defaults=None):
    args = _parser().parse_args(argv)
    try:
        return _report(args)
    except UsageError as e:
        print(f"beatnik-report: {e}", file=sys.stderr)
        return 2


def _report(args):
    runs = load_runs(args.inputs)
    done = [r for r in runs if r.completed]
    dry = [r for r in runs if r.doc.get("status") == "dry-run"]  # the rank-pair matrix only
    left_out = [r for r in runs if not r.completed and r not in dry]
    for r in left_out:
        print(f"beatnik-report: {r.path}: status {r.doc.get('status')!r}, left out of the figures", file=sys.stderr)
    if not done and not dry:
        raise UsageError("none of the runs completed: nothing to draw")
    out_dir = os.path.abspath(args.out)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise UsageError(f"--out {args.out}: exists and is not a folder")
    os.makedirs(out_dir, exist_ok=True)
    # matplotlib only once the inputs are known to be good (a bad input answers at once)
    from .figures import (accuracy_cost, comm_matrix, heatmap, histogram, load, phases, placement_bytes, scaling,
                          size_scaling)
    figures = []
    for drawer in (scaling, heatmap, phases, load, histogram, placement_bytes, accuracy_cost, size_scaling):
        figures += drawer.draw(done, out_dir)
    figures += comm_matrix.draw(done + dry, out_dir)
    page = os.path.join(out_dir, "index.html")
    write_page(page, figures, done, left_out, args.inputs)
    for f in figures:
        print(f"{f.kind:<9} {os.path.basename(f.png)[:-4]}.{{png,svg,csv}}")
    print(f"{len(figures)} figures from {len(done) + len(dry)} runs: {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
