"""Fig. 6, load balance (``results/plots/workload.{png,pdf}``): each worker's busy time
over the run's mean, as min-quartile-max boxes, or each value as a dot where a run has
fewer than :data:`MIN_BOX` workers (the quartiles of two values say nothing).  A sharded
run's workers are those of all its shards, and the tick label says how many shards.

Top: cuMBE's workers (a warp, as the instrumented rows' ``stats.worker`` says) with
(variant cuMBE) and without (noWS) work stealing.  Bottom: ParMBE's processes, of the
run with the most processes that has per-worker data.  The axis is logarithmic when
the values span a decade or more (without work stealing a few warps do 10-100x the
mean, which on a linear axis flattens every other box).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mbebench import paper
from mbebench.report import figure
from mbebench.report import select as sel

NO_WS = paper.NO_WORK_STEALING
NO_PARMBE_TEXT = "no ParMBE runs with per-worker busy times"
WS_COLORS = {sel.REF_VARIANT: "#1f77b4", NO_WS: "#ff7f0e"}  # the paper's blue / orange
YLABEL = "busy time /\nrun's mean busy time"


def busy(row: Mapping | None) -> np.ndarray | None:
    """Per-worker busy seconds normalised to their mean, or None if unusable."""
    if row is None:
        return None
    arr = np.asarray((row.get("stats") or {}).get("worker_busy_s") or [], dtype=float)
    if arr.size == 0 or not np.all(np.isfinite(arr)) or arr.mean() <= 0:
        return None
    return arr / arr.mean()


def worker_name(rows: Sequence[Mapping]) -> str:
    """What one worker of the drawn rows is (``stats.worker``: "warp" for cuMBE), else
    "worker"."""
    names = {(r.get("stats") or {}).get("worker") for r in rows}
    names.discard(None)
    return names.pop() if len(names) == 1 else "worker"


def _count_text(ns: Sequence[int], name: str) -> str:
    lo, hi = min(ns), max(ns)
    if lo == hi:
        return f"{lo:,} {name}" + ("" if lo == 1 else "s")
    return f"{lo:,}–{hi:,} {name}s"


MIN_BOX = 8  # fewer values than this are drawn one by one: their quartiles say nothing


def boxes(ax, data: list[np.ndarray], positions: list[float], color: str) -> list[dict]:
    """Draw min/quartiles/median/max boxes (whis=(0, 100)), or each value as a dot where a
    run has fewer than :data:`MIN_BOX` workers; return what was drawn (read back)."""
    big = [i for i, d in enumerate(data) if len(d) >= MIN_BOX]
    drawn: list[dict] = [{} for _ in data]
    if big:
        art = ax.boxplot(
            [data[i] for i in big], positions=[positions[i] for i in big], widths=0.34,
            whis=(0, 100), showfliers=False, patch_artist=True, manage_ticks=False,
            boxprops={"facecolor": color, "alpha": 0.55, "edgecolor": color},
            medianprops={"color": "black", "linewidth": 1.2},
            whiskerprops={"color": color}, capprops={"color": color},
        )
        for j, i in enumerate(big):
            box_y = art["boxes"][j].get_path().vertices[:, 1]
            caps = sorted(float(art["caps"][2 * j + k].get_ydata()[0]) for k in (0, 1))
            drawn[i] = {"kind": "box", "min": caps[0], "q1": float(box_y.min()),
                        "median": float(art["medians"][j].get_ydata()[0]),
                        "q3": float(box_y.max()), "max": caps[1], "n": len(data[i])}
    for i, d in enumerate(data):
        if len(d) >= MIN_BOX:
            continue
        # side by side across a box's width, so that equal values stay countable
        xs = positions[i] + (np.linspace(-0.1, 0.1, len(d)) if len(d) > 1 else np.zeros(1))
        (dots,) = ax.plot(xs, d, ls="none", marker="o", ms=5, color=color, mec="black",
                          mew=0.5)
        ys = [float(y) for y in dots.get_ydata()]
        drawn[i] = {"kind": "points", "values": ys, "min": min(ys), "max": max(ys),
                    "n": len(ys)}
    return drawn


def _shards_text(n: int) -> str:
    return f"{n} shards" if n > 1 else ""


def _how_drawn(values: list[np.ndarray]) -> str:
    """The title's key: boxes, dots or both, as drawn."""
    big = any(len(v) >= MIN_BOX for v in values)
    small = any(len(v) < MIN_BOX for v in values)
    return "; ".join([*(["box: quartiles, whiskers: min/max"] if big else []),
                      *([(f"fewer than {MIN_BOX} values: " if big else "")
                         + "each value a dot"] if small else [])])


def _scale(ax, values: list[np.ndarray], legend_room: bool) -> str:
    """Log axis when the drawn values span a decade, else linear from 0; room on top
    for the legend.  A dot at zero (a process that found no work) has no place on a log
    axis, and a reader must see it: linear then."""
    allv = np.concatenate(values)
    zero_dot = any(len(v) < MIN_BOX and (v <= 0).any() for v in values)
    if figure.spans_decades(allv) and not zero_dot:
        figure.log_axis(ax)
        lo, hi = allv[allv > 0].min(), allv.max()
        ax.set_ylim(lo / 1.6, hi * (8.0 if legend_room else 1.6))
        return "log"
    top = max(1.0, float(allv.max())) * (1.3 if legend_room else 1.08)
    dots = any(len(v) < MIN_BOX for v in values)
    ax.set_ylim(-0.04 * top if dots else 0.0, top)  # a dot at zero drawn whole
    return "linear"


def _gpu_data(rows, order, result):
    gpu_ds, data, first, used = [], {sel.REF_VARIANT: {}, NO_WS: {}}, {}, []
    for ds in order:
        got, why = {}, []
        for v in (sel.REF_VARIANT, NO_WS):
            good, first[ds, v] = sel.pick(sel.instrumented(rows, ds, v), busy)
            if good is not None:
                got[v] = busy(good)
                used.append(good)
            else:
                why.append(figure.why_missing(first[ds, v], f"{sel.REF_ENGINE} {v} instrumented"))
        if got:
            gpu_ds.append(ds)
            for v, arr in got.items():
                data[v][ds] = arr
            if why:  # drawn with one of the two series
                result["notes"].append(f"{ds}: only one series ({'; '.join(why)})")
        else:
            result["left_out"]["gpu"][ds] = "; ".join(why)
    return gpu_ds, data, first, used


def _parmbe_data(rows, order, result):
    par_ds, data, procs = [], {}, {}
    for ds in order:
        cands = sorted(sel.worker_rows(rows, ds), key=lambda r: -r["params"][sel.WORKER_PARAM])
        chosen = next(((r["params"][sel.WORKER_PARAM], busy(r), r) for r in cands
                       if r.get("status") == "ok" and busy(r) is not None), None)
        if chosen is None:
            result["left_out"]["parmbe"][ds] = (
                f"no {sel.WORKER_ENGINE} rows" if not cands
                else "; ".join(figure.why_missing(r, sel.WORKER_ENGINE) for r in cands))
            continue
        par_ds.append(ds)
        procs[ds], data[ds], row = chosen
        result.setdefault("shards", {})[ds] = sel.shard_count(row)
    return par_ds, data, procs


def _draw_gpu(ax, gpu_ds, data, first, used) -> dict[str, Any]:
    info: dict[str, Any] = {"xlabels": gpu_ds, "ylabel": YLABEL, "series": {}}
    name = worker_name(used)
    info["worker"] = name
    drawn_values = []
    for off, v, label in ((-0.2, sel.REF_VARIANT, f"{sel.REF_VARIANT} (work stealing)"),
                          (0.2, NO_WS, f"{NO_WS} (no work stealing)")):
        ds_with = [ds for ds in gpu_ds if ds in data[v]]
        if not ds_with:
            continue
        values = [data[v][ds] for ds in ds_with]
        drawn_values += values
        drawn = boxes(ax, values, [gpu_ds.index(ds) + off for ds in ds_with], WS_COLORS[v])
        info["series"][label] = dict(zip(ds_with, drawn))
        ax.plot([], [], color=WS_COLORS[v], lw=8, alpha=0.55, label=label)
    for i, ds in enumerate(gpu_ds):  # a missing series keeps its slot, saying why
        for off, v in ((-0.2, sel.REF_VARIANT), (0.2, NO_WS)):
            if ds not in data[v]:
                ax.text(i + off, 0.03, figure.slot_text(first[ds, v]), rotation=90,
                        ha="center", va="bottom", fontsize=7, color="0.35",
                        transform=ax.get_xaxis_transform())
    shards = {ds: max((sel.shard_count(r) for r in used if r["dataset"] == ds), default=1)
              for ds in gpu_ds}
    ax.set_xticks(range(len(gpu_ds)), [f"{ds} ({_shards_text(shards[ds])})" if shards[ds] > 1
                                       else ds for ds in gpu_ds])
    ax.set_xlim(-0.6, len(gpu_ds) - 0.4)
    ax.axhline(1.0, color="0.5", lw=0.8, ls="--")
    ax.set_ylabel(YLABEL)
    info["yscale"] = _scale(ax, drawn_values, legend_room=True)
    ax.legend(loc="upper left", fontsize=8, frameon=False, ncol=2)
    figure.rotate(ax)
    info["simulated"] = any(r.get("simulated") for r in used)
    count = _count_text([len(busy(r)) for r in used], name)
    ax.set_title(f"{paper.REFERENCE_LABEL}: busy time per {name} ({count} per run)\n"
                 f"{_how_drawn(drawn_values)}"
                 + (f"\n{figure.SIMULATOR_TEXT}" if info["simulated"] else ""), fontsize=10)
    return info


def plot(rows: Sequence[Mapping], datasets: Sequence[str], out_png, out_pdf,
         unavailable: Mapping[str, str] | None = None) -> dict:
    """Draw Fig. 6; return what was drawn (series read back from the artists)."""
    rows = list(rows)
    order = sel.ordered_datasets(rows, datasets)
    result: dict[str, Any] = {"figure": "workload", "left_out": {"gpu": {}, "parmbe": {}},
                              "notes": []}
    gpu_ds, gpu_data, gpu_first, used = _gpu_data(rows, order, result)
    par_ds, par_data, par_procs = _parmbe_data(rows, order, result)

    fig = figure.new(max(7.0, 0.75 * max(len(gpu_ds), len(par_ds), 1) + 3.0), 7.5)
    ax_gpu, ax_par = fig.subplots(2, 1)
    if gpu_ds:
        gpu_info = _draw_gpu(ax_gpu, gpu_ds, gpu_data, gpu_first, used)
    else:
        text = figure.no_gpu_text(rows)
        figure.empty_note(ax_gpu, text)
        result["notes"].append(text)
        gpu_info = {"xlabels": [], "ylabel": YLABEL, "series": {}, "simulated": False}
        ax_gpu.set_title(f"{paper.REFERENCE_LABEL}: busy time per warp", fontsize=10)

    par_info: dict[str, Any] = {"xlabels": par_ds, "ylabel": YLABEL, "series": {},
                                "processes": par_procs}
    par_values = [par_data[ds] for ds in par_ds]
    if par_ds:
        values = par_values
        par_info["series"]["ParMBE"] = dict(zip(par_ds, boxes(
            ax_par, values, list(range(len(par_ds))), "#2ca02c")))
        shards = result.get("shards") or {}
        ax_par.set_xticks(range(len(par_ds)), [
            f"{ds} (p={par_procs[ds]}" + (f", {_shards_text(shards[ds])}" if shards.get(ds, 1) > 1
                                          else "") + ")" for ds in par_ds])
        ax_par.set_xlim(-0.6, len(par_ds) - 0.4)
        ax_par.axhline(1.0, color="0.5", lw=0.8, ls="--")
        par_info["yscale"] = _scale(ax_par, values, legend_room=False)
        ax_par.set_ylabel(YLABEL)
        figure.rotate(ax_par)
    else:
        figure.empty_note(ax_par, NO_PARMBE_TEXT)
        result["notes"].append(NO_PARMBE_TEXT)
    ax_par.set_title("ParMBE: busy time per process (the run with the most processes)"
                     + (f"\n{_how_drawn(par_values)}" if par_values else ""), fontsize=10)

    gpu_info["xticklabels"] = [t.get_text() for t in ax_gpu.get_xticklabels()]
    par_info["xticklabels"] = [t.get_text() for t in ax_par.get_xticklabels()]
    gpu_info["title"] = ax_gpu.get_title()
    result["gpu"], result["parmbe"] = gpu_info, par_info
    return figure.finish(fig, result, out_png, out_pdf, unavailable)
