"""Time against graph size (``results/plots/time_vs_size.{png,pdf}``): each timed
configuration's median algorithm seconds against |E| (left) and the number of maximal
bicliques (right), log-log, one marker per run: a configuration's colour and shape, no
lines (the datasets are unrelated graphs; a line would suggest a trend that is not there).
A sharded run's time (the slowest shard's) is drawn hollow and a run on several GPUs
half-filled, each with a legend entry, so that neither passes for one machine's time.

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
    """label -> [(|E|, #MB, seconds, dataset, marks)], configuration order, and what was
    left out."""
    size = sel.sizes(rows, meta)
    by_ds = sel.by_dataset(rows)
    idx = sel.by_config(rows)
    cfgs = [c for c in sel.configs(rows) if c.timed]
    points: dict[str, list[tuple[float, float | None, float, str, str]]] = {}
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
            points.setdefault(c.label, []).append((edges, count, t, ds, sel.time_marks(row)))
    return points, {c.label: i for i, c in enumerate(cfgs)}, left_out


MARKERS = "osD^v<>pPX*h"
# how a point's fill says how its time was taken (sel.time_marks): a sharded run hollow
# (whether or not on several GPUs), a run on several GPUs half-filled, else filled
FILLS = {"": "full", sel.MULTI_GPU_MARK: "left", sel.SHARDED_MARK: "none"}
FILL_LEGEND = {"none": "hollow: sharded, the slowest shard's time",
               "left": "half-filled: one run on several GPUs"}


def _fill(marks: str) -> str:
    return FILLS[sel.SHARDED_MARK] if sel.SHARDED_MARK in marks else FILLS[marks]


def plot(rows: Sequence[Mapping], datasets: Sequence[str], out_png, out_pdf,
         unavailable: Mapping[str, str] | None = None, meta: Mapping | None = None) -> dict:
    """Draw the figure; return what was drawn (marker data read back from the artists)."""
    rows = list(rows)
    points, order, left_out = _points(rows, meta, datasets)
    result: dict[str, Any] = {"figure": "time_vs_size", "series": {}, "left_out": left_out,
                              "notes": [], "lines": 0, "fills": {}}
    fig = figure.new(11.0, 4.8)
    axes = fig.subplots(1, 2, sharey=True)
    fig.suptitle("Time against graph size, one marker per run (colour and shape: the engine "
                 "configuration)", fontsize=10)
    if not points:
        for ax in axes:
            figure.empty_note(ax, NO_DATA_TEXT)
        result["notes"].append(NO_DATA_TEXT)
        return figure.finish(fig, result, out_png, out_pdf, unavailable)

    fills_used: set[str] = set()
    for k, (ax, xlabel) in enumerate(zip(axes, XLABELS)):
        for label, pts in sorted(points.items(), key=lambda kv: order[kv[0]]):
            xy = sorted((p[k], p[2], p[3], _fill(p[4])) for p in pts
                        if p[k] is not None and p[k] > 0)
            if not xy:
                continue
            i = order[label]
            style = {"marker": MARKERS[i % len(MARKERS)], "ms": 6, "ls": "none",
                     "color": f"C{i % 10}", "mec": f"C{i % 10}"}
            drawn = {"x": [], "y": [], "datasets": [], "fill": []}
            for fill in ("full", "left", "none"):
                part = [p for p in xy if p[3] == fill]
                if not part:
                    continue
                (line,) = ax.plot([p[0] for p in part], [p[1] for p in part],
                                  fillstyle=fill, mfc="white" if fill == "none" else None,
                                  mfcalt="white", label=label if fill == "full" else None,
                                  **style)
                result["lines"] += line.get_linestyle() not in ("None", "none", "")
                drawn["x"] += [float(x) for x in line.get_xdata()]
                drawn["y"] += [float(y) for y in line.get_ydata()]
                drawn["datasets"] += [p[2] for p in part]
                drawn["fill"] += [line.get_fillstyle()] * len(part)
                if fill != "full":
                    fills_used.add(fill)
            if k == 0 and not any(p[3] == "full" for p in xy):  # its legend entry, filled
                ax.plot([], [], label=label, **style)
            result["series"].setdefault(label, {})[xlabel] = drawn
        ax.set_xscale("log")
        ax.set_yscale("log")
        figure.log_ticks(ax.xaxis, [p[k] for pts in points.values() for p in pts
                                    if p[k] is not None])
        ax.set_xlabel(xlabel)
        ax.grid(True, which="major", alpha=0.3)
    figure.log_ticks(axes[0].yaxis, [p[2] for pts in points.values() for p in pts])
    axes[0].set_ylabel(YLABEL)
    handles, names = axes[0].get_legend_handles_labels()
    for fill in ("none", "left"):
        if fill in fills_used:  # how a point's fill reads, in grey
            (proxy,) = axes[1].plot([], [], marker="o", ms=6, ls="none", color="0.35",
                                    fillstyle=fill, mfc="white" if fill == "none" else None,
                                    mfcalt="white")
            handles.append(proxy)
            names.append(FILL_LEGEND[fill])
            result["fills"][fill] = FILL_LEGEND[fill]
    axes[1].legend(handles, names, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8,
                   frameon=False)
    if left_out:
        result["notes"].append(f"{len(left_out)} simulated run(s) left out")
        axes[0].text(0.01, 0.01, "simulated runs left out (no GPU time)", fontsize=7,
                     color="0.35", transform=axes[0].transAxes)
    return figure.finish(fig, result, out_png, out_pdf, unavailable)
