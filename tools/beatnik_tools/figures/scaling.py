"""Weak or strong scaling of each series (runs that differ only in their rank count): time per
step and parallel efficiency against ranks, for the whole step and each top-level timer region.
Repetitions count by their median. Strong: E = T(p0)·p0 / (T(p)·p); weak: E = T(p0) / T(p)."""
from collections import defaultdict
from math import prod

from ..runs import median, top_level_regions
from .common import plt, save, slug


def scaling_kind(runs):
    """'weak' when the global mesh grows with the rank count, else 'strong'."""
    sizes = {prod(r.doc["config"]["mesh_nodes"]) for r in runs}
    return "weak" if len(sizes) > 1 else "strong"


def series_table(runs):
    """{region: [(ranks, seconds per step, efficiency, repetitions)]} of one series."""
    by_ranks = defaultdict(list)
    for r in runs:
        by_ranks[r.ranks].append(r)
    counts = sorted(by_ranks)
    regions = ["step"] + top_level_regions(runs[0].doc["timers"]["regions"])
    kind = scaling_kind(runs)
    table = {}
    for region in regions:
        points = []
        for p in counts:
            values = [v for v in (r.region(region) for r in by_ranks[p]) if v is not None]
            if values:
                points.append((p, median(values), len(values)))
        if len(points) < 2:
            continue
        p0, t0, _ = points[0]
        rows = []
        for p, t, n in points:
            if t <= 0:
                eff = float("nan")
            else:
                eff = t0 * p0 / (t * p) if kind == "strong" else t0 / t
            rows.append((p, t, eff, n))
        table[region] = rows
    return kind, table


def draw(runs, out_dir):
    series = defaultdict(list)
    for r in runs:
        series[r.series].append(r)
    figures = []
    for key, members in series.items():
        if len({r.ranks for r in members}) < 2:
            continue
        kind, table = series_table(members)
        label = members[0].label
        fig, (ax_t, ax_e) = plt.subplots(1, 2, figsize=(11, 4.2))
        base_step = table["step"][0][1] if "step" in table else 0.0
        for region, rows in table.items():
            style = dict(lw=2.5, color="black") if region == "step" else dict(lw=1.2)
            line, = ax_t.plot([r[0] for r in rows], [r[1] for r in rows], marker="o", label=region, **style)
            # Efficiency of the regions that matter (>= 5 % of the step at the smallest rank count):
            # a tiny region's ratio is noise and would set the scale.
            if region == "step" or rows[0][1] >= 0.05 * base_step:
                ax_e.plot([r[0] for r in rows], [r[2] for r in rows], marker="o", color=line.get_color(),
                          label=region, **{k: v for k, v in style.items() if k != "color"})
        counts = sorted({r.ranks for r in members})
        for ax in (ax_t, ax_e):
            ax.set_xscale("log", base=2)
            ax.set_xticks(counts, [str(c) for c in counts])
            ax.set_xlabel("ranks")
            ax.grid(alpha=0.3)
        ax_t.set_yscale("log")
        ax_t.set_ylabel("seconds per step (median over ranks)")
        ax_e.set_ylabel(f"{kind}-scaling parallel efficiency")
        ax_e.axhline(1.0, color="grey", lw=0.8, ls="--")
        shown = [e for line in ax_e.get_lines() for e in line.get_ydata() if e == e]
        ax_e.set_ylim(0, max(1.2, min(2.0, 1.1 * max(shown, default=1.0))))   # capped at 2: noise above
        ax_t.legend(fontsize=7, loc="center left", bbox_to_anchor=(2.28, 0.5))
        ax_e.set_title("regions with >= 5 % of the step (axis capped at 2)", fontsize=8)
        fig.suptitle(f"{kind} scaling: {label}", fontsize=10)
        rows = [(label, kind, region, p, t, e, n) for region, pts in table.items() for (p, t, e, n) in pts]
        name = "scaling-" + slug(label)
        figures.append(save(fig, out_dir, "scaling", name, f"{kind.capitalize()} scaling: {label}",
                            f"Time per step and {kind}-scaling efficiency against ranks, per timer region "
                            "(median over ranks; repetitions by their median; efficiency drawn for the regions "
                            "with at least 5 % of the step, the CSV has all).",
                            ["series", "kind", "region", "ranks", "seconds_per_step", "efficiency", "repetitions"],
                            rows))
    return figures
