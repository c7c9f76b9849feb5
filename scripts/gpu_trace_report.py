#!/usr/bin/env python3
"""GPU timeline of a traced run (scripts/gpu-trace.sh, scripts/cupti_trace.cpp): the records split
into BR calls at the ends of a marker kernel (default: the tree solver's downward pass, one per
call with the dual traversal), and for the last calls the span, the time some kernel ran (the busy
union), the mean number of kernels in flight, the idle gaps, the host's long CUDA runtime calls
(where it waited for the device), each kernel's time and a coarse timeline (per bin: the busy
share and the kernels that filled it most).
Usage: scripts/gpu_trace_report.py TRACE.csv [--marker NAME] [--calls K] [--bins B] [--gap MS] [--api MS]"""
import argparse
import collections
import re
import shutil
import signal
import subprocess
import sys


def read(path):
    """(start, end, stream, kind, name) per record, by start; kind 0 a kernel, 1 a copy, 2 a host
    runtime call (stream: its thread)."""
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.rstrip("\n").split(",", 4)
            if len(parts) != 5:
                raise ValueError(f"{path}:{n}: not a trace record: {line.strip()!r}")
            kind, start, end, stream, name = parts
            rows.append((int(start), int(end), int(stream), int(kind), name))
    rows.sort()
    return rows


def union(intervals):
    """Time covered by the intervals and the gaps between them: (busy, [(gap start, length)])."""
    busy, gaps, cur = 0, [], None
    for s, e in sorted(intervals):
        if cur is None:
            cur = [s, e]
        elif s > cur[1]:
            busy += cur[1] - cur[0]
            gaps.append((cur[1], s - cur[1]))
            cur = [s, e]
        else:
            cur[1] = max(cur[1], e)
    if cur is not None:
        busy += cur[1] - cur[0]
    return busy, gaps


def calls(rows, marker):
    """The calls' windows (start, end]: between consecutive ends of the marker kernel."""
    ends = [e for s, e, st, k, n in rows if k == 0 and marker in n]
    return list(zip(ends, ends[1:]))


def analyse(rows, window, bins=20):
    """One window's figures (times in ns): span, busy, concurrency, gaps, per-kernel time and
    count, and per bin (busy share, {kernel: share})."""
    a, b = window
    kern = [(s, e, n) for s, e, st, k, n in rows if k == 0 and s >= a and e <= b]
    copies = [(s, e) for s, e, st, k, n in rows if k == 1 and s >= a and e <= b]
    busy, gaps = union([(s, e) for s, e, _ in kern])
    total = collections.Counter()
    count = collections.Counter()
    for s, e, n in kern:
        total[n] += e - s
        count[n] += 1
    width = (b - a) / bins
    timeline = []
    for i in range(bins):
        lo, hi = a + i * width, a + (i + 1) * width
        share = collections.Counter()
        clipped = []
        for s, e, n in kern:
            o = min(e, hi) - max(s, lo)
            if o > 0:
                share[n] += o / width
                clipped.append((max(s, lo), min(e, hi)))
        timeline.append((union(clipped)[0] / width, share))
    return {"span": b - a, "busy": busy, "concurrency": sum(total.values()) / busy if busy else 0.0,
            "gaps": [(g - a, length) for g, length in gaps], "kernels": total, "count": count,
            "copies": len(copies), "copy_time": sum(e - s for s, e in copies), "timeline": timeline}


def short_names(names):
    """Kernel names demangled (c++filt, when there) and cut to the function's qualified name."""
    names = sorted(names)
    out = dict(zip(names, names))
    if shutil.which("c++filt") and names:
        dem = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
        out = dict(zip(names, dem))
    for n, d in out.items():
        d = d.replace("(anonymous namespace)::", "")
        if "radix_sort" in d:
            d = "cub radix sort " + (re.search(r"DeviceRadixSort\w+", d) or re.search(r"radix_sort", d)).group(0)
        elif "kernel_1d<" in d or "kernel_2d<" in d:  # parallel_for: the lambda's enclosing function
            m = re.search(r"kernel_[12]d<(?:void )?([\w:]+(?:\([^<]*?\))?)", d)
            d = "parallel_for in " + re.sub(r"\(.*", "", m.group(1)) if m else d
        else:
            d = re.sub(r"\(.*", "", re.sub(r"^void ", "", d))
            d = re.sub(r"<.*", "", d)
        out[n] = d[:90]
    return out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("trace")
    p.add_argument("--marker", default="tree_down_kernel", help="a kernel that ends each call (name substring)")
    p.add_argument("--calls", type=int, default=1, help="the last K calls (default 1)")
    p.add_argument("--bins", type=int, default=20)
    p.add_argument("--gap", type=float, default=0.3, help="idle gaps listed from this many ms")
    p.add_argument("--api", type=float, default=0.3, help="host runtime calls listed from this many ms")
    a = p.parse_args(argv)
    try:
        rows = read(a.trace)
    except (OSError, ValueError) as e:
        sys.exit(f"gpu_trace_report: {e}")
    windows = calls(rows, a.marker)
    if not windows:
        sys.exit(f"gpu_trace_report: fewer than two '{a.marker}' kernels in {a.trace}: no call to report")
    names = short_names({n for s, e, st, k, n in rows if k == 0})
    print(f"{a.trace}: {len(rows)} records, {len(windows)} calls between '{a.marker}' ends")
    for ci in range(max(0, len(windows) - a.calls), len(windows)):
        r = analyse(rows, windows[ci], a.bins)
        ms = 1e-6
        print(f"\ncall {ci + 1}: span {r['span'] * ms:.1f} ms, kernels running {r['busy'] * ms:.1f} ms "
              f"({100 * r['busy'] / r['span']:.0f} %), {r['concurrency']:.2f} kernels in flight on average, "
              f"{r['copies']} copies ({r['copy_time'] * ms:.1f} ms)")
        gaps = [(round(g * ms, 1), round(length * ms, 1)) for g, length in r["gaps"] if length * ms >= a.gap]
        print(f"  idle from ms (for ms): {gaps}")
        lo, hi = windows[ci]
        waits = [(round((st - lo) * ms, 1), round((en - st) * ms, 1), n) for st, en, t, k, n in rows
                 if k == 2 and lo <= st < hi and (en - st) * ms >= a.api]
        print(f"  host runtime calls from ms (for ms): {waits}")
        merged = collections.Counter()
        counts = collections.Counter()
        for n, v in r["kernels"].items():
            merged[names[n]] += v
            counts[names[n]] += r["count"][n]
        for n, v in merged.most_common(15):
            print(f"  {v * ms:9.2f} ms {counts[n]:5d}x  {n}")
        width = r["span"] / a.bins
        for i, (busy, share) in enumerate(r["timeline"]):
            top = collections.Counter()
            for n, v in share.items():
                top[names[n]] += v
            parts = ", ".join(f"{n.split('::')[-1][:32]} {v:.2f}" for n, v in top.most_common(3))
            print(f"  {i * width * ms:7.1f} ms  busy {busy:4.2f}  {parts}")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    main(sys.argv[1:])
