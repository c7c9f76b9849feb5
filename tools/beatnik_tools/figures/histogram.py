"""Step-time histograms: the wall time of every measured step (slowest rank), one figure per
series with a panel per rank count (the steps of its repetitions together), the median marked."""
from collections import defaultdict

import numpy as np

from ..runs import median
from .common import plt, save, slug


def bin_edges(seconds):
    """At most 20 equal bins over the range of the values (numpy's edges)."""
    return np.histogram_bin_edges(seconds, bins=max(1, min(20, len(seconds))))


def draw(runs, out_dir):
    series = defaultdict(lambda: defaultdict(list))
    for r in runs:
        series[r.series][r.ranks].append(r)
    figures = []
    for members in series.values():
        counts_of = sorted(members)
        label = members[counts_of[0]][0].label
        fig, axes = plt.subplots(1, len(counts_of), figsize=(3.6 * len(counts_of) + 1, 3.4), squeeze=False)
        rows = []
        for ax, p in zip(axes[0], counts_of):
            seconds = [float(s) for r in members[p] for s in r.doc["steps"]["seconds"]]
            ax.set_title(f"{p} rank{'s' if p > 1 else ''} ({len(seconds)} steps)", fontsize=8)
            ax.set_xlabel("ms per step (slowest rank)")
            if not seconds:
                continue
            edges = bin_edges(seconds)
            counts, _ = np.histogram(seconds, bins=edges)
            med = median(seconds)
            ax.stairs(counts, edges * 1e3, fill=True, alpha=0.7)
            ax.axvline(med * 1e3, color="crimson", lw=1.5, label=f"median {med * 1e3:.3g} ms")
            ax.legend(fontsize=7)
            rows += [(label, p, float(edges[i]), float(edges[i + 1]), int(counts[i]), med) for i in range(len(counts))]
        axes[0][0].set_ylabel("steps")
        fig.suptitle(f"Step times: {label}", fontsize=9)
        figures.append(save(fig, out_dir, "histogram", "steps-" + slug(label), f"Step times: {label}",
                            "Wall time of every measured step (slowest rank per step; repetitions together), "
                            "one panel per rank count; the red line is the median.",
                            ["series", "ranks", "bin_low_seconds", "bin_high_seconds", "steps", "median_seconds"],
                            rows))
    return figures
