#!/usr/bin/env python3
"""Tables for docs/gpu.md from beatnik results files (--results JSON) of -x cuda runs.

  gpu_bench_report.py size  BW_TBPS n1024.json n2048.json ...   time/step, FOM, device memory
  gpu_bench_report.py kernels BW_TBPS run.json                     bytes moved vs bandwidth
  gpu_bench_report.py scaling run_np1_staged.json ...               weak scaling per transport

Times are the median over steps of the slowest rank's step (the first step is dropped: it
loads kernels). The byte model counts, per mesh node, what each kernel must read and write
once (8 B per double, 16 B per complex); see docs/gpu.md.
"""
import json
import statistics
import sys

# Bytes per owned mesh node per call of each timed region, as the code is written.
#  velocity: reads z1 z2 z3 w1 w2 R·w, writes 3 stage values + V    10 doubles, plus the fused
#    RK update's x (z) in stages 2 and 3 (y is the state it already read) and ż kept in stage 3:
#    (0 + 3 + 6) / 3 = 3 more on average                              13 doubles
#  vorticity: reads V w1 w2, writes 2 stage values, reads x in stages 2-3: 5 + 4/3 doubles
#  (no rk.update region: the update is fused into the two kernels above)
#  riesz.multiply: complex read + write                                32 B
#  fft.local: one batched 1D pass over the complex array, read + write 32 B (64 B for a 2-D plan)
#  fft.reshape: pack (read 16 + write 16) + unpack (read 16 + write 16) 64 B; on one rank the
#    reshapes are one direct pass: block -> work read 16 + write 16, work -> field 16 + 8 (28 B)
MODEL = {
    "zmodel.velocity": 104.0,
    "zmodel.vorticity": 8.0 * (5 + 4.0 / 3.0),
    "riesz.multiply": 32.0,
    "fft.local": 32.0,
    "fft.reshape": 64.0,
}
# Fewest bytes a step could move (every pass fused that can be): per RK stage, read z, w and
# write the rates once (velocity + vorticity fused: 7 reads + 5 writes = 96 B), the Riesz
# transform as read w (16) + four 1D FFT passes (4 x 32) + write R·w (8) with pack, multiply
# and unpack fused into the passes, and the update (120 or 160 B).
FUSED_STEP = 3 * (96.0 + 16 + 4 * 32 + 8) + 120 + 160 + 160


def load(path):
    with open(path) as f:
        return json.load(f)


def step_time(doc):
    s = doc["steps"]["seconds"]
    s = s[1:] if len(s) > 2 else s
    return statistics.median(s)


def nodes(doc):
    n = doc["config"]["mesh_nodes"]
    return n[0] * n[1]


def size_table(bw, paths):
    print(f"| n | nodes | time/step (ms) | FOM (node updates/s) | device B/node | traffic bound (ms) | step/bound |")
    print("|---|---|---|---|---|---|---|")
    for p in paths:
        d = load(p)
        n = d["config"]["mesh_nodes"][0]
        t = step_time(d)
        N = nodes(d)
        per_node = d["performance"].get("device_bytes_per_node_max_rank", 0)
        bound = N * bound_bytes_per_node(d) / (bw * 1e12)
        print(f"| {n} | {N} | {t*1e3:.3f} | {N/t:.3e} | {per_node:.0f} | {bound*1e3:.3f} | {t/bound:.2f} |")


def model_for(doc):
    m = dict(MODEL)
    if doc["decomposition"]["ranks"] == 1:
        m["fft.reshape"] = 28.0
    # --fft-2d: one fft.local call is a 2-D transform standing for two 1-D passes; counted as
    # those, so the bound stays the same whichever plan ran (docs/gpu-small.md).
    if doc["config"].get("fft_2d_plan"):
        m["fft.local"] = 64.0
    return m


def bound_bytes_per_node(doc):
    """Bytes per node per step of the passes as written (model above x calls per step)."""
    regions = doc["timers"]["regions"]
    total = 0.0
    for name, b in model_for(doc).items():
        if name in regions:
            total += b * regions[name]["calls_per_step"]
    return total


def kernel_table(bw, path):
    d = load(path)
    N = nodes(d)
    regions = d["timers"]["regions"]
    if d["config"].get("gpu_graph_used"):
        # The regions inside a CUDA graph's step have call counts but no time (docs/gpu-small.md).
        print(f"{path}: the step ran as a CUDA graph, whose regions have no times; run with --gpu-graph off")
        return
    print(f"n = {d['config']['mesh_nodes'][0]}, copy bandwidth {bw:.2f} TB/s (read + write)\n")
    print("| region | calls/step | B/node/call | time/call (us) | GB/s | % of copy bw |")
    print("|---|---|---|---|---|---|")
    model = model_for(d)
    order = sorted(regions.items(), key=lambda kv: -kv[1]["median"])
    for name, r in order:
        calls = r["calls_per_step"]
        if name in ("step", "check") or calls == 0:
            continue
        per_call = r["median"] / calls
        if name in model:
            rate = model[name] * N / per_call
            print(f"| {name} | {calls:g} | {model[name]:.0f} | {per_call*1e6:.1f} | {rate/1e9:.0f} | {100*rate/(bw*1e12):.0f}% |")
        else:
            print(f"| {name} | {calls:g} | (ghosts only) | {per_call*1e6:.1f} | | |")
    t = step_time(d)
    b = bound_bytes_per_node(d)
    print(f"\nstep: {t*1e3:.3f} ms; passes as written move {b:.0f} B/node/step -> bound "
          f"{N*b/(bw*1e12)*1e3:.3f} ms (step = {t/(N*b/(bw*1e12)):.2f} x bound); fully fused minimum "
          f"{FUSED_STEP:.0f} B/node/step -> {N*FUSED_STEP/(bw*1e12)*1e3:.3f} ms (step = {t/(N*FUSED_STEP/(bw*1e12)):.2f} x)")


def scaling_table(paths):
    print("| GPUs | transport | n | time/step (ms) | halo share | fft.reshape share | halo B/step | fft B/step | FOM/GPU |")
    print("|---|---|---|---|---|---|---|---|---|")
    for p in paths:
        d = load(p)
        regs = d["timers"]["regions"]
        step = regs["step"]["median"] if "step" in regs else 0
        halo = sum(r["median"] for k, r in regs.items() if k in ("halo.state", "halo.V"))  # not the phases inside them
        resh = regs.get("fft.reshape", {}).get("median", 0)
        comm = d["communication"]

        def moved(pat):
            if pat not in comm:
                return 0
            b = comm[pat]["bytes_per_step_total"]
            return b["self"] + b["on_node"] + b["off_node"]

        ranks = d["decomposition"]["ranks"]
        t = step_time(d)
        print(f"| {ranks} | {d['config']['transport']} | {d['config']['mesh_nodes'][0]} | {t*1e3:.3f} | "
              f"{100*halo/step:.1f}% | {100*resh/step:.1f}% | {moved('halo'):.3e} | {moved('fft'):.3e} | "
              f"{nodes(d)/t/ranks:.3e} |")


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "size":
        size_table(float(sys.argv[2]), sys.argv[3:])
    elif what == "kernels":
        kernel_table(float(sys.argv[2]), sys.argv[3])
    elif what == "scaling":
        scaling_table(sys.argv[2:])
    else:
        sys.exit(__doc__)
