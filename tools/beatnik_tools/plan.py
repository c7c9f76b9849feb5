"""The jobs of a study: entries × rank counts × the cartesian product of the varied options ×
repetitions, each with a stable id, its program options, and where its results and log go."""
import itertools
import re

from . import UsageError
from dataclasses import dataclass


@dataclass
class Job:
    id: str
    entry: str
    ranks: int
    repetition: int
    vary: dict            # option -> value (True/False for flags)
    program_args: list    # the program's options, without --results
    results: str          # relative to the study folder
    log: str

    @property
    def label(self):
        """The job's series: its entry and varied options (no rank count, no repetition)."""
        return " ".join([self.entry] + [_vary_slug(o, v) for o, v in self.vary.items()])


def _vary_slug(option, value):
    name = option.lstrip("-")
    if value is True:
        return name
    if value is False:
        return "no-" + name
    return f"{name}{'' if len(name) == 1 else '='}{value}"


def _safe(text):
    return re.sub(r"[^A-Za-z0-9_=.+-]+", "-", text).strip("-")


def vary_args(vary):
    out = []
    for option, value in vary.items():
        if value is True:
            out.append(option)
        elif value is not False:
            out += [option, str(value)]
    return out


def plan_jobs(study):
    """Every job of the study, in a fixed order (entry, ranks, varied options, repetition)."""
    jobs = []
    options = [o for o, _ in study.vary]
    combos = list(itertools.product(*[vals for _, vals in study.vary])) if study.vary else [()]
    for entry in study.entries:
        for ranks in entry.ranks:
            for combo in combos:
                vary = dict(zip(options, combo))
                for rep in range(1, study.repetitions + 1):
                    parts = [entry.name, f"np{ranks}"] + [_safe(_vary_slug(o, v)) for o, v in vary.items()]
                    if study.repetitions > 1:
                        parts.append(f"r{rep}")
                    jid = ".".join(parts)
                    args = [a.replace("{ranks}", str(ranks))
                            for a in study.args + entry.program_args() + vary_args(vary)]
                    jobs.append(Job(jid, entry.name, ranks, rep, vary, args, f"runs/{jid}.json", f"logs/{jid}.log"))
    ids = [j.id for j in jobs]
    if len(set(ids)) != len(ids):
        raise UsageError(f"{study.path}: " "two jobs got the same id (varied values that differ only in punctuation)")
    return jobs
