"""Accuracy against cost of the Birkhoff-Rott solvers (docs/tree.md, "Accuracy and cost"): for runs
with --br-check (results: br_check), the measured error against the time per BR call, log-log,
one panel per case, one marker series per solver (exact, cutoff, tree), each point labelled with
its cutoff radius c or tolerance TOL.

Time per BR call: br_timing (the solver's top-level timer regions ÷ the BR calls per step the
timers counted; br.check, the check's own cost, left out). Error = br_check.rms_rel (the worst BR
call of the run; max_rel beside it in the CSV). Repetitions count by their median."""
from collections import defaultdict

from ..runs import median
from .br_timing import SOLVERS, seconds_per_call, solver_of
from .common import plt, save

MARKERS = {"exact": "s", "cutoff": "o", "tree": "^"}
COLORS = {"exact": "black", "cutoff": "tab:blue", "tree": "tab:red"}
FLOOR = 1e-17   # where an error of exactly 0 is drawn (log axes)


def parameter(doc):
    """(label, value, theta, degree) of the run's solver setting: c for cutoff, TOL (or θ and the
    degree when both were given) for tree."""
    br = doc["config"].get("br") or {}
    solver = solver_of(doc)
    if solver == "cutoff":
        c = float(br["cutoff"]["radius"])
        return f"c={c:g}", c, None, None
    if solver == "tree":
        t = br["tree"]
        theta, degree = float(t["theta"]), int(t["degree"])
        tol = t.get("tolerance")
        if tol is not None:
            return f"TOL={float(tol):g}", float(tol), theta, degree
        return f"θ={theta:g} p={degree}", theta, theta, degree
    return "exact", None, None, None


def panel_of(run):
    """A panel: the case (or initial condition and boundary), the mesh and the rank count."""
    c = run.doc["config"]
    case = (c.get("case") or {}).get("name") or f"{c.get('initial_condition')} {c.get('boundary')}"
    nodes = c.get("mesh_nodes") or []
    mesh = "×".join(str(n) for n in nodes)
    return f"{case}, {mesh} nodes, {run.ranks} rank{'s' if run.ranks != 1 else ''}"


def usable(run):
    return "br_check" in run.doc and solver_of(run.doc) is not None and seconds_per_call(run.doc) is not None


def points(runs):
    """{panel: [row]} with one row per series (repetitions by their median), as in the CSV."""
    groups = defaultdict(list)
    for r in runs:
        if usable(r):
            groups[(panel_of(r), r.series)].append(r)
    panels = defaultdict(list)
    for (panel, _), members in groups.items():
        doc = members[0].doc
        label, value, theta, degree = parameter(doc)
        timing = [seconds_per_call(m.doc) for m in members]
        check = [m.doc["br_check"] for m in members]
        panels[panel].append({
            "panel": panel, "solver": solver_of(doc), "setting": label,
            "value": "" if value is None else value,
            "theta": "" if theta is None else theta, "degree": "" if degree is None else degree,
            "series": members[0].label, "runs": len(members),
            "seconds_per_call": median([t[0] for t in timing]),
            "calls_per_step": timing[0][1], "regions": "+".join(timing[0][2]),
            "rms_rel": median([float(c["rms_rel"]) for c in check]),
            "max_rel": median([float(c["max_rel"]) for c in check]),
            "samples": int(check[0]["samples"]),
        })
    return panels


def draw(runs, out_dir):
    panels = points(runs)
    if not panels:
        return []
    names = sorted(panels)
    fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 4.4), squeeze=False)
    rows = []
    for ax, panel in zip(axes[0], names):
        for solver in SOLVERS:
            pts = sorted((p for p in panels[panel] if p["solver"] == solver),
                         key=lambda p: (p["value"] if p["value"] != "" else 0, p["seconds_per_call"]))
            if not pts:
                continue
            x = [p["seconds_per_call"] for p in pts]
            y = [max(p["rms_rel"], FLOOR) for p in pts]
            ax.plot(x, y, marker=MARKERS[solver], color=COLORS[solver], ls="-" if len(pts) > 1 else "none",
                    lw=0.8, label=solver)
            for k, (p, xi, yi) in enumerate(zip(pts, x, y)):
                text = p["setting"] if solver != "exact" else ("exact (error 0)" if p["rms_rel"] == 0 else "exact")
                # labels above and below in turn: neighbours at the same error stay readable
                ax.annotate(text, (xi, yi), textcoords="offset points", xytext=(4, 4 if k % 2 == 0 else -11),
                            fontsize=7, color=COLORS[solver])
            rows += pts
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("seconds per BR call")
        ax.set_title(panel, fontsize=9)
        ax.grid(True, which="major", lw=0.3)
        ax.margins(x=0.25, y=0.2)
    axes[0][0].set_ylabel("BR error (RMS relative, --br-check)")
    axes[0][-1].legend(fontsize=8)
    fig.suptitle("Accuracy and cost of the Birkhoff-Rott solvers", fontsize=10)
    header = ["panel", "solver", "setting", "value", "theta", "degree", "series", "runs", "seconds_per_call",
              "calls_per_step", "regions", "rms_rel", "max_rel", "samples"]
    caption = ("Measured BR error (RMS relative to the exact sum at the --br-check samples, worst BR call of "
               "the run) against the time per BR call (the solver's top-level br.SOLVER.* timer regions, "
               f"median over ranks, ÷ BR calls per step; the check's own time left out). An error of 0 is drawn "
               f"at {FLOOR:g}.")
    return [save(fig, out_dir, "accuracy", "accuracy-cost", "Accuracy and cost of the BR solvers", caption,
                 header, [[p[h] for h in header] for p in rows])]
