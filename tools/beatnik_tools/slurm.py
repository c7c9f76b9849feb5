"""Slurm batch scripts for a study: one sbatch script per job (nodes, tasks, GPUs per node,
CPU and GPU binding, time limit, account and partition when given, the srun line) and a
submit-all script that submits the jobs whose results are not there yet."""
import math
import os
import shlex

from .results import is_finished


def job_geometry(ranks, s):
    """(nodes, tasks per node, cpus per task) of a job of `ranks` ranks under the settings `s`."""
    per_node = s.ranks_per_node or (s.gpus_per_node if s.gpus_per_node > 0 else ranks)
    per_node = min(per_node, ranks)
    return math.ceil(ranks / per_node), per_node, s.cpus_per_task


def batch_script(job, study, program, out_dir):
    s = study.slurm
    nodes, per_node, cpus = job_geometry(job.ranks, s)
    q = shlex.quote
    lines = ["#!/bin/bash",
             f"#SBATCH --job-name={q(study.name + '.' + job.id)}",
             f"#SBATCH --nodes={nodes}",
             f"#SBATCH --ntasks={job.ranks}",
             f"#SBATCH --ntasks-per-node={per_node}"]
    if cpus:
        lines.append(f"#SBATCH --cpus-per-task={cpus}")
    gpus = min(s.gpus_per_node, per_node)   # one GPU per rank on a node, never more than the node has
    if gpus > 0:
        lines.append(f"#SBATCH --gpus-per-node={gpus}")
    lines.append(f"#SBATCH --time={s.time}")
    if s.account:
        lines.append(f"#SBATCH --account={s.account}")
    if s.partition:
        lines.append(f"#SBATCH --partition={s.partition}")
    lines.append(f"#SBATCH --output={q(os.path.join(out_dir, 'logs', job.id + '.%j.log'))}")
    lines += ["set -euo pipefail"]
    lines += [f"module load {q(m)}" for m in s.modules]
    lines += s.setup
    lines.append(f"export OMP_NUM_THREADS={cpus or 1}")
    srun = ["srun", f"--ntasks={job.ranks}", f"--ntasks-per-node={per_node}"]
    if cpus:
        srun.append(f"--cpus-per-task={cpus}")
    srun.append(f"--cpu-bind={s.cpu_bind}")
    if gpus > 0:
        srun.append(f"--gpu-bind={s.gpu_bind or 'single:1'}")
    cmd = srun + [program, *job.program_args, "--results", os.path.join(out_dir, job.results)]
    lines.append(" ".join(q(a) for a in cmd))
    return "\n".join(lines) + "\n", cmd


def write_scripts(jobs, study, program, out_dir, manifest):
    """Writes slurm/JOB.sbatch for every job and slurm/submit-all.sh; returns (written, finished)."""
    sdir = os.path.join(out_dir, "slurm")
    os.makedirs(sdir, exist_ok=True)
    pending, finished = [], 0
    for job, rec in zip(jobs, manifest["jobs"]):
        text, cmd = batch_script(job, study, program, out_dir)
        path = os.path.join(sdir, job.id + ".sbatch")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(path, 0o755)
        rec["command"] = cmd
        rec["script"] = os.path.relpath(path, out_dir)
        if is_finished(os.path.join(out_dir, job.results)):
            rec["status"] = "done"
            finished += 1
        else:
            rec["status"] = "written"
            pending.append(job)
    submit = ["#!/bin/bash",
              f"# Submits the jobs of study {study.name!r} whose results were not there when "
              "beatnik-sweep --slurm wrote this file",
              "# (and skips any whose results file has appeared since). Run it from anywhere.",
              "set -euo pipefail",
              f"cd {shlex.quote(out_dir)}"]
    for job in pending:
        submit.append(f"[ -e {shlex.quote(job.results)} ] || sbatch {shlex.quote('slurm/' + job.id + '.sbatch')}")
    path = os.path.join(sdir, "submit-all.sh")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(submit) + "\n")
    os.chmod(path, 0o755)
    return len(jobs), finished
