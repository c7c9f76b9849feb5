#!/usr/bin/env python3
"""`cmake --install` into a temporary prefix: the programs land in bin/ (rocketrig a link to
beatnik), the documentation in share/doc/beatnik, and the installed beatnik runs away from the
build tree (--help, --case list), and so do the installed beatnik-sweep and beatnik-report.
Standard library only."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

parser = argparse.ArgumentParser()
parser.add_argument("--cmake", required=True)
parser.add_argument("--build-dir", required=True)
parser.add_argument("--mpiexec", default="mpiexec")
args = parser.parse_args()

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from program_checks import Checks, run_beatnik  # noqa: E402

check = Checks()
prefix = tempfile.mkdtemp(prefix="beatnik-install-")
p = subprocess.run([args.cmake, "--install", args.build_dir, "--prefix", prefix], capture_output=True, text=True,
                   timeout=300)
check("cmake --install exit 0", p.returncode == 0, p.stdout[-800:] + p.stderr[-800:])

bin_dir = os.path.join(prefix, "bin")
beatnik = os.path.join(bin_dir, "beatnik")
for prog in ("beatnik", "br_kernel_bench", "br_cutoff_bench", "beatnik-fft-bench", "beatnik-commbench"):
    path = os.path.join(bin_dir, prog)
    check(f"bin/{prog} installed and executable", os.path.isfile(path) and os.access(path, os.X_OK), path)
rr = os.path.join(bin_dir, "rocketrig")
check("bin/rocketrig links to beatnik", os.path.islink(rr) and os.readlink(rr) == "beatnik"
      and os.path.samefile(rr, beatnik), rr)
doc = os.path.join(prefix, "share", "doc", "beatnik")
for name in ("README.md", "cases.md", "results.md", "model.md"):
    check(f"share/doc/beatnik/{name}", os.path.isfile(os.path.join(doc, name)), doc)

# The installed program, run from elsewhere (nothing of the build tree on its way).
if os.path.isfile(beatnik):
    cwd = os.getcwd()
    os.chdir(prefix)
    for prog in (beatnik, rr):
        p = run_beatnik(args.mpiexec, prog, ["--help"], 1, 60)
        check(f"installed {os.path.basename(prog)} --help", p is not None and p.returncode == 0
              and "--case" in p.stdout and "--tilt" in p.stdout, "" if p is None else p.stderr[-400:])
    p = run_beatnik(args.mpiexec, beatnik, ["--case", "list"], 1, 60)
    check("installed beatnik --case list", p is not None and p.returncode == 0
          and all(c in p.stdout for c in ("low-weak", "low-strong", "cutoff-weak", "cutoff-strong")),
          "" if p is None else p.stdout[-400:] + p.stderr[-400:])
    # The Python study tools (tools/CMakeLists.txt) installed beside the program.
    for tool in ("beatnik-sweep", "beatnik-report"):
        path = os.path.join(bin_dir, tool)
        q = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=120) if os.path.isfile(path) else None
        check(f"installed {tool} --help", q is not None and q.returncode == 0 and "usage" in q.stdout.lower(),
              "missing" if q is None else q.stdout[-300:] + q.stderr[-300:])
    os.chdir(cwd)
shutil.rmtree(prefix, ignore_errors=True)
check.finish()
