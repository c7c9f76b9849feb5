#!/usr/bin/env python3
"""Mesh output, checkpoints, restart, surface input and clean stops of the beatnik program, on
`--ranks` ranks. Files are read back by VTK's XDMF reader (what ParaView uses) and by h5py,
and compared with --write-state CSV files of the same steps to the last bit.
Prints 'N passed, N failed'; exit status 0 when every check passed."""
import argparse
import csv
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("--beatnik", required=True)
parser.add_argument("--mpiexec", default="mpiexec")
parser.add_argument("--ranks", type=int, default=2)
parser.add_argument("--parallel-hdf5", type=int, default=1)
parser.add_argument("--parts", default="mesh,restart,refusals,surface,failure,sigterm")
args = parser.parse_args()
parts = set(args.parts.split(","))
P = args.ranks
try:
    from vtkmodules.vtkIOXdmf2 import vtkXdmfReader
    from vtkmodules.vtkCommonExecutionModel import vtkStreamingDemandDrivenPipeline
    from vtkmodules.util.numpy_support import vtk_to_numpy
    have_vtk = True
except ImportError:
    have_vtk = False

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from program_checks import Checks, run_beatnik  # noqa: E402

check = Checks()


def run(opts, ranks=P, timeout=300):
    return run_beatnik(args.mpiexec, args.beatnik, opts, ranks, timeout, extra=["--progress-every", "0"])


def ok_run(name, p):
    good = p is not None and p.returncode == 0
    check(name + " exit 0", good, "hung" if p is None else f"exit {p.returncode}: {p.stderr[-600:]}")
    return good


def read_csv(path):
    rows = list(csv.reader(open(path)))[1:]
    n = int(rows[-1][0]) + 1, int(rows[-1][1]) + 1
    a = np.array([[float(v) for v in r[2:]] for r in rows]).reshape(n[0], n[1], 5)
    return a


def bits_equal(a, b):
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


tmp = tempfile.mkdtemp(prefix=f"beatnik-io-np{P}-")
modes = ["blocks"] + (["collective"] if args.parallel_hdf5 else [])

# ---------------------------------------------------------------------------------------------
# 1. Mesh output, both HDF5 modes: VTK's XDMF reader and h5py against --write-state.
if "mesh" in parts:
    for label in modes + ["async"]:  # async: per-rank blocks written by a background thread
        mode = "blocks" if label == "async" else label
        d = os.path.join(tmp, f"mesh-{label}")
        os.makedirs(d)
        st = os.path.join(d, "s.csv")
        res = os.path.join(d, "r.json")
        opts = ["--async-output"] if label == "async" else ["--hdf5-mode", mode]
        p = run(["-n", "16", "-t", "5", "-F", "2", "-o", d, "--write-state", st,
                 "--write-state-every", "2", "--results", res] + opts)
        name = f"mesh {label}"
        if not ok_run(name, p):
            continue
        doc = json.load(open(res))
        boxes = doc["decomposition"]["owned_boxes"]
        check(name + " io in results", doc["io"]["mesh"]["files"] == 4 * (P if mode == "blocks" else 1)
              and doc["io"]["mesh"]["bytes"] == 4 * 256 * 68 and doc["io"]["mesh_hdf5_mode"] == mode, str(doc["io"]))
        check(name + " io.mesh timer", "io.mesh" in doc["timers"]["regions"], str(doc["timers"]["regions"].keys()))
        steps = [0, 2, 4, 5]  # every 2 steps and the final one
        expect = {s: read_csv(st.replace(".csv", f"_step{s:06d}.csv")) for s in [2, 4]}
        expect[5] = read_csv(st)
        # h5py: the files themselves.
        for s in steps:
            if mode == "collective":
                f = h5py.File(os.path.join(d, f"beatnik_step{s:06d}.h5"), "r")
                z, w, r = f["positions"][...], f["vorticity"][...], f["rank"][...]
                check(f"{name} h5 step attr {s}", int(f.attrs["step"]) == s, str(f.attrs["step"]))
            else:
                z = np.zeros((16, 16, 3)); w = np.zeros((16, 16, 2)); r = -np.ones((16, 16), dtype=np.int32)
                for k in range(P):
                    f = h5py.File(os.path.join(d, f"beatnik_step{s:06d}_rank{k:05d}.h5"), "r")
                    i0, j0 = int(f.attrs["block_i0"]), int(f.attrs["block_j0"])
                    ni, nj = f["rank"].shape
                    z[i0:i0 + ni, j0:j0 + nj] = f["positions"][...]
                    w[i0:i0 + ni, j0:j0 + nj] = f["vorticity"][...]
                    r[i0:i0 + ni, j0:j0 + nj] = f["rank"][...]
            for k, b in enumerate(boxes):
                check(f"{name} h5 rank field {s} r{k}", bool(np.all(r[b[0]:b[1], b[2]:b[3]] == k)), "")
            if s in expect:
                check(f"{name} h5 positions bitwise step {s}", bits_equal(z, expect[s][:, :, 0:3]), f"{np.argwhere(z != expect[s][:, :, 0:3])[:3].tolist()} {np.abs(z - expect[s][:, :, 0:3]).max()}")
                check(f"{name} h5 vorticity bitwise step {s}", bits_equal(w, expect[s][:, :, 3:5]), "")
        # VTK's XDMF reader (ParaView's): the time series, node count, coordinates, fields.
        if have_vtk:
            rd = vtkXdmfReader()
            rd.SetFileName(os.path.join(d, "beatnik.xdmf"))
            rd.UpdateInformation()
            times = rd.GetOutputInformation(0).Get(vtkStreamingDemandDrivenPipeline.TIME_STEPS())
            dt = doc["config"]["dt"]
            check(name + " vtk time steps", times is not None and len(times) == 4
                  and all(abs(t - s * dt) <= 1e-15 for t, s in zip(times, steps)), str(times))
            for s, t in zip(steps, times or []):
                rd.UpdateTimeStep(t)
                out = rd.GetOutputDataObject(0)
                leaves = []
                if out.IsA("vtkMultiBlockDataSet"):
                    for k in range(out.GetNumberOfBlocks()):
                        leaves.append(out.GetBlock(k))
                else:
                    leaves = [out]
                npts = sum(l.GetNumberOfPoints() for l in leaves)
                check(f"{name} vtk node count step {s}", npts == 256, str(npts))
                z = np.zeros((16, 16, 3)); w = np.zeros((16, 16, 2)); vel = np.zeros((16, 16, 3))
                for k, l in enumerate(leaves):
                    b = boxes[k] if len(leaves) > 1 else [0, 16, 0, 16]
                    ni, nj = b[1] - b[0], b[3] - b[2]
                    pts = vtk_to_numpy(l.GetPoints().GetData()).reshape(ni, nj, 3)
                    z[b[0]:b[1], b[2]:b[3]] = pts
                    w[b[0]:b[1], b[2]:b[3]] = vtk_to_numpy(l.GetPointData().GetArray("vorticity"))[:, :2].reshape(ni, nj, 2)
                    vel[b[0]:b[1], b[2]:b[3]] = vtk_to_numpy(l.GetPointData().GetArray("velocity")).reshape(ni, nj, 3)
                    rk = vtk_to_numpy(l.GetPointData().GetArray("rank"))
                    bb = boxes[k]
                    if len(leaves) > 1:
                        check(f"{name} vtk block rank {s} {k}", bool(np.all(rk == k)), "")
                if s in expect:
                    check(f"{name} vtk positions bitwise step {s}", bits_equal(z, expect[s][:, :, 0:3]), "")
                    check(f"{name} vtk vorticity bitwise step {s}", bits_equal(w, expect[s][:, :, 3:5]), "")
                check(f"{name} vtk velocity {'zero' if s == 0 else 'set'} step {s}",
                      (np.abs(vel).max() == 0) == (s == 0) and np.all(np.isfinite(vel)), "")
        else:
            print("[ NOT RUN ] VTK XDMF reader checks: vtk not importable (scripts/install-test-python.sh)")
        check(name + " no temporary files", not glob.glob(os.path.join(d, ".*tmp")), str(os.listdir(d)))

# ---------------------------------------------------------------------------------------------
# 2. Restart: 2T steps straight vs T steps + checkpoint + T steps, bitwise on the same ranks,
#    to round-off on another rank count; every order, periodic and free.
cases = [("low", ["-O", "low"], 4), ("medium", ["-O", "medium"], 3), ("high", ["-O", "high"], 3),
         ("high-free", ["-O", "high", "-b", "free"], 3)]
if "restart" in parts:
    other = 1 if P > 1 else 2
    for label, opts, T in cases:
        d = os.path.join(tmp, f"restart-{label}")
        os.makedirs(d)
        base = ["-n", "16"] + opts
        straight = os.path.join(d, "straight.csv")
        p = run(base + ["-t", str(2 * T), "--write-state", straight])
        if not ok_run(f"restart {label} straight", p):
            continue
        for mode in modes:
            o = os.path.join(d, mode)
            p = run(base + ["-t", str(T), "-o", o, "--checkpoint-every", str(T), "--hdf5-mode", mode])
            if not ok_run(f"restart {label} {mode} first half", p):
                continue
            ck = os.path.join(o, f"checkpoint_step{T:06d}.h5")
            check(f"restart {label} {mode} checkpoint written", os.path.exists(ck), str(os.listdir(o)))
            resumed = os.path.join(d, f"resumed-{mode}.csv")
            p = run(base + ["-t", str(2 * T), "-i", ck, "--write-state", resumed])
            if ok_run(f"restart {label} {mode} second half", p):
                check(f"restart {label} {mode} bitwise", open(resumed).read() == open(straight).read(), "")
                check(f"restart {label} {mode} says where it starts", f"starting at step {T}" in p.stdout, p.stdout[:800])
            cross = os.path.join(d, f"cross-{mode}.csv")
            p = run(base + ["-t", str(2 * T), "-i", ck, "--write-state", cross], ranks=other)
            if ok_run(f"restart {label} {mode} on {other} ranks", p):
                a, b = read_csv(cross), read_csv(straight)
                err = np.abs(a - b).max() / np.abs(b).max()
                check(f"restart {label} {mode} on {other} ranks within 1e-12", err <= 1e-12, f"{err:.3e}")
        # The checkpoint holds what docs/io.md says.
        f = h5py.File(os.path.join(d, modes[-1], f"checkpoint_step{T:06d}.h5"), "r")
        check(f"checkpoint {label} metadata", f.attrs["beatnik_kind"] == b"checkpoint" or f.attrs["beatnik_kind"] == "checkpoint", "")
        check(f"checkpoint {label} step/time", int(f.attrs["step"]) == T and float(f.attrs["time"]) == T * float(f.attrs["dt"]), "")
        cfg = json.loads(f.attrs["config"])
        prov = json.loads(f.attrs["provenance"])
        check(f"checkpoint {label} config and provenance", "must_match" in cfg and "-a/--atwood" in cfg["must_match"]
              and len(prov) > 0, "")
        check(f"checkpoint {label} checksums", "checksum" in f["positions"].attrs and "checksum" in f["vorticity"].attrs, "")

# A restart that writes mesh output the same way extends the index: VTK reads every step.
if "restart" in parts and have_vtk:
    for mode in modes:
        d = os.path.join(tmp, f"index-{mode}")
        p1 = run(["-n", "16", "-t", "4", "-F", "2", "-o", d, "--checkpoint-every", "3", "--hdf5-mode", mode])
        p2 = run(["-n", "16", "-t", "7", "-F", "2", "-o", d, "--hdf5-mode", mode, "-i",
                  os.path.join(d, "checkpoint_step000003.h5")])
        if ok_run(f"index {mode} first", p1) and ok_run(f"index {mode} restart", p2):
            rd = vtkXdmfReader()
            rd.SetFileName(os.path.join(d, "beatnik.xdmf"))
            rd.UpdateInformation()
            times = rd.GetOutputInformation(0).Get(vtkStreamingDemandDrivenPipeline.TIME_STEPS())
            check(f"index {mode} keeps steps 0 and 2", times is not None and len(times) == 5, str(times))
            for t in times or []:
                rd.UpdateTimeStep(t)
                out = rd.GetOutputDataObject(0)
                leaves = [out.GetBlock(k) for k in range(out.GetNumberOfBlocks())] if out.IsA("vtkMultiBlockDataSet") else [out]
                check(f"index {mode} time {t:.4g} readable", sum(l.GetNumberOfPoints() for l in leaves) == 256
                      and all(l.GetPointData().GetArray("vorticity") is not None for l in leaves), "")

# ---------------------------------------------------------------------------------------------
# 3. Refusals: exit 2, one message, no file written, on this rank count.
if "refusals" in parts:
    d = os.path.join(tmp, "refusals")
    os.makedirs(d)
    base = ["-n", "16"]
    p = run(base + ["-t", "2", "-o", d, "--checkpoint-every", "2", "-F", "2"])
    ok_run("refusals setup", p)
    ck = os.path.join(d, "checkpoint_step000002.h5")
    raw = open(ck, "rb").read()
    bad = {}
    bad["truncated.h5"] = raw[: len(raw) // 2]
    # Flip bits inside the positions data (the checksum must notice).
    f = h5py.File(ck, "r")
    off = f["positions"].id.get_offset()
    f.close()
    corrupt = bytearray(raw)
    corrupt[off + 800] ^= 0x10
    bad["corrupted.h5"] = bytes(corrupt)
    bad["text.h5"] = b"this is not HDF5\n" * 10
    for k, v in bad.items():
        open(os.path.join(tmp, k), "wb").write(v)
    with h5py.File(os.path.join(tmp, "other.h5"), "w") as f:
        f["data"] = np.zeros(3)
    refusals = [
        (["-i", ck, "-a", "0.25"], "-a/--atwood"),
        (["-i", ck, "-n", "32"], "nodes"),
        (["-i", ck, "-O", "high"], "-O/--order"),
        (["-i", ck, "-d", "0.001"], "-d/--dt"),
        (["-i", ck, "-t", "2"], "give -t greater than 2"),
        (["-i", ck, "-t", "4", "--warmup", "2"], "--warmup 2 would leave none to measure"),
        (["-i", os.path.join(tmp, "truncated.h5")], "truncated"),
        (["-i", os.path.join(tmp, "corrupted.h5")], "checksum mismatch"),
        (["-i", os.path.join(tmp, "text.h5")], "not an HDF5 file"),
        (["-i", os.path.join(tmp, "missing.h5")], "no such file"),
        (["-i", os.path.join(tmp, "other.h5")], "not a beatnik checkpoint or surface file"),
        (["-i", sorted(glob.glob(os.path.join(d, "beatnik_step000002*.h5")))[0]], "mesh file, not a checkpoint"),
        (["-i", tmp], "not a regular file"),
        (["--checkpoint-keep", "0"], "checkpoint-keep"),
        (["--hdf5-mode", "mpi"], "hdf5-mode"),
        (["--async-output", "--hdf5-mode", "collective"], "goes with --hdf5-mode blocks"),
    ]
    for opts, expect in refusals:
        out = os.path.join(tmp, "refusal-out")
        name = "refusal " + " ".join(o.replace(tmp, "TMP") for o in opts)
        t = [] if "-t" in opts else ["-t", "4"]
        p = run(base + t + ["-o", out, "--checkpoint-every", "1", "-F", "1"] + opts, timeout=60)
        if p is None:
            check(name, False, "hung")
            continue
        errors = [l for l in p.stderr.splitlines() if l.startswith("beatnik: error:")]
        check(name + " exit 2", p.returncode == 2, f"exit {p.returncode} {p.stderr[-400:]}")
        check(name + " one message", len(errors) == 1, p.stderr[-400:])
        check(name + " says why", expect in p.stderr, f"{expect!r} not in {p.stderr[-400:]!r}")
        check(name + " no abort", "MPI_Abort" not in p.stderr and "MPI_ABORT" not in p.stderr, p.stderr[-300:])
        files = os.listdir(out) if os.path.isdir(out) else []
        check(name + " no files", files == [], str(files))
        shutil.rmtree(out, ignore_errors=True)

# Random single-bit damage anywhere in a checkpoint: refused (exit 2) or, where the bit is unused
# padding, harmless (the restart gives the undamaged result); never a crash or a hang.
if "fuzz" in parts:
    import random
    d = os.path.join(tmp, "fuzz")
    p = run(["-n", "16", "-t", "2", "-o", d, "--checkpoint-every", "2"])
    if ok_run("fuzz setup", p):
        ck = os.path.join(d, "checkpoint_step000002.h5")
        good = os.path.join(d, "good.csv")
        ok_run("fuzz undamaged restart", run(["-n", "16", "-t", "3", "-i", ck, "--write-state", good]))
        raw = open(ck, "rb").read()
        rng = random.Random(7)
        refused = 0
        for k in range(30):
            b = bytearray(raw)
            off = rng.randrange(len(b))
            b[off] ^= 1 << rng.randrange(8)
            damaged = os.path.join(d, "damaged.h5")
            open(damaged, "wb").write(bytes(b))
            out = os.path.join(d, "out.csv")
            if os.path.exists(out):
                os.remove(out)
            p = run(["-n", "16", "-t", "3", "-i", damaged, "--write-state", out], timeout=60)
            if p is None:
                check(f"fuzz bit {off} no hang", False, "hung")
                continue
            if p.returncode == 2:
                refused += 1
                check(f"fuzz bit {off} one message", p.stderr.count("beatnik: error:") == 1, p.stderr[-300:])
            else:
                check(f"fuzz bit {off} harmless", p.returncode == 0 and open(out).read() == open(good).read(),
                      f"exit {p.returncode} {p.stderr[-300:]}")
        check("fuzz most damage refused", refused >= 15, str(refused))

# ---------------------------------------------------------------------------------------------
# 4. Starting from a plain HDF5 surface: the state of step T of a run, written by h5py, continued
#    for T steps, equals that run's step 2T to the last bit (the model is autonomous).
if "surface" in parts:
    d = os.path.join(tmp, "surface")
    os.makedirs(d)
    st = os.path.join(d, "s.csv")
    p = run(["-n", "16", "-t", "6", "--write-state", st, "--write-state-every", "3"])
    if ok_run("surface reference", p):
        a = read_csv(st.replace(".csv", "_step000003.csv"))
        sf = os.path.join(d, "surface.h5")
        with h5py.File(sf, "w") as f:
            f["positions"] = a[:, :, 0:3]
            f["vorticity"] = a[:, :, 3:5]
        out = os.path.join(d, "from-surface.csv")
        p = run(["-n", "16", "-t", "3", "-i", sf, "--write-state", out])
        if ok_run("surface start", p):
            check("surface start bitwise", bits_equal(read_csv(out), read_csv(st)), "")
            check("surface start banner", "surface file" in p.stdout, p.stdout[:600])
        p = run(["-n", "32", "-t", "3", "-i", sf])
        check("surface wrong size refused", p is not None and p.returncode == 2 and "16 x 16 nodes" in p.stderr,
              "" if p is None else p.stderr[-300:])

# ---------------------------------------------------------------------------------------------
# 5. A failed run (exit 3) leaves a checkpoint and mesh output of the failed step.
if "failure" in parts:
    d = os.path.join(tmp, "failure")
    res = os.path.join(tmp, "failure.json")
    p = run(["--profile", "beatnik", "-n", "32", "-t", "60", "-o", d, "--checkpoint-every", "10", "-F", "10",
             "--results", res])
    check("failure exit 3", p is not None and p.returncode == 3, "" if p is None else f"{p.returncode} {p.stderr[-300:]}")
    if p is not None and p.returncode == 3:
        doc = json.load(open(res))
        s = doc["steps"]["done"]
        check("failure checkpoint", os.path.exists(os.path.join(d, f"checkpoint_step{s:06d}_failed.h5")), str(os.listdir(d)))
        names = os.listdir(d)
        check("failure mesh output", any(n.startswith(f"beatnik_step{s:06d}") for n in names), str(names))
        check("failure index lists the step", f"step {s}" in open(os.path.join(d, "beatnik.xdmf")).read(), "")
        check("failure kept 2 good checkpoints", len([n for n in names if n.startswith("checkpoint") and "failed" not in n]) == 2, str(names))

# ---------------------------------------------------------------------------------------------
# 6. SIGTERM (as a batch scheduler sends it to every rank): the run finishes its step, writes a
#    checkpoint and the results, exits 4; the checkpoint restarts to the uninterrupted result.
if "sigterm" in parts:
    d = os.path.join(tmp, "sigterm")
    os.makedirs(d)
    res = os.path.join(d, "r.json")
    base = ["-n", "32", "-O", "low", "-a", "-0.5"]  # stable stratification: runs as long as asked
    steps = "100000"
    cmd = [args.mpiexec, "-n", str(P), args.beatnik, "--fftw-plan", "estimate", "--progress-every", "1"] + base + \
          ["-t", steps, "-o", d, "--results", res]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Wait until the run steps, then signal the ranks (the children of mpiexec running beatnik).
    line = ""
    while "step" not in line:
        line = proc.stdout.readline()
        if not line:
            break
    time.sleep(0.3)
    ranks = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                stat = open(f"/proc/{pid}/stat").read()
                cmdline = open(f"/proc/{pid}/cmdline").read()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == proc.pid and args.beatnik in cmdline:
                ranks.append(int(pid))
    check("sigterm found the ranks", len(ranks) == P, str(ranks))
    for pid in ranks:
        os.kill(pid, signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        check("sigterm stopped in time", False, "hung")
    check("sigterm exit 4", proc.returncode == 4, f"{proc.returncode} {err[-500:]}")
    cks = sorted(glob.glob(os.path.join(d, "checkpoint_step*.h5")))
    check("sigterm checkpoint", len(cks) == 1, str(os.listdir(d)))
    check("sigterm results", os.path.exists(res) and json.load(open(res))["status"] == "stopped", "")
    if cks and proc.returncode == 4:
        s = int(os.path.basename(cks[0])[len("checkpoint_step"):][:6])
        check("sigterm stopped early", 0 < s < int(steps), str(s))
        total = str(s + 5)
        a, b = os.path.join(d, "a.csv"), os.path.join(d, "b.csv")
        p1 = run(base + ["-t", total, "--write-state", a])
        p2 = run(base + ["-t", total, "-i", cks[0], "--write-state", b])
        if ok_run("sigterm uninterrupted", p1) and ok_run("sigterm restarted", p2):
            check("sigterm restart equals uninterrupted run", open(a).read() == open(b).read(), "")

# ---------------------------------------------------------------------------------------------
# 7. Device runs (CUDA builds, on a GPU machine): a checkpoint of a device run continues on the
#    host and a host checkpoint on the device, to round-off; device mesh output equals its state.
if "device" in parts:
    d = os.path.join(tmp, "device")
    base = ["-n", "32", "-O", "low"]
    T = 4
    straight = os.path.join(d, "straight.csv")
    os.makedirs(d)
    if ok_run("device host straight", run(base + ["-t", str(2 * T), "--write-state", straight])):
        ref = read_csv(straight)
        for first, second in (("cuda", "host"), ("host", "cuda")):
            o = os.path.join(d, f"{first}-{second}")
            p = run(base + ["-x", first, "-t", str(T), "-o", o, "--checkpoint-every", str(T), "-F", str(T),
                            "--write-state", os.path.join(o, "first.csv")])
            if not ok_run(f"device {first} first half", p):
                continue
            if first == "cuda":
                f = h5py.File(os.path.join(o, "beatnik_step%06d.h5" % T if args.parallel_hdf5 else
                                           "beatnik_step%06d_rank00000.h5" % T), "r")
                a = read_csv(os.path.join(o, "first.csv"))
                if args.parallel_hdf5:
                    check("device mesh output equals its state", bits_equal(f["positions"][...], a[:, :, 0:3]), "")
            out = os.path.join(o, "resumed.csv")
            p = run(base + ["-x", second, "-t", str(2 * T), "-i", os.path.join(o, f"checkpoint_step{T:06d}.h5"),
                            "--write-state", out])
            if ok_run(f"device {first} -> {second} restart", p):
                err = np.abs(read_csv(out) - ref).max() / np.abs(ref).max()
                check(f"device {first} -> {second} within 1e-12", err <= 1e-12, f"{err:.3e}")

shutil.rmtree(tmp, ignore_errors=True)
check.finish()
