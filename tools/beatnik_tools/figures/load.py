"""Per-rank load distribution of the cutoff or tree Birkhoff-Rott solver at the steps the run named
with --load-snapshot (results: load_balance.snapshots, in grid-rank order): one panel per quantity,
one bar per rank and snapshot step, the ranks' mean as a line (docs/cutoff.md, docs/tree.md)."""
import numpy as np

from .common import plt, save, slug

# The panels per solver (load_balance.solver; results written before it existed are cutoff runs).
QUANTITIES = {"cutoff": ("particles", "ghosts", "pairs"),
              "tree": ("particles", "let_particles", "direct_pairs", "cluster_terms")}
DESCRIPTION = {"cutoff": "Particles and ghosts (of the step's first Birkhoff-Rott call) and pairs within the "
                         "cutoff of every rank at the snapshot steps.",
               "tree": "Particles and LET particles (of the step's first Birkhoff-Rott call), direct pairs and "
                       "cluster terms of every rank at the snapshot steps."}


def draw(runs, out_dir):
    figures = []
    for r in runs:
        load = r.doc.get("load_balance") or {}
        snaps = load.get("snapshots") or {}
        solver = load.get("solver", "cutoff")
        if not snaps or solver not in QUANTITIES:
            continue
        steps = sorted(snaps, key=int)
        quantities = [q for q in QUANTITIES[solver] if all(q in snaps[s] for s in steps)]
        fig, axes = plt.subplots(1, len(quantities), figsize=(4.2 * len(quantities), 3.8), squeeze=False)
        rows = []
        width = 0.8 / len(steps)
        for ax, q in zip(axes[0], quantities):
            for k, s in enumerate(steps):
                values = [float(v) for v in snaps[s][q]]
                x = np.arange(len(values)) + (k - (len(steps) - 1) / 2) * width
                bars = ax.bar(x, values, width, label=f"step {s}")
                ax.axhline(np.mean(values), color=bars.patches[0].get_facecolor(), lw=0.8, ls="--")
                rows += [(s, q, rank, v) for rank, v in enumerate(values)]
            n = len(snaps[steps[0]][q])
            ax.set_xticks(range(n), [str(i) for i in range(n)] if n <= 32 else None)
            ax.set_xlabel("grid rank")
            ax.set_title(q, fontsize=9)
        axes[0][0].set_ylabel("per rank (dashed: mean)")
        axes[0][-1].legend(fontsize=7)
        fig.suptitle(f"Load distribution, {solver} Birkhoff-Rott: {r.label} · {r.ranks}r", fontsize=9)
        figures.append(save(fig, out_dir, "load", "load-" + slug(r.id), f"Per-rank load: {r.id}",
                            DESCRIPTION[solver],
                            ["step", "quantity", "grid_rank", "value"], rows))
    return figures
