"""BR call time against problem size (issue 16: does the call grow no faster than N log N?): for
runs that differ only in their mesh, the seconds per BR call (br_timing, from the timer regions)
against N = surface nodes, log-log, one series per group with at least two sizes, and through each
series' smallest N a dashed N log N line (and, lighter, N and N² while there are few series).

A group: the same order, solver and setting (c, TOL, or θ and degree), every other config.br
option, case (or initial condition and boundary), rank count and execution space. Repetitions
(runs of one group and size) count by their median."""
import json
import math
from collections import defaultdict

from matplotlib.lines import Line2D

from ..runs import median
from .accuracy_cost import MARKERS, parameter
from .br_timing import seconds_per_call, solver_of
from .common import plt, save

FEW = 3   # up to this many series the N and N² lines are drawn too; beyond, they would clutter


def nodes(doc):
    nx, ny = (int(n) for n in doc["config"]["mesh_nodes"])
    return nx * ny, f"{nx}²" if nx == ny else f"{nx}×{ny}"


def group_of(run):
    """(key, label) of the run's group: everything but the mesh that shapes a BR call."""
    c = run.doc["config"]
    solver = solver_of(run.doc)
    setting = parameter(run.doc)[0]
    case = (c.get("case") or {}).get("name") or f"{c.get('initial_condition')} {c.get('boundary')}"
    label = (f"{solver if solver == 'exact' else f'{solver} {setting}'}, {c.get('order')} order, {case}, "
             f"{run.ranks} rank{'s' if run.ranks != 1 else ''}, {c.get('exec')}")
    # every solver option, so that runs with another leaf size or traversal are not mixed in
    key = (label, json.dumps(c.get("br") or {}, sort_keys=True))
    return key, label


def nlogn(n):
    return n * math.log(n)


def series(runs):
    """[(label, solver, [row])]: one per group with >= 2 sizes, rows by N as in the CSV."""
    groups = defaultdict(lambda: defaultdict(list))
    labels = {}
    for r in runs:
        if solver_of(r.doc) is None or r.doc["config"].get("order") not in ("medium", "high"):
            continue
        timing = seconds_per_call(r.doc)
        if timing is None or timing[0] <= 0:   # e.g. a CUDA graph's regions: counts, no time
            continue
        key, label = group_of(r)
        labels[key] = (label, solver_of(r.doc))
        groups[key][nodes(r.doc)].append(timing)
    out, seen = [], defaultdict(int)
    for key in sorted(groups, key=lambda k: labels[k]):
        sizes = groups[key]
        if len(sizes) < 2:
            continue
        base, solver = labels[key]
        seen[base] += 1   # the same label, other solver options: numbered
        label = base + (f" ({seen[base]})" if seen[base] > 1 else "")
        rows = []
        for (n, mesh), timings in sorted(sizes.items()):
            t = median([x[0] for x in timings])
            row = {"series": label, "mesh": mesh, "N": n, "seconds_per_call": t, "repetitions": len(timings),
                   "calls_per_step": timings[0][1], "ratio_to_previous": "", "nlogn_ratio_to_previous": "",
                   "measured_over_nlogn_from_smallest": ""}
            if rows:
                first, prev = rows[0], rows[-1]
                row["ratio_to_previous"] = t / prev["seconds_per_call"]
                row["nlogn_ratio_to_previous"] = nlogn(n) / nlogn(prev["N"])
                row["measured_over_nlogn_from_smallest"] = ((t / first["seconds_per_call"]) /
                                                            (nlogn(n) / nlogn(first["N"])))
            rows.append(row)
        out.append((label, solver, rows))
    return out


def draw(runs, out_dir):
    drawn = series(runs)
    if not drawn:
        return []
    fig, ax = plt.subplots(figsize=(7.5, 5.2))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    ticks = {}
    for k, (label, solver, rows) in enumerate(drawn):
        color = colors[k % len(colors)]
        n = [r["N"] for r in rows]
        t = [r["seconds_per_call"] for r in rows]
        ax.plot(n, t, marker=MARKERS[solver], color=color, lw=1.2, label=label)
        n0, t0 = n[0], t[0]
        ax.plot(n, [t0 * nlogn(x) / nlogn(n0) for x in n], color=color, ls="--", lw=1)
        if len(drawn) <= FEW:
            ax.plot(n, [t0 * x / n0 for x in n], color=color, ls=":", lw=0.8, alpha=0.45)
            ax.plot(n, [t0 * (x / n0) ** 2 for x in n], color=color, ls="-.", lw=0.8, alpha=0.45)
        ticks.update({r["N"]: r["mesh"] for r in rows})
    ax.set_xscale("log")
    ax.set_yscale("log")
    # the sizes themselves as ticks (n², as the docs name them), not powers of ten
    ax.set_xticks(sorted(ticks), [f"{ticks[x]}\n{x:,}" for x in sorted(ticks)], fontsize=7)
    ax.minorticks_off()
    ax.set_xlabel("surface nodes N (nx·ny)")
    ax.set_ylabel("seconds per BR call")
    ax.grid(True, which="major", lw=0.3)
    refs = [Line2D([], [], color="grey", ls="--", lw=1, label="N log N from the smallest N")]
    if len(drawn) <= FEW:
        refs += [Line2D([], [], color="grey", ls=":", lw=0.8, alpha=0.6, label="N"),
                 Line2D([], [], color="grey", ls="-.", lw=0.8, alpha=0.6, label="N²")]
    handles = ax.get_legend_handles_labels()[0] + refs
    ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1)
    ax.set_title("BR call time against problem size", fontsize=10)
    header = ["series", "mesh", "N", "seconds_per_call", "repetitions", "calls_per_step", "ratio_to_previous",
              "nlogn_ratio_to_previous", "measured_over_nlogn_from_smallest"]
    rows = [r for _, _, rs in drawn for r in rs]
    caption = ("Seconds per BR call (the solver's top-level br.SOLVER.* timer regions, median over ranks, ÷ the "
               "BR calls per step the timers counted) against the surface nodes N, for runs that differ only in "
               "their mesh; dashed: N log N through each series' smallest N"
               + (" (dotted N, dash-dotted N², lighter)" if len(drawn) <= FEW else "") +
               ". The CSV has each step's growth against N log N's and measured ÷ N log N growth from the smallest N.")
    return [save(fig, out_dir, "size", "size-scaling", "BR call time against problem size", caption,
                 header, [[r[h] for h in header] for r in rows])]
