#!/usr/bin/env python3
"""Per-BR-call times of the tree solver on the device from beatnik results files
(scripts/gpu-tree-sums.sh): the top-level br.tree regions, the compute parts, the device kernel
times summed over the pipelined launches, and pairs per second of the near and far kernels."""
import json
import sys

rows = []
for path in sys.argv[1:]:
    d = json.load(open(path))
    reg = d["timers"]["regions"]
    calls = reg.get("br.tree.compute", {}).get("calls_per_step", 0) or 1
    per = {k: v["median"] / calls for k, v in reg.items() if k.startswith("br.tree")}
    top = sum(v for k, v in per.items() if k.count(".") == 2)
    bt = d["performance"].get("br_tree", {})
    dp, pp = bt.get("direct_pairs_per_call", 0), bt.get("proxy_pairs_per_call", 0)
    nk, fk = per.get("br.tree.compute.near.kernel", 0), per.get("br.tree.compute.far.kernel", 0)
    print(f"== {path}: {calls:g} BR calls per step, per call:")
    print(f"  tree total (top-level br.tree.* regions) {top:.3f} s")
    for k in sorted(per):
        print(f"    {k:40s} {per[k]:.4f}")
    print(f"  direct pairs {dp:.3e}, proxy pairs {pp:.3e}")
    if nk > 0 and fk > 0:
        print(f"  near kernel {dp / nk:.3e} pairs/s, far kernel {pp / fk:.3e} pairs/s (kernel times summed over the launches)")
