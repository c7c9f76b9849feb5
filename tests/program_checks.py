"""What the program-level test scripts (tests/cli, tests/io) share: running the beatnik
executable under mpiexec the way a user would, and counting named checks."""
import subprocess
import sys


def run_beatnik(mpiexec, beatnik, opts, ranks, timeout, extra=(), env=None):
    """The finished process (stdout and stderr captured), or None when it ran past `timeout`.
    env: the environment to run in (None: this process's)."""
    cmd = [mpiexec, "-n", str(ranks), beatnik, "--fftw-plan", "estimate", *extra, *opts]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None


class Checks:
    """check(name, ok, detail) records one check and prints a failure at once; finish() prints
    'N passed, N failed' with the failures and exits 0 only when none failed."""

    def __init__(self):
        self.passed = 0
        self.failed = []

    def __call__(self, name, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed.append(f"{name}: {detail}")
            print(f"FAIL {name}: {detail}", flush=True)

    def finish(self):
        print(f"{self.passed} passed, {len(self.failed)} failed")
        for f in self.failed:
            print("  " + f)
        sys.exit(1 if self.failed else 0)
