"""Result rows -> the paper's figures (Fig. 6 workload, Fig. 7 breakdown) and ParMBE scaling.

Every function draws on a fresh :class:`matplotlib.figure.Figure` with an Agg
canvas (no pyplot, no global backend switch), writes PNG and PDF atomically,
and returns a small dict describing what it drew, read back from the artists
(box whiskers, bar heights, line data), so tests can check the data, not pixels.

Rows are chosen by their fields (:mod:`mbebench.paper` says which engine,
variant and parameter each figure shows); the variants drawn are those the
rows hold, in the tables' order (:func:`mbebench.rows.configs`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FormatStrFormatter, NullLocator

from mbebench import paper
from mbebench.atomic import atomic_path
from mbebench.rows import config_key, configs, ordered_datasets, select, status_text
from mbebench.rows import unavailable as unavailable_in

NO_GPU_TEXT = "no instrumented GPU runs (no CUDA device)"
SIMULATOR_TEXT = "CUDA simulator on the CPU: simulation seconds, not GPU times"
NO_PARMBE_TEXT = "no ParMBE runs with per-worker busy times"
NO_SCALING_TEXT = "no successful ParMBE runs"

REF_ENGINE, REF_VARIANT = paper.REFERENCE["engine"], paper.REFERENCE["variant"]
NO_WS = paper.NO_WORK_STEALING
WORKER_ENGINE, WORKER_PARAM = paper.WORKERS["engine"], paper.WORKERS["param"]
PHASES = (
    ("candidate_selection", "candidate selection"),
    ("lprime_construction", "L′ construction"),
    ("maximality_checking", "maximality checking"),
    ("maximal_expansion", "maximal expansion"),
    ("subtree_fetching", "subtree fetching"),
    ("work_stealing", "work stealing"),
    ("other", "other (launch, idle)"),
)
PHASE_COLORS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#bbbbbb")
WS_COLORS = {REF_VARIANT: "#1f77b4", NO_WS: "#ff7f0e"}  # the paper's blue / orange


# --------------------------------------------------------------------------- common


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Figure, out_png, out_pdf) -> list[Path]:
    """savefig to a temporary file beside the target, then os.replace (atomic_path)."""
    paths = []
    for path, fmt, meta in (
        (out_png, "png", {"Software": None}),
        (out_pdf, "pdf", {"CreationDate": None, "Producer": None, "Creator": None}),
    ):
        path = Path(path)
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, dpi=150, metadata=meta)
        paths.append(path)
    return paths


def _in_table_order(rows: Sequence[Mapping], cands: Sequence[Mapping]) -> list[Mapping]:
    """Candidates in the tables' order, so that a sweep's pick does not depend on file order."""
    order = {c.key: i for i, c in enumerate(configs(rows))}
    return sorted(cands, key=lambda r: order[config_key(r)])


def _instr(rows, ds: str, variant: str) -> list[Mapping]:
    """The reference engine's instrumented rows of one dataset and variant."""
    return _in_table_order(
        rows, select(rows, dataset=ds, engine=REF_ENGINE, variant=variant, timed=False))


def _pick(cands: Sequence[Mapping], usable) -> tuple[Mapping | None, Mapping | None]:
    """(the first ok row with usable data, the first row) of the candidates."""
    good = next((r for r in cands if r.get("status") == "ok" and usable(r) is not None), None)
    return good, (cands[0] if cands else None)


def _why_missing(row: Mapping | None, what: str) -> str:
    if row is None:
        return f"no {what} row"
    if row.get("status") != "ok":
        return f"{row.get('label') or what} {status_text(row)}"
    return f"{row.get('label') or what} has no per-worker data"


def _slot_text(row: Mapping | None) -> str:
    """What an empty slot of a figure says: not run, its status, or no data."""
    if row is None:
        return "not run"
    return row.get("status") if row.get("status") != "ok" else "no data"


def _busy(row: Mapping | None) -> np.ndarray | None:
    """Per-worker busy seconds normalised to their mean, or None if unusable."""
    if row is None:
        return None
    busy = (row.get("stats") or {}).get("worker_busy_s") or []
    arr = np.asarray(busy, dtype=float)
    if arr.size == 0 or not np.all(np.isfinite(arr)) or arr.mean() <= 0:
        return None
    return arr / arr.mean()


def _no_gpu_text(rows: Sequence[Mapping]) -> str:
    """The empty-panel text: why there are no instrumented GPU runs to draw (not run at
    all, none instrumented, no CUDA device, or what else happened to them)."""
    if not select(rows, engine=REF_ENGINE):
        return f"{paper.REFERENCE_LABEL} not run (not enabled in the config)"
    instr = select(rows, engine=REF_ENGINE, timed=False)
    if not instr:
        return f"no instrumented {paper.REFERENCE_LABEL} runs (instrument: false in the config)"
    if all(r.get("status") == "unavailable" for r in instr):
        return "no instrumented GPU runs (datasets unavailable)"
    if all(r.get("status") in ("skipped", "unavailable") for r in instr):
        return NO_GPU_TEXT
    return "no usable instrumented GPU runs (" + ", ".join(
        sorted({status_text(r).split(":")[0] for r in instr if r.get("status") != "ok"}
               | ({"no data"} if any(r.get("status") == "ok" for r in instr) else set()))
    ) + ")"


def _empty_note(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=11,
            color="0.3")
    ax.set_xticks([])
    ax.set_yticks([])


def _ticklabels(ax) -> list[str]:
    return [t.get_text() for t in ax.get_xticklabels()]


def _texts(fig: Figure) -> list[str]:
    """Every free text drawn on the axes (notes, 'error' slots, dataset group labels)."""
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def _legend(ax) -> list[str]:
    leg = ax.get_legend()
    return [t.get_text() for t in leg.get_texts()] if leg else []


def _rotate(ax) -> None:
    for lab in ax.get_xticklabels():
        lab.set_rotation(35)
        lab.set_ha("right")
        lab.set_rotation_mode("anchor")


def _unavailable_note(fig: Figure, unavailable: Mapping[str, str] | None,
                      result: dict) -> None:
    """A line per unavailable dataset under the figure, so a figure never hides that a
    dataset is missing from it (room is kept for them below the axes)."""
    if not unavailable:
        return
    lines = ["Unavailable (download or convert failed, not run):"]
    for ds, why in unavailable.items():
        why = " ".join(why.split())
        lines.append(f"  {ds}: {why[:110] + '…' if len(why) > 111 else why}")
    height = fig.get_figheight()
    frac = min(0.4, (len(lines) * 11 + 6) / 72 / height)
    fig.get_layout_engine().set(rect=(0, frac, 1, 1 - frac))
    fig.text(0.01, frac - 0.01, "\n".join(lines), ha="left", va="top", fontsize=7, color="0.3")
    result["unavailable"] = dict(unavailable)
    result["footer"] = "\n".join(lines)


# --------------------------------------------------------------------------- Fig. 6


def _boxes(ax, data: list[np.ndarray], positions: list[float], color: str) -> list[dict]:
    """Draw min/quartiles/median/max boxes (whis=(0, 100)); return the drawn stats."""
    art = ax.boxplot(
        data, positions=positions, widths=0.34, whis=(0, 100), showfliers=False,
        patch_artist=True, manage_ticks=False,
        boxprops={"facecolor": color, "alpha": 0.55, "edgecolor": color},
        medianprops={"color": "black", "linewidth": 1.2},
        whiskerprops={"color": color}, capprops={"color": color},
    )
    drawn = []
    for i in range(len(data)):
        box_y = art["boxes"][i].get_path().vertices[:, 1]
        caps = sorted(float(art["caps"][2 * i + k].get_ydata()[0]) for k in (0, 1))
        drawn.append(
            {
                "min": caps[0],
                "q1": float(box_y.min()),
                "median": float(art["medians"][i].get_ydata()[0]),
                "q3": float(box_y.max()),
                "max": caps[1],
                "n": int(len(data[i])),
            }
        )
    return drawn


def workload_plot(rows: Sequence[Mapping], datasets: Sequence[str], out_png, out_pdf,
                  unavailable: Mapping[str, str] | None = None) -> dict:
    """Fig. 6: per-worker busy time / the run's mean busy time, as min-quartile-max boxes.

    Top: cuMBE thread blocks with (variant cuMBE) and without (noWS) work
    stealing, from instrumented rows.  Bottom: ParMBE processes of the row with
    the most processes that has per-worker data.
    """
    rows = list(rows)
    order = ordered_datasets(rows, datasets)
    result: dict[str, Any] = {"figure": "workload", "left_out": {"gpu": {}, "parmbe": {}},
                              "notes": []}
    ylabel = "busy time / mean busy time"

    # ---- GPU panel data
    gpu_ds, gpu_data, gpu_first = [], {REF_VARIANT: {}, NO_WS: {}}, {}
    gpu_simulated = False
    for ds in order:
        got, why = {}, []
        for v in (REF_VARIANT, NO_WS):
            good, first = _pick(_instr(rows, ds, v), _busy)
            gpu_first[ds, v] = first
            if good is not None:
                got[v] = _busy(good)
                gpu_simulated |= bool(good.get("simulated"))
            else:
                why.append(_why_missing(first, f"{REF_ENGINE} {v} instrumented"))
        if got:
            gpu_ds.append(ds)
            for v, arr in got.items():
                gpu_data[v][ds] = arr
            if why:  # drawn with one of the two series
                result["notes"].append(f"{ds}: only one series ({'; '.join(why)})")
        else:
            result["left_out"]["gpu"][ds] = "; ".join(why)

    # ---- ParMBE panel data
    par_ds, par_data, par_procs = [], {}, {}
    for ds in order:
        cands = sorted(((r["params"][WORKER_PARAM], r) for r in _in_table_order(rows, select(
                        rows, dataset=ds, engine=WORKER_ENGINE))
                        if WORKER_PARAM in (r.get("params") or {})), key=lambda t: -t[0])
        chosen = next(((p, _busy(r)) for p, r in cands
                       if r.get("status") == "ok" and _busy(r) is not None), None)
        if chosen is None:
            result["left_out"]["parmbe"][ds] = (
                f"no {WORKER_ENGINE} rows" if not cands
                else "; ".join(_why_missing(r, WORKER_ENGINE) for _, r in cands)
            )
            continue
        par_ds.append(ds)
        par_procs[ds], par_data[ds] = chosen

    fig = _figure(max(7.0, 0.75 * max(len(gpu_ds), len(par_ds), 1) + 3.0), 7.5)
    ax_gpu, ax_par = fig.subplots(2, 1)

    # ---- GPU panel
    gpu_info: dict[str, Any] = {"xlabels": gpu_ds, "ylabel": ylabel, "series": {}}
    if gpu_ds:
        for off, v, name in ((-0.2, REF_VARIANT, f"{REF_VARIANT} (work stealing)"),
                             (0.2, NO_WS, f"{NO_WS} (no work stealing)")):
            ds_with = [ds for ds in gpu_ds if ds in gpu_data[v]]
            if not ds_with:
                continue
            pos = [gpu_ds.index(ds) + off for ds in ds_with]
            drawn = _boxes(ax_gpu, [gpu_data[v][ds] for ds in ds_with], pos, WS_COLORS[v])
            gpu_info["series"][name] = dict(zip(ds_with, drawn))
            ax_gpu.plot([], [], color=WS_COLORS[v], lw=8, alpha=0.55, label=name)
        for i, ds in enumerate(gpu_ds):  # a missing series keeps its slot, saying why
            for off, v in ((-0.2, REF_VARIANT), (0.2, NO_WS)):
                if ds not in gpu_data[v]:
                    why = _slot_text(gpu_first[ds, v])
                    ax_gpu.text(i + off, 0.03, why, rotation=90, ha="center", va="bottom",
                                fontsize=7, color="0.35", transform=ax_gpu.get_xaxis_transform())
        ax_gpu.set_xticks(range(len(gpu_ds)), gpu_ds)
        ax_gpu.set_xlim(-0.6, len(gpu_ds) - 0.4)
        ax_gpu.axhline(1.0, color="0.5", lw=0.8, ls="--")
        ax_gpu.set_ylabel(ylabel)
        ax_gpu.set_ylim(0, ax_gpu.get_ylim()[1] * 1.15)  # headroom for the legend
        ax_gpu.legend(loc="upper left", fontsize=8, frameon=False, ncol=2)
        _rotate(ax_gpu)
    else:
        text = _no_gpu_text(rows)
        _empty_note(ax_gpu, text)
        result["notes"].append(text)
    ax_gpu.set_title("cuMBE: busy time per thread block (box: quartiles, whiskers: min/max)"
                     + (f"\n{SIMULATOR_TEXT}" if gpu_simulated else ""), fontsize=10)
    gpu_info["simulated"] = gpu_simulated

    # ---- ParMBE panel
    par_info: dict[str, Any] = {"xlabels": par_ds, "ylabel": ylabel, "series": {},
                                "processes": par_procs}
    if par_ds:
        drawn = _boxes(ax_par, [par_data[ds] for ds in par_ds], list(range(len(par_ds))),
                       "#2ca02c")
        par_info["series"]["ParMBE"] = dict(zip(par_ds, drawn))
        labels = [f"{ds} (p={par_procs[ds]})" for ds in par_ds]
        ax_par.set_xticks(range(len(par_ds)), labels)
        ax_par.set_xlim(-0.6, len(par_ds) - 0.4)
        ax_par.axhline(1.0, color="0.5", lw=0.8, ls="--")
        ax_par.set_ylim(0, ax_par.get_ylim()[1] * 1.05)
        ax_par.set_ylabel(ylabel)
        _rotate(ax_par)
    else:
        _empty_note(ax_par, NO_PARMBE_TEXT)
        result["notes"].append(NO_PARMBE_TEXT)
    ax_par.set_title("ParMBE: busy time per process (largest process count run)", fontsize=10)

    gpu_info["xticklabels"] = _ticklabels(ax_gpu)
    par_info["xticklabels"] = _ticklabels(ax_par)
    gpu_info["title"] = ax_gpu.get_title()
    result["gpu"], result["parmbe"] = gpu_info, par_info
    _unavailable_note(fig, unavailable, result)
    result["texts"] = _texts(fig)
    result["paths"] = _save(fig, out_png, out_pdf)
    return result


# --------------------------------------------------------------------------- Fig. 7


def _fmt_total(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _phases(row: Mapping | None) -> tuple[dict[str, float], list[str]] | None:
    """Phase seconds in PHASES order (unknown keys folded into 'other'), or None."""
    if row is None:
        return None
    raw = (row.get("stats") or {}).get("phases_s") or {}
    if not raw:
        return None
    known = {k for k, _ in PHASES}
    out = {k: float(raw.get(k, 0.0) or 0.0) for k, _ in PHASES}
    extra = sorted(set(raw) - known)
    for k in extra:
        out["other"] += float(raw[k] or 0.0)
    if sum(out.values()) <= 0:
        return None
    return out, extra


def breakdown_plot(rows: Sequence[Mapping], datasets: Sequence[str], out_png, out_pdf,
                   unavailable: Mapping[str, str] | None = None) -> dict:
    """Fig. 7: stacked phase times of cuMBE and its ablations per dataset.

    The variants are those of the reference engine's instrumented rows, cuMBE
    first.  Normalised per dataset to cuMBE's total (phases summed over thread
    blocks), so datasets whose run times span decades share one axis; cuMBE's
    absolute total is printed under each dataset name.
    """
    rows = list(rows)
    order = ordered_datasets(rows, datasets)
    variants = list(dict.fromkeys(
        c.variant for c in configs(rows) if c.engine == REF_ENGINE and not c.timed
    ))
    variants.sort(key=lambda v: v != REF_VARIANT)
    result: dict[str, Any] = {"figure": "breakdown", "variants": variants,
                              "phases": [lab for _, lab in PHASES], "left_out": {},
                              "notes": [], "values": {}, "totals_s": {}, "absent": {}}
    ylabel = "time / cuMBE total (phases summed over thread blocks)"
    result["ylabel"] = ylabel

    data: dict[str, dict[str, dict[str, float]]] = {}
    first: dict[tuple[str, str], Mapping | None] = {}
    simulated: set[str] = set()
    for ds in order:
        per_v = {}
        for v in variants:
            good, first[ds, v] = _pick(_instr(rows, ds, v), _phases)
            got = _phases(good)
            if got is not None and good.get("simulated"):
                simulated.add(ds)
            if got is None:
                result["left_out"][f"{ds}/{v}"] = _why_missing(
                    first[ds, v], f"{REF_ENGINE} {v} instrumented")
                continue
            per_v[v], extra = got
            if extra:
                result["notes"].append(f"{ds}/{v}: unknown phase(s) {', '.join(extra)} "
                                       "counted as other")
        if REF_VARIANT not in per_v:
            if per_v:
                result["left_out"][ds] = f"no instrumented {REF_VARIANT} phases to normalise to"
            continue
        data[ds] = per_v
    shown = list(data)
    result["datasets"] = shown

    n_var = max(len(variants), 1)
    fig = _figure(max(8.0, 1.45 * max(len(shown), 1) + 3.5), 5.2)
    ax = fig.subplots()
    sim = bool(simulated & set(shown))
    title = (f"{REF_VARIANT} execution-time breakdown, each optimisation removed in turn"
             + (f"\n({', '.join(variants[1:])})" if len(variants) > 1 else "")
             + (f"\n{SIMULATOR_TEXT}" if sim else ""))
    ax.set_title(title, fontsize=9)
    result["title"] = title
    result["simulated"] = sim
    if not shown:
        text = _no_gpu_text(rows)
        _empty_note(ax, text)
        result["notes"].append(text)
        _unavailable_note(fig, unavailable, result)
        result["texts"] = _texts(fig)
        result["paths"] = _save(fig, out_png, out_pdf)
        return result

    slots = []  # (x, ds, variant)
    for g, ds in enumerate(shown):
        for j, v in enumerate(variants):
            if v in data[ds]:
                slots.append((g * (n_var + 1) + j, ds, v))
    xs = [s[0] for s in slots]
    bottom = np.zeros(len(slots))
    containers = []
    for (key, label), color in zip(PHASES, PHASE_COLORS):
        h = np.array([data[ds][v][key] / sum(data[ds][REF_VARIANT].values())
                      for _, ds, v in slots])
        containers.append(ax.bar(xs, h, bottom=bottom, width=0.85, color=color, label=label,
                                 edgecolor="white", linewidth=0.3))
        bottom += h
    # read the drawn heights back
    for (key, label), cont in zip(PHASES, containers):
        for (x, ds, v), patch in zip(slots, cont.patches):
            result["values"].setdefault(ds, {}).setdefault(v, {})[label] = float(patch.get_height())
    for ds in shown:
        result["totals_s"][ds] = {v: sum(p.values()) for v, p in data[ds].items()}

    # a variant without data keeps its slot, saying why (error, skipped, not run)
    absent = []
    for g, ds in enumerate(shown):
        for j, v in enumerate(variants):
            if v not in data[ds]:
                why = _slot_text(first[ds, v])
                x = g * (n_var + 1) + j
                ax.text(x, 0.02, why, rotation=90, ha="center", va="bottom", fontsize=7,
                        color="0.35")
                absent.append((x, v))
                result["absent"][f"{ds}/{v}"] = why
    ticks = sorted([(x, v) for x, _, v in slots] + absent)
    ax.set_xticks([x for x, _ in ticks], [v for _, v in ticks], fontsize=7, rotation=90)
    ax.tick_params(axis="x", length=0, pad=2)
    group_labels = []
    for g, ds in enumerate(shown):
        total = sum(data[ds][REF_VARIANT].values())
        text = (f"{ds}\n({REF_VARIANT} = {_fmt_total(total)} s"
                + (" simulated)" if ds in simulated else ")"))
        group_labels.append(text)
        ax.annotate(text, xy=(g * (n_var + 1) + (n_var - 1) / 2, 0),
                    xycoords=("data", "axes fraction"),
                    xytext=(0, -38), textcoords="offset points", ha="center", va="top",
                    fontsize=8)
    result["group_labels"] = group_labels
    ax.axhline(1.0, color="0.4", lw=0.8, ls="--")
    ax.set_xlim(-0.8, (len(shown) - 1) * (n_var + 1) + n_var - 0.2)
    ax.set_ylabel(ylabel)
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], labels[::-1], loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=8, frameon=False, title="phase")
    result["xticklabels"] = _ticklabels(ax)
    result["legend"] = _legend(ax)
    _unavailable_note(fig, unavailable, result)
    result["texts"] = _texts(fig)
    result["paths"] = _save(fig, out_png, out_pdf)
    return result


# --------------------------------------------------------------------------- scaling


def scaling_plot(rows: Sequence[Mapping], datasets: Sequence[str], out_png, out_pdf,
                 unavailable: Mapping[str, str] | None = None) -> dict:
    """ParMBE speedup vs process count, over its own 1-process time (else the smallest count)."""
    rows = list(rows)
    order = ordered_datasets(rows, datasets)
    xlabel = "ParMBE processes"
    result: dict[str, Any] = {"figure": "scaling", "xlabel": xlabel, "ylabel": None,
                              "series": {}, "ideal": {}, "left_out": {}, "notes": []}
    worker_rows = [r for r in select(rows, engine=WORKER_ENGINE, timed=True)
                   if WORKER_PARAM in (r.get("params") or {})]
    all_procs = sorted({int(r["params"][WORKER_PARAM]) for r in worker_rows})

    curves = {}
    for ds in order:
        times, missing = {}, []
        for p in all_procs:
            cands = _in_table_order(rows, select(worker_rows, dataset=ds,
                                                 params={WORKER_PARAM: p}))
            r = next((c for c in cands if c.get("status") == "ok"), cands[0] if cands else None)
            if r is None:
                continue
            if r.get("status") == "ok" and r.get("algo_s"):
                t = float(np.median(np.asarray(r["algo_s"], dtype=float)))
                if t > 0:
                    times[p] = t
                    continue
            missing.append(f"p={p}: {status_text(r) if r.get('status') != 'ok' else 'no time'}")
        if missing:
            result["notes"].append(f"{ds}: left out {'; '.join(missing)}")
        if not times:
            result["left_out"][ds] = f"no ok {WORKER_ENGINE} rows"
            continue
        base = 1 if 1 in times else min(times)
        ps = sorted(times)
        curves[ds] = (base, ps, [times[base] / times[p] for p in ps])

    fig = _figure(7.5, 4.8)
    ax = fig.subplots()
    if not curves:
        _empty_note(ax, NO_SCALING_TEXT)
        result["notes"].append(NO_SCALING_TEXT)
        _unavailable_note(fig, unavailable, result)
        result["texts"] = _texts(fig)
        result["paths"] = _save(fig, out_png, out_pdf)
        return result

    markers = "osD^v<>pPX*h"
    lines = {}
    for i, (ds, (base, ps, sp)) in enumerate(curves.items()):
        (line,) = ax.plot(ps, sp, marker=markers[i % len(markers)], lw=1.4, ms=5,
                          label=ds if base == 1 else f"{ds} (base p={base})",
                          color=f"C{i % 10}", ls="-" if i < 10 else ":")
        lines[ds] = (line, base)
    bases = sorted({b for b, _, _ in curves.values()})
    ylabel = ("speedup over ParMBE with 1 process" if bases == [1]
              else "speedup over ParMBE's smallest process count run")
    result["ylabel"] = ylabel
    xmax = max(all_procs)
    for b in bases:
        xi = [p for p in all_procs if p >= b] or [b]
        if len(xi) == 1:
            xi = [b, xmax] if xmax > b else [b]
        (ideal,) = ax.plot(xi, [p / b for p in xi], color="0.35", lw=1.0, ls="--",
                           label="ideal" if len(bases) == 1 else f"ideal (base p={b})",
                           zorder=0)
        result["ideal"][b] = {"processes": [float(x) for x in ideal.get_xdata()],
                              "speedup": [float(y) for y in ideal.get_ydata()]}
    for ds, (line, base) in lines.items():
        result["series"][ds] = {
            "base": base,
            "processes": [int(x) for x in line.get_xdata()],
            "speedup": [float(y) for y in line.get_ydata()],
        }

    ratio = max(all_procs) / min(all_procs)
    result["xscale"] = result["yscale"] = "log" if ratio >= 8 else "linear"
    if ratio >= 8:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(FormatStrFormatter("%g"))
            axis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_locator(FixedLocator(all_procs))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title("ParMBE strong scaling (median algorithm time)", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    result["legend"] = _legend(ax)
    result["xticks"] = [float(x) for x in ax.get_xticks()]
    _unavailable_note(fig, unavailable, result)
    result["texts"] = _texts(fig)
    result["paths"] = _save(fig, out_png, out_pdf)
    return result


# --------------------------------------------------------------------------- CLI hook


def write_all(rows: Sequence[Mapping], datasets: Sequence[str],
              out_dir: str | os.PathLike,
              unavailable: Mapping[str, str] | None = None) -> list[Path]:
    """workload / breakdown / scaling, each as .png and .pdf under out_dir; the datasets
    that are unavailable (the rows' and ``unavailable``: dataset -> reason) are listed
    under each figure."""
    rows = list(rows)
    unav = {**(unavailable or {}), **unavailable_in(rows)}
    out = Path(out_dir)
    paths: list[Path] = []
    for name, func in (("workload", workload_plot), ("breakdown", breakdown_plot),
                       ("scaling", scaling_plot)):
        info = func(rows, datasets, out / f"{name}.png", out / f"{name}.pdf", unav)
        paths += info["paths"]
    return paths


__all__ = ["workload_plot", "breakdown_plot", "scaling_plot", "write_all", "NO_GPU_TEXT"]
