"""Step-time histograms: the wall time of every measured step (slowest rank), one figure per
run, the median marked."""
import numpy as np

from ..runs import median
from .common import plt, save, slug


def bin_edges(seconds):
    """At most 20 equal bins over the range of the values (numpy's edges)."""
    return np.histogram_bin_edges(seconds, bins=max(1, min(20, len(seconds))))


def draw(runs, out_dir):
    figures = []
    for r in runs:
        seconds = [float(s) for s in r.doc["steps"]["seconds"]]
        if not seconds:
            continue
        edges = bin_edges(seconds)
        counts, _ = np.histogram(seconds, bins=edges)
        med = median(seconds)
        fig, ax = plt.subplots(figsize=(5.5, 3.6))
        ax.stairs(counts, edges * 1e3, fill=True, alpha=0.7)
        ax.axvline(med * 1e3, color="crimson", lw=1.5, label=f"median {med * 1e3:.3g} ms")
        ax.set_xlabel("ms per step (slowest rank)")
        ax.set_ylabel("steps")
        ax.legend(fontsize=8)
        ax.set_title(f"{r.label} · {r.ranks}r ({len(seconds)} steps)", fontsize=8)
        rows = [(float(edges[i]), float(edges[i + 1]), int(counts[i]), med) for i in range(len(counts))]
        figures.append(save(fig, out_dir, "histogram", "steps-" + slug(r.id), f"Step times: {r.id}",
                            "Wall time of every measured step (slowest rank per step); the red line is the median.",
                            ["bin_low_seconds", "bin_high_seconds", "steps", "median_seconds"], rows))
    return figures
