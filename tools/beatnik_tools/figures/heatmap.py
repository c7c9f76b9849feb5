"""The -H configuration heatmap: for each series that ran more than one reference FFT
configuration, ranks × configuration shaded by the time per step (median of the repetitions)."""
from collections import defaultdict

import numpy as np
from matplotlib.colors import LogNorm

from ..runs import median
from .common import plt, save, slug


def draw(runs, out_dir):
    groups = defaultdict(list)
    for r in runs:
        if r.heffte is not None:
            groups[r.series_no_h].append(r)
    figures = []
    for key, members in groups.items():
        configs = sorted({r.heffte for r in members})
        if len(configs) < 2:
            continue
        counts = sorted({r.ranks for r in members})
        cells = defaultdict(list)
        for r in members:
            cells[(r.ranks, r.heffte)].append(r.region("step"))
        grid = np.full((len(counts), len(configs)), np.nan)
        rows = []
        for i, p in enumerate(counts):
            for j, h in enumerate(configs):
                if cells.get((p, h)):
                    grid[i, j] = median(cells[(p, h)])
                    rows.append((p, h, float(grid[i, j]), len(cells[(p, h)])))
        label = members[0].label_no_h
        fig, ax = plt.subplots(figsize=(1.2 * len(configs) + 3, 0.7 * len(counts) + 2))
        ms = grid * 1e3
        spread = np.nanmax(ms) / np.nanmin(ms) if np.nanmin(ms) > 0 else 1.0
        im = ax.imshow(ms, cmap="viridis_r", aspect="auto", norm=LogNorm() if spread > 10 else None)
        for i in range(len(counts)):
            for j in range(len(configs)):
                if not np.isnan(grid[i, j]):
                    ax.text(j, i, f"{ms[i, j]:.3g}", ha="center", va="center", fontsize=8,
                            color="white" if ms[i, j] > np.nanmedian(ms) else "black")
        ax.set_xticks(range(len(configs)), [str(h) for h in configs])
        ax.set_yticks(range(len(counts)), [str(p) for p in counts])
        ax.set_xlabel("-H configuration")
        ax.set_ylabel("ranks")
        fig.colorbar(im, ax=ax, label="ms per step")
        ax.set_title(f"-H heatmap (ms per step): {label}", fontsize=9)
        figures.append(save(fig, out_dir, "heatmap", "heatmap-" + slug(label), f"-H configuration heatmap: {label}",
                            "Time per step (timer region step, median over ranks and repetitions; numbers in ms) "
                            "for each rank count and reference FFT configuration.",
                            ["ranks", "heffte_configuration", "seconds_per_step", "repetitions"], rows))
    return figures
