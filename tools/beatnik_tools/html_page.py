"""The report's one self-contained HTML page: every figure embedded (PNG as a data: URL) with its
caption and links to its SVG, PNG and CSV, the runs it drew from and those it left out. A small
script marks each image once loaded (data-loaded) and counts them in #render-check."""
import base64
import html
import os
import time

KIND_TITLES = {"scaling": "Scaling", "heatmap": "-H configuration heatmap", "phases": "Phase breakdown",
               "load": "Per-rank load distribution", "histogram": "Step-time histograms",
               "bytes": "On-node / off-node bytes per placement", "matrix": "Rank-pair communication matrix",
               "accuracy": "Accuracy and cost of the Birkhoff-Rott solvers",
               "size": "Birkhoff-Rott call time against problem size"}

STYLE = """body{font-family:sans-serif;margin:2em;max-width:1200px}figure{margin:1.5em 0;border-top:1px solid #ccc;
padding-top:.5em}img{max-width:100%}figcaption{font-size:.9em;color:#333}table{border-collapse:collapse;font-size:.85em}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}"""

SCRIPT = """function beatnikMark(img, ok) { img.dataset.loaded = ok && img.naturalWidth > 0 ? "yes" : "no"; }
window.addEventListener("load", function () {
  var imgs = document.querySelectorAll("img.figure"), n = 0;
  imgs.forEach(function (img) { if (img.complete && img.naturalWidth > 0) { n++; img.dataset.loaded = "yes"; } });
  document.getElementById("render-check").textContent = n + " of " + imgs.length + " figures loaded";
});"""


def write_page(path, figures, runs, left_out, inputs):
    e = html.escape
    out_dir = os.path.dirname(path)
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             "<title>beatnik report</title>", f"<style>{STYLE}</style>", f"<script>{SCRIPT}</script></head><body>",
             "<h1>beatnik report</h1>",
             f"<p>{len(runs)} runs from {e(', '.join(inputs))}; {len(figures)} figures; written "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.</p>",
             '<p id="render-check">figures not loaded yet</p>', "<h2>Figures</h2>", "<ul>"]
    for k, f in enumerate(figures):
        parts.append(f'<li><a href="#fig{k}">{e(f.title)}</a></li>')
    parts.append("</ul>")
    kind = None
    for k, f in enumerate(figures):
        if f.kind != kind:
            kind = f.kind
            parts.append(f"<h2>{e(KIND_TITLES.get(kind, kind))}</h2>")
        with open(f.png, "rb") as fh:
            data = base64.b64encode(fh.read()).decode("ascii")
        links = " · ".join(f'<a href="{e(os.path.relpath(p, out_dir))}">{ext}</a>'
                           for p, ext in ((f.svg, "SVG"), (f.png, "PNG"), (f.csv, "CSV")))
        parts.append(f'<figure id="fig{k}"><img class="figure" alt="{e(f.title)}" '
                     f'onload="beatnikMark(this, true)" onerror="beatnikMark(this, false)" '
                     f'src="data:image/png;base64,{data}">'
                     f"<figcaption><b>{e(f.title)}</b>. {e(f.caption)} ({links})</figcaption></figure>")
    parts += ["<h2>Runs</h2>", "<table><tr><th>run</th><th>series</th><th>ranks</th><th>status</th>"
              "<th>seconds per step</th><th>file</th></tr>"]
    for r in runs + left_out:
        sps = r.doc.get("performance", {}).get("seconds_per_step")
        parts.append(f"<tr><td>{e(r.id)}</td><td>{e(r.label)}</td><td>{r.ranks}</td>"
                     f"<td>{e(r.doc.get('status', ''))}{': ' + e(r.doc.get('message', '')) if r in left_out else ''}"
                     f"</td><td>{'' if sps is None else f'{sps:.4g}'}</td><td>{e(r.path)}</td></tr>")
    parts.append("</table>")
    if left_out:
        parts.append(f"<p>{len(left_out)} run(s) did not complete and are left out of every figure.</p>")
    parts.append("</body></html>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")
