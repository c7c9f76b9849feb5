#!/usr/bin/env python3
"""scripts/gpu_trace_report.py on a made-up trace whose figures are worked out here by hand: two
calls between three marker kernels, kernels that overlap and leave known gaps, a copy, two host
runtime calls (one long enough to be listed, one not); the report's busy time, gaps, mean kernels
in flight, per-kernel totals and timeline bins against those numbers, its printed page, and a
clear error (exit 1) for a trace without two markers."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "gpu_trace_report.py")
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.dirname(SCRIPT))
import gpu_trace_report as rep  # noqa: E402
from program_checks import Checks  # noqa: E402

check = Checks()
MS = 1_000_000  # ns
# kind, start, end (ms), stream, name. The first call is (10, 30]: kernel A 11–15 on stream 1, B 13–17
# on stream 2 (overlap 13–15), a copy 17–18, idle 17–20, A again 20–24, the marker 26–30.
records = [
    (0, 0, 10, 7, "down_marker"),
    (0, 2, 6, 1, "kernel_A"),
    (0, 11, 15, 1, "kernel_A"),
    (0, 13, 17, 2, "kernel_B"),
    (1, 17, 18, 3, "copy1:4096"),
    (2, 16, 19, 4242, "cudaStreamSynchronize"),  # the host waits 3 ms from 6 ms into call 1
    (2, 21, 21, 4242, "cudaMemcpyAsync"),  # too short to be listed
    (0, 20, 24, 1, "kernel_A"),
    (0, 26, 30, 7, "down_marker"),
    (0, 31, 35, 1, "kernel_B"),
    (0, 36, 40, 7, "down_marker"),
]
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "trace.1.csv")
    with open(path, "w") as f:
        for k, s, e, st, n in records:
            f.write(f"{k},{s * MS},{e * MS},{st},{n}\n")
    rows = rep.read(path)
    check("records read", len(rows) == len(records), f"{len(rows)}")
    windows = rep.calls(rows, "down_marker")
    check("calls between markers", windows == [(10 * MS, 30 * MS), (30 * MS, 40 * MS)], f"{windows}")
    r = rep.analyse(rows, windows[0], bins=4)
    # Busy: 11–17 (6 ms) + 20–24 (4) + 26–30 (4) = 14 ms of the 20; kernel time 4+4+4+4 = 16.
    check("span", r["span"] == 20 * MS, f"{r['span']}")
    check("busy union", r["busy"] == 14 * MS, f"{r['busy']}")
    check("kernels in flight", abs(r["concurrency"] - 16 / 14) < 1e-12, f"{r['concurrency']}")
    check("gaps", r["gaps"] == [(7 * MS, 3 * MS), (14 * MS, 2 * MS)], f"{r['gaps']}")
    check("per kernel", dict(r["kernels"]) == {"kernel_A": 8 * MS, "kernel_B": 4 * MS, "down_marker": 4 * MS},
          f"{dict(r['kernels'])}")
    check("counts", dict(r["count"]) == {"kernel_A": 2, "kernel_B": 1, "down_marker": 1}, f"{dict(r['count'])}")
    check("copies", r["copies"] == 1 and r["copy_time"] == 1 * MS, f"{r['copies']} {r['copy_time']}")
    # Bins of 5 ms: 10–15 busy 11–15 (0.8; A 0.8, B 0.4), 15–20 busy 15–17 (0.4),
    # 20–25 busy 20–24 (0.8), 25–30 busy 26–30 (0.8).
    busy = [round(b, 12) for b, _ in r["timeline"]]
    check("timeline busy", busy == [0.8, 0.4, 0.8, 0.8], f"{busy}")
    first = r["timeline"][0][1]
    check("timeline shares", abs(first["kernel_A"] - 0.8) < 1e-12 and abs(first["kernel_B"] - 0.4) < 1e-12,
          f"{dict(first)}")
    out = subprocess.run([sys.executable, SCRIPT, path, "--marker", "down_marker", "--calls", "2", "--bins", "4"],
                         capture_output=True, text=True)
    check("report runs", out.returncode == 0, out.stderr)
    check("report page", "2 calls between 'down_marker' ends" in out.stdout and
          "call 1: span 20.0 ms, kernels running 14.0 ms (70 %)" in out.stdout and
          "idle from ms (for ms): [(7.0, 3.0), (14.0, 2.0)]" in out.stdout and
          "host runtime calls from ms (for ms): [(6.0, 3.0, 'cudaStreamSynchronize')]" in out.stdout, out.stdout)
    bad = subprocess.run([sys.executable, SCRIPT, path, "--marker", "nowhere"], capture_output=True, text=True)
    check("no markers: exit 1 with a message", bad.returncode == 1 and "fewer than two 'nowhere'" in bad.stderr,
          f"{bad.returncode} {bad.stderr}")
    with open(path, "a") as f:
        f.write("not,a record\n")
    broken = subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True)
    check("malformed line named", broken.returncode != 0 and "not a trace record" in broken.stderr,
          broken.stderr[-300:])
check.finish()
