"""Time against graph size (``results/plots/time_vs_size.{png,pdf}``): each timed
configuration's median algorithm seconds against |E| (left) and the number of maximal
bicliques (right), log-log, one line per configuration through the datasets it ran.

Simulated runs are left out (their seconds are the CUDA simulator's, not the GPU's),
and so is a dataset whose engines disagree on the count (no #MB to place it at).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mbebench.report import agreement, figure
from mbebench.report import select as sel

XLABELS = ("edges |E|", "maximal bicliques")
YLABEL = "median algorithm time (s)"
NO_DATA_TEXT = "no timed run with a time (simulated runs are left out)"


def _points(rows, meta, datasets) -> tuple[dict, dict, list[str]]:
    """label -> [(|E|, #MB, seconds, dataset)], configuration order, and what was left out."""
    size = sel.sizes(rows, meta)
    by_ds = sel.by_dataset(rows)
    idx = sel.by_config(rows)
    cfgs = [c for c in sel.configs(rows) if c.timed]
    points: dict[str, list[tuple[float, float | None, float, str]]] = {}
    left_out = []
    for ds in sel.ordered_datasets(rows, datasets):
        g = agreement.groups(by_ds.get(ds, []))
        count = next(iter(g))[0] if agreement.agrees(g) else None
        edges = size.get(ds, {}).get("E")
        for c in cfgs:
            row = idx.get((ds, c.key))
            t = sel.median_s(row)
            if t is None or t <= 0:
                continue
            if sel.simulated(row):
                left_out.append(f"{ds}/{c.label}: simulated")
                continue
            points.setdefault(c.label, []).append((edges, count, t, ds))
    return points, {c.label: i for i, c in enumerate(cfgs)}, left_out


def plot(rows: Sequence[Mapping], datasets: Sequence[str], out_png, out_pdf,
         unavailable: Mapping[str, str] | None = None, meta: Mapping | None = None) -> dict:
    """Draw the figure; return what was drawn (line data read back from the artists)."""
    rows = list(rows)
    points, order, left_out = _points(rows, meta, datasets)
    result: dict[str, Any] = {"figure": "time_vs_size", "series": {}, "left_out": left_out,
                              "notes": []}
    fig = figure.new(11.0, 4.8)
    axes = fig.subplots(1, 2, sharey=True)
    fig.suptitle("Time against graph size, one line per engine configuration", fontsize=10)
    if not points:
        for ax in axes:
            figure.empty_note(ax, NO_DATA_TEXT)
        result["notes"].append(NO_DATA_TEXT)
        return figure.finish(fig, result, out_png, out_pdf, unavailable)

    markers = "osD^v<>pPX*h"
    for k, (ax, xlabel) in enumerate(zip(axes, XLABELS)):
        for label, pts in sorted(points.items(), key=lambda kv: order[kv[0]]):
            xy = sorted((p[k], p[2], p[3]) for p in pts if p[k] is not None and p[k] > 0)
            if not xy:
                continue
            i = order[label]
            (line,) = ax.plot([x for x, _, _ in xy], [y for _, y, _ in xy],
                              marker=markers[i % len(markers)], ms=5, lw=1.2,
                              color=f"C{i % 10}", ls="-" if i < 10 else ":", label=label)
            result["series"].setdefault(label, {})[xlabel] = {
                "x": [float(x) for x in line.get_xdata()],
                "y": [float(y) for y in line.get_ydata()],
                "datasets": [d for _, _, d in xy]}
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.grid(True, which="major", alpha=0.3)
    axes[0].set_ylabel(YLABEL)
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
    if left_out:
        result["notes"].append(f"{len(left_out)} simulated run(s) left out")
        axes[0].text(0.01, 0.01, "simulated runs left out (no GPU time)", fontsize=7,
                     color="0.35", transform=axes[0].transAxes)
    return figure.finish(fig, result, out_png, out_pdf, unavailable)
