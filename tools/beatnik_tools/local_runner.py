"""Running a study's jobs here, one after the other, through an MPI launcher: each run writes its
results file into the study folder, its output into a log; finished runs are skipped, failures
are recorded and the study goes on."""
import os
import subprocess
import sys
import time

from .manifest import write_manifest
from .results import is_finished


def launcher_command(launcher, ranks):
    return [str(ranks) if a == "{ranks}" else a for a in launcher]


def run_command(job, launcher, program, out_dir):
    return launcher_command(launcher, job.ranks) + [program, *job.program_args, "--results",
                                                    os.path.join(out_dir, job.results)]


def _tail(path, lines=3):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = [l.rstrip() for l in f.readlines() if l.strip()]
    except OSError:
        return ""
    return " | ".join(text[-lines:])


def run_jobs(jobs, manifest, out_dir, timeout=None, stream=sys.stdout):
    """Runs every job not yet finished; returns (ran, skipped, failed) counts."""
    ran = skipped = failed = 0
    total = len(jobs)
    for k, (job, rec) in enumerate(zip(jobs, manifest["jobs"]), 1):
        results = os.path.join(out_dir, job.results)
        head = f"[{k}/{total}] {job.id}"
        if is_finished(results):
            rec["status"] = "done"
            rec.setdefault("message", "")
            skipped += 1
            print(f"{head}: finished before, skipped", file=stream, flush=True)
            write_manifest(out_dir, manifest)
            continue
        for stale in (results, results + ".tmp"):
            if os.path.exists(stale):
                os.remove(stale)   # a failed or partial earlier attempt
        log = os.path.join(out_dir, job.log)
        print(f"{head}: running on {job.ranks} rank{'s' if job.ranks > 1 else ''} ...", file=stream, flush=True)
        start = time.monotonic()
        rec["status"] = "running"
        write_manifest(out_dir, manifest)
        with open(log, "w", encoding="utf-8") as f:
            f.write("$ " + " ".join(rec["command"]) + "\n")
            f.flush()
            try:
                proc = subprocess.run(rec["command"], stdout=f, stderr=subprocess.STDOUT, timeout=timeout)
                code, why = proc.returncode, None
            except subprocess.TimeoutExpired:
                code, why = None, f"ran past the time limit of {timeout:g} s"
            except OSError as e:
                code, why = None, f"could not start: {e.strerror}"
            except KeyboardInterrupt:
                rec["status"], rec["message"] = "interrupted", "stopped by the user (Ctrl-C); runs again next time"
                write_manifest(out_dir, manifest)
                raise
        seconds = time.monotonic() - start
        rec["seconds"] = round(seconds, 3)
        rec["exit_code"] = code
        if code == 0 and is_finished(results):
            rec["status"], rec["message"] = "done", ""
            ran += 1
            print(f"{head}: done in {seconds:.1f} s", file=stream, flush=True)
        else:
            if why is None:
                why = f"exit {code}" + ("" if os.path.isfile(results) else ", no results file")
            rec["status"], rec["message"] = "failed", f"{why}: {_tail(log)}"
            failed += 1
            print(f"{head}: FAILED ({why}; log {log})", file=stream, flush=True)
        write_manifest(out_dir, manifest)
    return ran, skipped, failed
