"""beatnik-sweep STUDY.toml --out DIR [--run | --slurm] [--dry]: runs a study here (one results
file per run in DIR/runs, a manifest in DIR/manifest.json; finished runs are skipped) or writes
one Slurm batch script per run and a submit-all script (DIR/slurm). docs/sweep-and-report.md."""
import argparse
import os
import shlex
import shutil
import sys

from . import UsageError
from .local_runner import launcher_command, run_command, run_jobs
from .manifest import job_record, new_manifest, read_manifest, write_manifest
from .plan import plan_jobs
from .slurm import write_scripts
from .study import load_study


def _parser():
    p = argparse.ArgumentParser(prog="beatnik-sweep", description=__doc__.split("\n\n")[0])
    p.add_argument("study", help="the study description (TOML)")
    p.add_argument("--out", required=True, metavar="DIR", help="the study folder (created if missing)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--run", action="store_true", help="run the study here (the default)")
    mode.add_argument("--slurm", action="store_true", help="write Slurm batch scripts instead of running")
    p.add_argument("--dry", action="store_true", help="print the jobs and their command lines, write and run nothing")
    p.add_argument("--program", help="the beatnik executable (default: the study's `program`, else the one "
                                     "installed beside this command, else beatnik on PATH)")
    p.add_argument("--launcher", help="MPI launcher with {ranks} for the rank count, e.g. "
                                      "'mpiexec -n {ranks}' (default: the study's, else the project's mpirun.sh)")
    p.add_argument("--timeout", type=float, help="seconds one local run may take (default: the study's, else none)")
    return p


def resolve_program(args, study, defaults, need_exists):
    program = args.program or study.program or defaults.get("program") or "beatnik"
    if os.sep in program:
        program = os.path.abspath(program)
        if need_exists and not (os.path.isfile(program) and os.access(program, os.X_OK)):
            raise UsageError(f"program {program} is not an executable file")
        return program
    found = shutil.which(program)
    if found:
        return found
    if need_exists:
        raise UsageError(f"program {program!r} is not on PATH (give --program or `program` in the study)")
    return program


def resolve_launcher(args, study, defaults):
    if args.launcher:
        launcher = shlex.split(args.launcher)
        if "{ranks}" not in launcher:
            raise UsageError("--launcher must contain {ranks} as a word, e.g. 'mpiexec -n {ranks}'")
        return launcher
    if study.launcher:
        return study.launcher
    if defaults.get("launcher"):
        return list(defaults["launcher"])
    here = os.path.dirname(os.path.abspath(__file__))
    script = os.path.normpath(os.path.join(here, "..", "..", "scripts", "mpirun.sh"))
    if os.path.isfile(script):
        return [script, "{ranks}"]
    return ["mpiexec", "-n", "{ranks}"]


def main(argv=None, defaults=None):
    args = _parser().parse_args(argv)
    defaults = defaults or {}
    try:
        return _sweep(args, defaults)
    except UsageError as e:
        print(f"beatnik-sweep: {e}", file=sys.stderr)
        return 2


def _sweep(args, defaults):
    study = load_study(args.study)
    jobs = plan_jobs(study)
    out_dir = os.path.abspath(args.out)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise UsageError(f"--out {args.out}: exists and is not a folder")
    program = resolve_program(args, study, defaults, need_exists=not (args.slurm or args.dry))
    mode = "slurm" if args.slurm else "local"
    old = read_manifest(out_dir) if os.path.isdir(out_dir) else None
    if old is not None and old.get("study", {}).get("name") != study.name:
        raise UsageError(f"{out_dir} holds study {old['study'].get('name')!r}, not {study.name!r}: "
                         "use another --out folder")
    if args.slurm:
        records = [job_record(job, None) for job in jobs]
        manifest = new_manifest(study, mode, records)
        if args.dry:
            for job in jobs:
                print(f"{job.id}: slurm/{job.id}.sbatch ({job.ranks} ranks)")
            print(f"{len(jobs)} jobs (dry: nothing written)")
            return 0
        for sub in ("runs", "logs"):
            os.makedirs(os.path.join(out_dir, sub), exist_ok=True)
        written, finished = write_scripts(jobs, study, program, out_dir, manifest)
        write_manifest(out_dir, manifest)
        print(f"wrote {written} batch scripts to {os.path.join(out_dir, 'slurm')} ({finished} already finished); "
              f"submit with {os.path.join(out_dir, 'slurm', 'submit-all.sh')}")
        return 0

    launcher = resolve_launcher(args, study, defaults)
    records = [job_record(job, run_command(job, launcher, program, out_dir)) for job in jobs]
    if args.dry:
        for rec in records:
            print(f"{rec['id']}: {' '.join(shlex.quote(a) for a in rec['command'])}")
        print(f"{len(jobs)} jobs (dry: nothing run)")
        return 0
    if not shutil.which(launcher_command(launcher, 1)[0]):
        raise UsageError(f"launcher {launcher[0]!r} not found (give --launcher)")
    for sub in ("runs", "logs"):
        os.makedirs(os.path.join(out_dir, sub), exist_ok=True)
    manifest = new_manifest(study, mode, records)
    write_manifest(out_dir, manifest)
    timeout = args.timeout if args.timeout is not None else study.timeout
    print(f"study {study.name!r}: {len(jobs)} runs into {out_dir}", flush=True)
    try:
        ran, skipped, failed = run_jobs(jobs, manifest, out_dir, timeout)
    except KeyboardInterrupt:
        print("beatnik-sweep: interrupted; the manifest says which runs finished", file=sys.stderr)
        return 130
    print(f"study {study.name!r}: {ran} ran, {skipped} finished before, {failed} failed "
          f"(manifest {os.path.join(out_dir, 'manifest.json')})", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
