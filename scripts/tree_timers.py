#!/usr/bin/env python3
"""Per-call split of tree-solver runs (-S tree): every br.tree.* timer region of each results file
given, in ms per BR call (3 calls per step), as the median over ranks and, in brackets, the
slowest rank; then s/call of the step and the LET bytes. Usage: scripts/tree_timers.py R.json ..."""
import json
import signal
import sys

CALLS_PER_STEP = 3


def main(paths):
    for path in paths:
        d = json.load(open(path))
        regions = d["timers"]["regions"]
        ranks = d["decomposition"]["ranks"]
        step = regions.get("step", {})
        tree = d.get("performance", {}).get("br_tree", {})
        print(f"{path}: {ranks} rank(s), {step.get('median', 0.0) / CALLS_PER_STEP:.4f} s/call "
              f"(slowest rank {step.get('max', 0.0) / CALLS_PER_STEP:.4f}), "
              f"LET MB/call busiest rank {tree.get('let_bytes_per_call_max_rank', 0) / 1e6:.1f}")
        for name in sorted(k for k in regions if k.startswith("br.tree") or k == "br.check"):
            r = regions[name]
            med, top = 1e3 * r["median"] / CALLS_PER_STEP, 1e3 * r["max"] / CALLS_PER_STEP
            print(f"  {name:<34} {med:9.2f} ms  [{top:9.2f}]")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
