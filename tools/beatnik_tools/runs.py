"""The report's inputs: results files from a study folder (its manifest names the runs and their
series) or given one by one, checked (schema, version, one schema version for all) and turned
into Runs that the figures group by series, rank count and FFT configuration."""
import glob
import os
import statistics
from dataclasses import dataclass

from . import UsageError
from .manifest import read_manifest
from .results import SCHEMA, check_results, read_json

H_OPTIONS = ("-H", "--heffte-configuration")


@dataclass
class Run:
    path: str
    doc: dict
    id: str
    label: str          # the series as the user named it: manifest entry + varied options, else the options
    series: tuple       # what the runs of one scaling curve share: the program options (no --results)
    series_no_h: tuple  # the same without -H (the heatmap's columns)
    label_no_h: str
    ranks: int

    @property
    def completed(self):
        return self.doc.get("status") == "completed"

    @property
    def heffte(self):
        return self.doc["config"].get("heffte_configuration")

    def region(self, name):
        """Seconds per step of a timer region (median over ranks), or None when the run has none."""
        r = self.doc["timers"]["regions"].get(name)
        return None if r is None else float(r["median"])


def _drop_option(args, names):
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in names:
            skip = True
            continue
        if any(a.startswith(n + "=") for n in names) or any(a.startswith(n) and len(n) == 2 and len(a) > 2
                                                             for n in names):
            continue
        out.append(a)
    return out


def program_options(doc):
    """The run's command line without the program and without --results FILE."""
    argv = doc.get("provenance", {}).get("command_line") or []
    return tuple(_drop_option(list(argv[1:]), ("--results",)))


def _series_of_options(opts):
    """A series from a bare command line: the weak-scaling factor's value is left out (it follows
    the rank count), its presence is kept."""
    out, k = [], 0
    while k < len(opts):
        if opts[k] in ("-w", "--weak-scale") and k + 1 < len(opts):
            out += [opts[k], "W"]
            k += 2
            continue
        out.append(opts[k])
        k += 1
    return tuple(out)


def _series(opts, job):
    """(series, label, series without -H, its label): from the manifest's job (entry and varied
    options) when there is one, else from the command line."""
    if job:
        vary = job.get("vary") or {}
        rest = [f"{o.lstrip('-')}={v}" for o, v in vary.items() if o not in H_OPTIONS]
        no_h = " ".join([job.get("entry", "")] + rest)
        return ("study", job.get("label")), job.get("label"), ("study", no_h), no_h
    series = _series_of_options(opts)
    no_h = tuple(_drop_option(list(series), H_OPTIONS))
    return series, " ".join(series) or "(default options)", no_h, " ".join(no_h) or "(default options)"


def _collect_paths(inputs):
    """(paths, manifest labels by absolute path) for the command line's folders and files."""
    paths, labels = [], {}
    for item in inputs:
        if os.path.isdir(item):
            manifest = read_manifest(item)
            if manifest is not None:
                for job in manifest.get("jobs", []):
                    p = os.path.abspath(os.path.join(item, job.get("results", "")))
                    if os.path.isfile(p):
                        paths.append(p)
                        labels[p] = job
            else:
                found = sorted(glob.glob(os.path.join(item, "**", "*.json"), recursive=True))
                paths += [os.path.abspath(p) for p in found if os.path.basename(p) != "manifest.json"]
        elif os.path.isfile(item):
            paths.append(os.path.abspath(item))
        else:
            raise UsageError(f"{item}: no such file or folder")
    unique = list(dict.fromkeys(paths))
    if not unique:
        raise UsageError(f"no results files in {', '.join(inputs)}")
    return unique, labels


def load_runs(inputs):
    """Every input run, checked; UsageError when one is invalid or the schema versions differ."""
    paths, labels = _collect_paths(inputs)
    docs = {p: read_json(p) for p in paths}
    for p, doc in docs.items():
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
            raise UsageError(f"{p}: {check_results(doc)}")
    versions = sorted({repr(doc.get("schema_version")) for doc in docs.values()})
    if len(versions) > 1:
        by = {v: [os.path.basename(p) for p, d in docs.items() if repr(d.get("schema_version")) == v][:3]
              for v in versions}
        raise UsageError("mixed results schema versions: " +
                         "; ".join(f"version {v} in {', '.join(f)}" for v, f in by.items()) +
                         " (report one version at a time)")
    runs = []
    for p, doc in docs.items():
        why = check_results(doc)
        if why:
            raise UsageError(f"{p}: {why}")
        job = labels.get(p)
        rid = (job or {}).get("id") or os.path.splitext(os.path.basename(p))[0]
        series, label, no_h, label_no_h = _series(program_options(doc), job)
        runs.append(Run(p, doc, rid, label, series, no_h, label_no_h, int(doc["decomposition"].get("ranks", 0))))
    ids = [r.id for r in runs]
    if len(set(ids)) != len(ids):   # files of the same name from different folders
        for r in runs:
            r.id = os.path.relpath(os.path.splitext(r.path)[0]).replace(os.sep, "_").lstrip("._")
    return runs


def median(values):
    return statistics.median(values)


def top_level_regions(regions):
    """The regions of a step that do not nest in another (no phases, no hidden time), without
    `step` itself and the output regions outside it, in the order given."""
    names = [r for r in regions if r != "step" and not r.startswith("io.")]
    return [r for r in names if not any(r.startswith(p + ".") for p in names if p != r)]
