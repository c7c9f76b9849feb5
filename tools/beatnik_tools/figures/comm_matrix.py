"""The rank-pair communication matrix, when a results file has one: a dry run's
dry_run.matrix.entries ([source, destination, bytes per step], all patterns), or
communication.PATTERN.rank_pairs, a sparse list of [from rank, to rank, bytes] summed over
patterns (docs/sweep-and-report.md)."""
import numpy as np

from .common import plt, save, slug


def pair_bytes(doc):
    """{(from, to): bytes} over every pattern that lists rank pairs, or {} when none does."""
    total = {}
    for src, dst, nbytes in ((doc.get("dry_run") or {}).get("matrix") or {}).get("entries") or []:
        total[(int(src), int(dst))] = total.get((int(src), int(dst)), 0.0) + float(nbytes)
    for pattern, data in (doc.get("communication") or {}).items():
        for entry in (data.get("rank_pairs") or []) if isinstance(data, dict) else []:
            src, dst, nbytes = int(entry[0]), int(entry[1]), float(entry[2])
            total[(src, dst)] = total.get((src, dst), 0.0) + nbytes
    return total


def draw(runs, out_dir):
    figures = []
    for r in runs:
        pairs = pair_bytes(r.doc)
        if not pairs:
            continue
        n = max(r.ranks, 1 + max(max(s, d) for s, d in pairs))
        m = np.zeros((n, n))
        for (s, d), v in pairs.items():
            m[s, d] = v
        fig, ax = plt.subplots(figsize=(4.5 + 0.05 * n, 4 + 0.05 * n))
        shown = np.where(m > 0, m, np.nan)
        im = ax.imshow(shown, cmap="magma_r", interpolation="nearest")
        ax.set_xlabel("to rank")
        ax.set_ylabel("from rank")
        fig.colorbar(im, ax=ax, label="bytes")
        ax.set_title(f"Rank-pair bytes: {r.label} · {r.ranks}r", fontsize=8)
        rows = [(s, d, v) for (s, d), v in sorted(pairs.items())]
        figures.append(save(fig, out_dir, "matrix", "pairs-" + slug(r.id), f"Rank-pair communication: {r.id}",
                            "Bytes from each rank to each other rank, all patterns that list their rank pairs.",
                            ["from_rank", "to_rank", "bytes"], rows))
    return figures
