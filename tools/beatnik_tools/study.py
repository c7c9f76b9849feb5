"""Loading and checking a study description (TOML): which program, which cases or options,
which rank counts, how many repetitions, and which options to vary (docs/sweep-and-report.md)."""
import os
import tomllib
from dataclasses import dataclass, field

from . import UsageError

TOP_KEYS = {"name", "program", "launcher", "ranks", "repetitions", "args", "entry", "vary", "slurm", "timeout"}
ENTRY_KEYS = {"name", "case", "case_scale", "args", "ranks"}
SLURM_KEYS = {"ranks_per_node", "gpus_per_node", "cpus_per_task", "time", "account", "partition",
              "cpu_bind", "gpu_bind", "modules", "setup"}


@dataclass
class Entry:
    """One line of the study: a named case (`--case NAME --case-scale S`) and/or explicit options."""
    name: str
    case: str | None
    case_scale: float | None
    args: list[str]
    ranks: list[int]

    def program_args(self):
        out = []
        if self.case is not None:
            out += ["--case", self.case]
            if self.case_scale is not None:
                out += ["--case-scale", _number(self.case_scale)]
        return out + self.args


@dataclass
class SlurmSettings:
    ranks_per_node: int | None = None
    gpus_per_node: int = 0
    cpus_per_task: int | None = None
    time: str = "00:30:00"
    account: str | None = None
    partition: str | None = None
    cpu_bind: str = "cores"
    gpu_bind: str | None = None
    modules: list[str] = field(default_factory=list)
    setup: list[str] = field(default_factory=list)


@dataclass
class Study:
    path: str
    name: str
    program: str | None
    launcher: list[str] | None
    repetitions: int
    args: list[str]
    entries: list[Entry]
    vary: list[tuple[str, list]]   # option -> its values, in the file's order
    slurm: SlurmSettings
    timeout: float | None
    text: str


def _number(x):
    return str(int(x)) if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15) else repr(x)


def _fail(path, what):
    raise UsageError(f"{path}: {what}")


def _check_keys(path, where, table, allowed):
    unknown = sorted(set(table) - allowed)
    if unknown:
        _fail(path, f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} in {where} "
                    f"(allowed: {', '.join(sorted(allowed))})")


def _string_list(path, where, value):
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool)
                                              for v in value):
        _fail(path, f"{where} must be a list of strings or numbers")
    return [v if isinstance(v, str) else _number(v) for v in value]


def _ranks(path, where, value):
    if not isinstance(value, list) or not value or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                                                            for v in value):
        _fail(path, f"{where} must be a non-empty list of positive integers")
    if len(set(value)) != len(value):
        _fail(path, f"{where} lists a rank count twice")
    return list(value)


def _positive_int(path, where, value, allow_zero=False):
    if not isinstance(value, int) or isinstance(value, bool) or value < (0 if allow_zero else 1):
        _fail(path, f"{where} must be a {'non-negative' if allow_zero else 'positive'} integer")
    return value


def _vary_value(path, option, v):
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return _number(v)
    if isinstance(v, str) and v:
        return v
    _fail(path, f"vary.{option}: values must be strings, numbers or true/false (a flag)")


def load_study(path):
    """The Study in the TOML file `path`; UsageError with the file and the problem otherwise."""
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such study file")
    if not path.endswith(".toml"):
        raise UsageError(f"{path}: a study is a TOML file (*.toml); YAML is not supported")
    with open(path, "rb") as f:
        raw = f.read()
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"{path}: not valid TOML: {e}") from None
    _check_keys(path, "the study", doc, TOP_KEYS)
    name = doc.get("name")
    if not isinstance(name, str) or not name.strip():
        _fail(path, "`name` (a non-empty string) is required")
    program = doc.get("program")
    if program is not None and (not isinstance(program, str) or not program):
        _fail(path, "`program` must be a path or a command name")
    if program is not None and os.sep in program and not os.path.isabs(program):
        program = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), program))
    launcher = doc.get("launcher")
    if launcher is not None:
        launcher = _string_list(path, "`launcher`", launcher)
        if "{ranks}" not in launcher:
            _fail(path, "`launcher` must contain the element \"{ranks}\" (e.g. [\"mpiexec\", \"-n\", \"{ranks}\"])")
    ranks = _ranks(path, "`ranks`", doc["ranks"]) if "ranks" in doc else None
    reps = _positive_int(path, "`repetitions`", doc.get("repetitions", 1))
    args = _string_list(path, "`args`", doc.get("args", []))
    if "--results" in args or any(a.startswith("--results=") for a in args):
        _fail(path, "`args` must not contain --results (the sweep names each run's results file)")
    timeout = doc.get("timeout")
    if timeout is not None and (not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0):
        _fail(path, "`timeout` (seconds per run) must be a positive number")

    raw_entries = doc.get("entry")
    if not isinstance(raw_entries, list) or not raw_entries:
        _fail(path, "at least one [[entry]] is required (a case = \"NAME\" or args = [...])")
    entries, names = [], set()
    for k, e in enumerate(raw_entries):
        where = f"entry {k + 1}"
        if not isinstance(e, dict):
            _fail(path, f"{where} must be a table")
        _check_keys(path, where, e, ENTRY_KEYS)
        case = e.get("case")
        if case is not None and (not isinstance(case, str) or not case):
            _fail(path, f"{where}: `case` must be a case name")
        scale = e.get("case_scale")
        if scale is not None:
            if case is None:
                _fail(path, f"{where}: `case_scale` needs a `case`")
            if not isinstance(scale, (int, float)) or isinstance(scale, bool) or scale <= 0:
                _fail(path, f"{where}: `case_scale` must be a positive number")
        eargs = _string_list(path, f"{where}: `args`", e.get("args", []))
        if case is None and "args" not in e:
            _fail(path, f"{where} needs a `case` or `args`")
        if "--results" in eargs:
            _fail(path, f"{where}: `args` must not contain --results")
        ename = e.get("name", case)
        if not isinstance(ename, str) or not ename or not all(c.isalnum() or c in "-_" for c in ename):
            _fail(path, f"{where}: `name` is required with `args` and may contain letters, digits, - and _ only")
        if ename in names:
            _fail(path, f"{where}: the name {ename!r} is used twice")
        names.add(ename)
        eranks = _ranks(path, f"{where}: `ranks`", e["ranks"]) if "ranks" in e else ranks
        if eranks is None:
            _fail(path, f"{where}: no rank counts (`ranks` in the study or the entry)")
        entries.append(Entry(ename, case, scale, eargs, eranks))

    vary_table = doc.get("vary", {})
    if not isinstance(vary_table, dict):
        _fail(path, "[vary] must be a table of option = [values]")
    vary = []
    for option, values in vary_table.items():
        if not option.startswith("-"):
            _fail(path, f"vary: {option!r} is not an option (it starts with - or --)")
        if option == "--results":
            _fail(path, "vary: --results is set by the sweep")
        if not isinstance(values, list) or not values:
            _fail(path, f"vary.{option} must be a non-empty list")
        vals = [_vary_value(path, option, v) for v in values]
        if len(set(map(str, vals))) != len(vals):
            _fail(path, f"vary.{option} lists a value twice")
        vary.append((option, vals))

    st = doc.get("slurm", {})
    if not isinstance(st, dict):
        _fail(path, "[slurm] must be a table")
    _check_keys(path, "[slurm]", st, SLURM_KEYS)
    slurm = SlurmSettings()
    for key in ("ranks_per_node", "cpus_per_task"):
        if key in st:
            setattr(slurm, key, _positive_int(path, f"slurm.{key}", st[key]))
    if "gpus_per_node" in st:
        slurm.gpus_per_node = _positive_int(path, "slurm.gpus_per_node", st["gpus_per_node"], allow_zero=True)
    for key in ("time", "account", "partition", "cpu_bind", "gpu_bind"):
        if key in st:
            if not isinstance(st[key], str) or not st[key] or any(c.isspace() for c in st[key]):
                _fail(path, f"slurm.{key} must be a non-empty word")
            setattr(slurm, key, st[key])
    if not all(p.isdigit() for p in slurm.time.replace("-", ":").split(":")):
        _fail(path, f"slurm.time {slurm.time!r} is not a Slurm time (e.g. 00:30:00 or 1-00:00:00)")
    for key in ("modules", "setup"):
        if key in st:
            setattr(slurm, key, _string_list(path, f"slurm.{key}", st[key]))
    return Study(os.path.abspath(path), name, program, launcher, reps, args, entries, vary, slurm,
                 float(timeout) if timeout is not None else None, raw.decode("utf-8"))
