"""Writing one figure: PNG and SVG from matplotlib, and the numbers drawn as CSV beside them."""
import csv
import hashlib
import os
import re
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams["svg.hashsalt"] = "beatnik"   # the same SVG for the same numbers


@dataclass
class Figure:
    kind: str
    name: str
    title: str
    caption: str
    png: str
    svg: str
    csv: str


def slug(text, limit=60):
    s = re.sub(r"[^A-Za-z0-9_.=+-]+", "-", text).strip("-.") or "x"
    if len(s) > limit:
        s = s[:limit - 9].rstrip("-.") + "-" + hashlib.sha1(text.encode()).hexdigest()[:8]
    return s


def short(text, limit=40):
    """A tick label: long series names cut in the middle."""
    return text if len(text) <= limit else text[:limit // 2 - 1] + "…" + text[-(limit // 2 - 1):]


def finish_bars(ax, names, ylabel, title):
    """Tick labels under bar groups, the y label, the legend beside the plot, the title."""
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title(title)


def number(x):
    """A CSV cell: integers as integers, floats to full precision."""
    if isinstance(x, float):
        return repr(x)
    return str(x)


def save(fig, out_dir, kind, name, title, caption, header, rows):
    base = os.path.join(out_dir, name)
    fig.savefig(base + ".png", dpi=100, bbox_inches="tight")
    fig.savefig(base + ".svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    with open(base + ".csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        for row in rows:
            w.writerow([number(x) for x in row])
    return Figure(kind, name, title, caption, base + ".png", base + ".svg", base + ".csv")
