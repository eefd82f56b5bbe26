"""Fig. 7, execution-time breakdown (``results/plots/breakdown.{png,pdf}``): cuMBE and
each ablation's phases, stacked, per dataset.

The instrumented kernel times each phase per warp with clock64; ``stats.phases_s``
sums them over the run's warps.  Summed over 4,224 warps, Marvel's 0.04 s kernel is
170 warp-seconds, a number no reader can set beside Table I, so the figure states
per-warp seconds (the sum divided by the number of warps, which is the kernel's own
time when every warp is busy to the end) under Table I's seconds (the timed run's),
each labelled, so that the two are not taken for one another.
Bars are normalised per dataset to cuMBE's total, so datasets whose times span
decades share one axis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mbebench import paper
from mbebench.report import figure, fmt
from mbebench.report import select as sel

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
REF = sel.REF_VARIANT
YLABEL = f"time / {REF}'s time on the dataset"


def phases(row: Mapping | None) -> tuple[dict[str, float], list[str]] | None:
    """Phase seconds (summed over workers) in PHASES order, unknown keys folded into
    'other', or None."""
    if row is None:
        return None
    raw = (row.get("stats") or {}).get("phases_s") or {}
    if not raw:
        return None
    out = {k: float(raw.get(k, 0.0) or 0.0) for k, _ in PHASES}
    extra = sorted(set(raw) - {k for k, _ in PHASES})
    for k in extra:
        out["other"] += float(raw[k] or 0.0)
    if sum(out.values()) <= 0:
        return None
    return out, extra


def n_workers(row: Mapping) -> int | None:
    """How many workers the phases were summed over: the per-worker list's length, else
    the launch (blocks x warps per block)."""
    stats = row.get("stats") or {}
    if stats.get("worker_busy_s"):
        return len(stats["worker_busy_s"])
    if stats.get("blocks") and stats.get("warps_per_block"):
        return int(stats["blocks"]) * int(stats["warps_per_block"])
    return None


def _bar_rows(rows, ds: str, bar: str) -> list[Mapping]:
    """The instrumented rows of one bar: a variant with the technique's switch off, or the
    reference with it on (``"<variant> <label>"``)."""
    variant, _, tech = bar.partition(" ")
    on = bool(tech)
    return [r for r in sel.instrumented(rows, ds, variant)
            if bool((r.get("params") or {}).get(paper.TECHNIQUE["param"], False)) == on]


def _collect(rows, order, variants, result):
    data: dict[str, dict[str, dict[str, float]]] = {}
    first: dict[tuple[str, str], Mapping | None] = {}
    used: dict[str, Mapping] = {}
    for ds in order:
        per_v = {}
        for v in variants:
            good, first[ds, v] = sel.pick(_bar_rows(rows, ds, v), phases)
            got = phases(good)
            if got is None:
                result["left_out"][f"{ds}/{v}"] = figure.why_missing(
                    first[ds, v], f"{sel.REF_ENGINE} {v} instrumented")
                continue
            per_v[v], extra = got
            if v == REF:
                used[ds] = good
            if extra:
                result["notes"].append(f"{ds}/{v}: unknown phase(s) {', '.join(extra)} "
                                       "counted as other")
        if REF not in per_v:
            if per_v:
                result["left_out"][ds] = f"no instrumented {REF} phases to normalise to"
            continue
        data[ds] = per_v
    return data, first, used


def table_one_text(timed: Mapping | None) -> str:
    """Table I's time of the dataset, as Table I shows it (its cell's text otherwise),
    marked when it is a sharded or multi-GPU time."""
    if sel.simulated(timed):
        return "no GPU time (simulator)"
    t = sel.median_s(timed)
    if t is None:
        return sel.NOT_RUN if timed is None else sel.status_text(timed).split(":")[0]
    return sel.marked(f"{fmt.seconds(t)} s", sel.time_marks(timed))


def group_label(ds: str, instr: Mapping, timed: Mapping | None) -> str:
    """The dataset, Table I's time (the timed run's), then the instrumented build's time
    per warp, which is not Table I's (the instrumented kernel's clocks cost time)."""
    total = sum(phases(instr)[0].values())
    n = n_workers(instr)
    sim = " simulated" if instr.get("simulated") else ""
    name = (instr.get("stats") or {}).get("worker") or "worker"
    instr_line = (f"instrumented build:\n{fmt.seconds(total / n)} s per {name}{sim}" if n
                  else f"instrumented build:\n{fmt.seconds(total)} {name}-s summed{sim}")
    return f"{ds}\nTable I: {table_one_text(timed)}\n{instr_line}"


def _clip(ax, slots, heights) -> dict[str, float]:
    """A y axis from 0 that the ablations' bars fit, except an outlier (without work
    stealing, idle warps can make a bar 20x cuMBE's): cut at 1.3x the tallest other
    bar, its height printed on top, so that the other bars stay readable."""
    tallest = max(heights)
    rest = [h for (_, _, v), h in zip(slots, heights) if v != paper.NO_WORK_STEALING]
    top = max(1.0, max(rest, default=tallest)) * 1.3
    if tallest <= top:
        ax.set_ylim(0, max(1.0, tallest) * 1.08)
        return {}
    ax.set_ylim(0, top)
    cut = {}
    for (x, ds, v), h in zip(slots, heights):
        if h > top:
            ax.text(x, top * 0.985, f"{h:.1f}×", ha="center", va="top", fontsize=7,
                    rotation=90, color="black", bbox={"fc": "white", "ec": "none", "pad": 1})
            cut[f"{ds}/{v}"] = float(h)
    return cut


def plot(rows: Sequence[Mapping], datasets: Sequence[str], out_png, out_pdf,
         unavailable: Mapping[str, str] | None = None) -> dict:
    """Draw Fig. 7; return what was drawn (bar heights read back from the artists)."""
    rows = list(rows)
    order = sel.ordered_datasets(rows, datasets)
    variants = _variants(rows)
    result: dict[str, Any] = {"figure": "breakdown", "variants": variants,
                              "phases": [lab for _, lab in PHASES], "left_out": {},
                              "notes": [], "values": {}, "totals_s": {}, "per_worker_s": {},
                              "absent": {}, "ylabel": YLABEL}
    data, first, used = _collect(rows, order, variants, result)
    shown = list(data)
    result["datasets"] = shown

    n_var = max(len(variants), 1)
    fig = figure.new(max(8.0, 1.6 * max(len(shown), 1) + 3.5), 6.0)
    ax = fig.subplots()
    sim = any(used[ds].get("simulated") for ds in shown)
    title = _title(variants, sim)
    ax.set_title(title, fontsize=9)
    result["title"], result["simulated"] = title, sim
    if not shown:
        text = figure.no_gpu_text(rows)
        figure.empty_note(ax, text)
        result["notes"].append(text)
        return figure.finish(fig, result, out_png, out_pdf, unavailable)

    slots = [(g * (n_var + 1) + j, ds, v) for g, ds in enumerate(shown)
             for j, v in enumerate(variants) if v in data[ds]]
    bottom = _stack_bars(ax, slots, data, result)
    for ds in shown:
        result["totals_s"][ds] = {v: sum(p.values()) for v, p in data[ds].items()}
        n = n_workers(used[ds])
        if n:
            result["per_worker_s"][ds] = sum(data[ds][REF].values()) / n
    absent = _absent_slots(ax, shown, variants, data, first, result)
    ticks = sorted([(x, v) for x, _, v in slots] + absent)
    # a bar with our technique on is ticked "+<label>" (short: the dataset's label is below)
    ax.set_xticks([x for x, _ in ticks], ["+" + v.partition(" ")[2] if " " in v else v
                                          for _, v in ticks], fontsize=7, rotation=90)
    ax.tick_params(axis="x", length=0, pad=2)
    labels = [group_label(ds, used[ds], sel.reference_timed(rows, ds)) for ds in shown]
    annotations = _annotate_groups(ax, labels, n_var)
    result["group_labels"] = labels
    marked = [t for ds in shown for t in [sel.reference_timed(rows, ds)]
              if t is not None and sel.median_s(t) is not None and sel.time_marks(t)]
    _finish_axes(ax, len(shown), n_var, slots, bottom, result)
    return figure.finish(fig, result, out_png, out_pdf, unavailable,
                         [f"Table I: {n}" for n in sel.mark_notes(marked)], annotations)


def _variants(rows: Sequence[Mapping]) -> list[str]:
    """The bars: the reference engine's untimed (instrumented) variants, the reference
    first, then the reference with our technique's switch on (``paper.TECHNIQUE``) when
    such rows exist."""
    tech = paper.TECHNIQUE
    variants = list(dict.fromkeys(
        c.variant if not c.params.get(tech["param"]) else f"{c.variant} {tech['label']}"
        for c in sel.configs(rows) if c.engine == sel.REF_ENGINE and not c.timed))
    variants.sort(key=lambda v: (v.partition(" ")[0] != REF, v != REF))
    return variants


def _title(variants: Sequence[str], sim: bool) -> str:
    removed = [v for v in variants[1:] if " " not in v]
    added = [v for v in variants[1:] if " " in v]
    return (f"{paper.REFERENCE_LABEL} execution-time breakdown (clock64 per warp), each "
            "optimisation removed in turn" + (f" ({', '.join(removed)})" if removed else "")
            + (f"\nand with ours added ({', '.join(added)})" if added else "")
            + (f"\n{figure.SIMULATOR_TEXT}" if sim else ""))


def _stack_bars(ax, slots, data, result: dict[str, Any]) -> np.ndarray:
    """One stacked bar per slot, phases bottom up; the heights drawn go into
    ``result["values"]``.  Returns the bars' tops."""
    bottom = np.zeros(len(slots))
    for (key, label), color in zip(PHASES, PHASE_COLORS):
        h = np.array([data[ds][v][key] / sum(data[ds][REF].values()) for _, ds, v in slots])
        cont = ax.bar([s[0] for s in slots], h, bottom=bottom, width=0.85, color=color,
                      label=label, edgecolor="white", linewidth=0.3)
        bottom += h
        for (_, ds, v), patch in zip(slots, cont.patches):
            result["values"].setdefault(ds, {}).setdefault(v, {})[label] = float(
                patch.get_height())
    return bottom


def _absent_slots(ax, shown, variants, data, first, result: dict[str, Any]) -> list:
    """(x, variant) of each slot without data; its text there says why."""
    n_var = max(len(variants), 1)
    absent = []  # a variant without data keeps its slot, saying why (error, skipped, not run)
    for g, ds in enumerate(shown):
        for j, v in enumerate(variants):
            if v not in data[ds]:
                why = figure.slot_text(first[ds, v])
                x = g * (n_var + 1) + j
                ax.text(x, 0.02, why, rotation=90, ha="center", va="bottom", fontsize=7,
                        color="0.35")
                absent.append((x, v))
                result["absent"][f"{ds}/{v}"] = why
    return absent


def _annotate_groups(ax, labels: Sequence[str], n_var: int) -> list:
    """Each dataset's label under its group of bars (returned: the figure's bounding box
    must take them in)."""
    annotations = []
    for g, text in enumerate(labels):
        annotations.append(ax.annotate(text, xy=(g * (n_var + 1) + (n_var - 1) / 2, 0),
                    xycoords=("data", "axes fraction"), xytext=(0, -34),
                    textcoords="offset points", ha="center", va="top", fontsize=7.5,
                    annotation_clip=False))
    return annotations


def _finish_axes(ax, n_shown: int, n_var: int, slots, bottom, result: dict[str, Any]) -> None:
    """The reference line, limits, legend; what they show goes into ``result``."""
    ax.axhline(1.0, color="0.4", lw=0.8, ls="--")
    ax.set_xlim(-0.8, (n_shown - 1) * (n_var + 1) + n_var - 0.2)
    result["clipped_bars"] = _clip(ax, slots, bottom)
    ax.set_ylabel(YLABEL)
    handles, names = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], names[::-1], loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=8, frameon=False, title="phase")
    result["xticklabels"] = [t.get_text() for t in ax.get_xticklabels()]
    result["legend"] = [t.get_text() for t in ax.get_legend().get_texts()]
    result["yticks"] = [float(y) for y in ax.get_yticks()]
