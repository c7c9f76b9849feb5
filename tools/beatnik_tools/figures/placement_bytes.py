"""Bytes per step by where they go (self, on-node, off-node), per communication pattern, for
every run, labelled by its placement (decomposition.placement, docs/placement.md)."""
from .common import finish_bars, plt, save, short

PARTS = ("self", "on_node", "off_node")
HATCH = {"self": "", "on_node": "//", "off_node": "xx"}


def placement_name(doc):
    pl = doc["decomposition"].get("placement") or {}
    name = pl.get("spec") or pl.get("policy") or "linear"
    return f"{name}, {doc['decomposition'].get('node_count', 1)} node(s)"


def draw(runs, out_dir):
    runs = [r for r in runs if r.doc.get("communication")]
    if not runs:
        return []
    runs = sorted(runs, key=lambda r: (placement_name(r.doc), r.label, r.ranks, r.id))
    patterns = list(dict.fromkeys(p for r in runs for p in r.doc["communication"]))
    colors = dict(zip(patterns, plt.cm.tab10.colors * 3))
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(runs) + 4), 4.5))
    rows, labelled = [], set()
    width = 0.8 / len(patterns)
    for x, r in enumerate(runs):
        for k, pattern in enumerate(patterns):
            split = r.doc["communication"].get(pattern, {}).get("bytes_per_step_total")
            if split is None:
                continue
            bottom = 0.0
            for part in PARTS:
                v = float(split.get(part, 0.0))
                ax.bar(x + (k - (len(patterns) - 1) / 2) * width, v, width, bottom=bottom, color=colors[pattern],
                       hatch=HATCH[part], edgecolor="black", lw=0.3,
                       label=None if (pattern, part) in labelled else f"{pattern} {part}")
                labelled.add((pattern, part))
                bottom += v
            rows.append((r.id, placement_name(r.doc), r.ranks, pattern, *[float(split.get(p, 0.0)) for p in PARTS]))
    finish_bars(ax, [f"{placement_name(r.doc)} · {r.ranks}r · {short(r.label)}" for r in runs],
                "bytes per step (all ranks)", "Communication per step: self / on-node / off-node, per placement")
    return [save(fig, out_dir, "bytes", "bytes-per-placement", "On-node and off-node bytes per placement",
                 "Bytes per step summed over ranks, per pattern, split into self (a rank to itself), on-node "
                 "and off-node; each bar group one run, labelled by its placement and node count.",
                 ["run", "placement", "ranks", "pattern", "self_bytes_per_step", "on_node_bytes_per_step",
                  "off_node_bytes_per_step"], rows)]
