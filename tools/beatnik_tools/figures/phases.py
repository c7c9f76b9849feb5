"""Phase breakdown: where a step's time goes, one stacked bar per series and rank count (the
top-level timer regions, median over ranks and repetitions; `other` is the rest of `step`)."""
from collections import defaultdict

from ..runs import median, top_level_regions
from .common import finish_bars, plt, save, short


def breakdown(members):
    """[(region, seconds per step)] of a group of repetitions, `other` last."""
    regions = top_level_regions(members[0].doc["timers"]["regions"])
    parts = []
    for region in regions:
        values = [v for v in (r.region(region) for r in members) if v is not None]
        if values:
            parts.append((region, median(values)))
    step = median([r.region("step") for r in members])
    parts.append(("other", max(0.0, step - sum(v for _, v in parts))))
    return step, parts


def draw(runs, out_dir):
    groups = defaultdict(list)
    for r in runs:
        groups[(r.series, r.ranks)].append(r)
    if not groups:
        return []
    keys = sorted(groups, key=lambda k: (groups[k][0].label, k[1]))
    bars, rows = [], []
    for key in keys:
        members = groups[key]
        step, parts = breakdown(members)
        name = f"{short(members[0].label)} · {key[1]}r"
        bars.append((name, parts))
        rows += [(members[0].label, key[1], region, v, step) for region, v in parts]
    regions = list(dict.fromkeys(region for _, parts in bars for region, _ in parts))
    colors = dict(zip(regions, plt.cm.tab20.colors * 3))
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(bars) + 4), 4.5))
    labelled = set()
    for x, (name, parts) in enumerate(bars):
        bottom = 0.0
        for region, v in parts:
            ax.bar(x, v * 1e3, bottom=bottom * 1e3, color=colors[region],
                   label=None if region in labelled else region)
            labelled.add(region)
            bottom += v
    finish_bars(ax, [n for n, _ in bars], "ms per step (median over ranks)", "Phase breakdown of a step")
    return [save(fig, out_dir, "phases", "phases", "Phase breakdown",
                 "Each bar one series at one rank count: the top-level timer regions of a step (median over "
                 "ranks and repetitions) and `other`, the rest of the timer region step.",
                 ["series", "ranks", "region", "seconds_per_step", "step_seconds"], rows)]
