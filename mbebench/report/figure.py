"""What every figure shares: a fresh Agg figure (no pyplot, no global backend), atomic
PNG + vector PDF, the notes an empty panel or an unavailable dataset leaves, and the
read-back of what was drawn (titles, labels, scales, texts) that the tests check."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator

from mbebench.atomic import atomic_path
from mbebench.report import select as sel

SIMULATOR_TEXT = "CUDA simulator on the CPU: simulation seconds, not GPU times"
NO_GPU_TEXT = "no instrumented GPU runs (no CUDA device)"
DECADE = 10.0  # values spanning at least this ratio get a log axis
DPI = 150  # the PNG's; the figure is laid out at it, so what is checked is what is saved


def new(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save(fig: Figure, out_png, out_pdf) -> list[Path]:
    """savefig to a temporary file beside the target, then os.replace (atomic_path); no
    dates or software versions inside, so equal figures are equal files."""
    paths = []
    for path, fmt, meta in ((out_png, "png", {"Software": None}),
                            (out_pdf, "pdf", {"CreationDate": None, "Producer": None,
                                              "Creator": None})):
        path = Path(path)
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, dpi=DPI, metadata=meta)
        paths.append(path)
    return paths


def spans_decades(values) -> bool:
    v = np.asarray([x for x in np.ravel(values) if np.isfinite(x) and x > 0], dtype=float)
    return v.size > 1 and v.max() / v.min() >= DECADE


def log_axis(ax, axis: str = "y") -> None:
    """A base-10 log axis with plain-number major labels."""
    (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_locator(LogLocator(base=10))
    target.set_minor_formatter(NullFormatter())


def _plain(x: float, _pos=None) -> str:
    return f"{x:,.0f}" if x >= 1 else f"{x:g}"


def log_ticks(axis, values) -> None:
    """Tick labels of a log axis that never run into each other: powers of ten where the
    values span a decade or more; within a narrower range 1, 2 and 5 times them as plain
    numbers (matplotlib's default then labels every minor tick, and neighbours such as
    3×10⁴ and 4×10⁴ touch)."""
    v = np.asarray([x for x in np.ravel(values) if np.isfinite(x) and x > 0], dtype=float)
    wide = v.size == 0 or np.floor(np.log10(v.max())) > np.floor(np.log10(v.min()))
    if wide and spans_decades(v):
        axis.set_major_locator(LogLocator(base=10))
    else:
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(_plain))
    axis.set_minor_formatter(NullFormatter())
    if not wide:
        axis.set_minor_locator(NullLocator())


def no_gpu_text(rows: Sequence[Mapping]) -> str:
    """The empty-panel text: why there are no instrumented GPU runs to draw (not run at
    all, none instrumented, no CUDA device, or what else happened to them)."""
    from mbebench import paper

    if not sel.select(rows, engine=sel.REF_ENGINE):
        return f"{paper.REFERENCE_LABEL} not run (not enabled in the config)"
    instr = sel.select(rows, engine=sel.REF_ENGINE, timed=False)
    if not instr:
        return f"no instrumented {paper.REFERENCE_LABEL} runs (instrument: false in the config)"
    if all(r.get("status") == "unavailable" for r in instr):
        return "no instrumented GPU runs (datasets unavailable)"
    if all(r.get("status") in ("skipped", "unavailable") for r in instr):
        return NO_GPU_TEXT
    return "no usable instrumented GPU runs (" + ", ".join(
        sorted({sel.status_text(r).split(":")[0] for r in instr if r.get("status") != "ok"}
               | ({"no data"} if any(r.get("status") == "ok" for r in instr) else set()))
    ) + ")"


def why_missing(row: Mapping | None, what: str) -> str:
    if row is None:
        return f"no {what} row"
    if row.get("status") != "ok":
        return f"{row.get('label') or what} {sel.status_text(row)}"
    return f"{row.get('label') or what} has no per-worker data"


def slot_text(row: Mapping | None) -> str:
    """What an empty slot of a figure says: not run, its status, or no data."""
    if row is None:
        return "not run"
    return row.get("status") if row.get("status") != "ok" else "no data"


def empty_note(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=11,
            color="0.3")
    ax.set_xticks([])
    ax.set_yticks([])


def rotate(ax) -> None:
    for lab in ax.get_xticklabels():
        lab.set_rotation(35)
        lab.set_ha("right")
        lab.set_rotation_mode("anchor")


def unavailable_note(fig: Figure, unavailable: Mapping[str, str] | None, result: dict,
                     notes: Sequence[str] = ()) -> None:
    """A line per unavailable dataset under the figure, so a figure never hides that a
    dataset is missing from it; paths are cut to file names (a figure travels).  ``notes``
    (what a mark on a time means) go first."""
    if not unavailable and not notes:
        return
    lines = list(notes)
    if unavailable:
        lines.append("Unavailable (download or convert failed, not run):")
    for ds, why in (unavailable or {}).items():
        why = sel.without_paths(" ".join(why.split()))
        lines.append(f"  {ds}: {why[:110] + '…' if len(why) > 111 else why}")
    height = fig.get_figheight()
    frac = min(0.4, (len(lines) * 11 + 6) / 72 / height)
    fig.get_layout_engine().set(rect=(0, frac, 1, 1 - frac))
    fig.text(0.01, frac - 0.01, "\n".join(lines), ha="left", va="top", fontsize=7, color="0.3")
    if unavailable:
        result["unavailable"] = dict(unavailable)
    result["footer"] = "\n".join(lines)


def describe_axes(ax) -> dict:
    """What a reader sees on one axes: title, labels, scales, tick labels, legend."""
    leg = ax.get_legend()
    return {"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
            "xscale": ax.get_xscale(), "yscale": ax.get_yscale(),
            "xticklabels": [t.get_text() for t in ax.get_xticklabels()],
            "ylim": tuple(float(y) for y in ax.get_ylim()),
            "legend": [t.get_text() for t in leg.get_texts()] if leg else []}


def finish(fig: Figure, result: dict, out_png, out_pdf,
           unavailable: Mapping[str, str] | None, notes: Sequence[str] = (),
           apart: Sequence = ()) -> dict:
    """Footer, read-back of every text and axes, then PNG + PDF; ``overlapping``: the tick
    labels, and the texts of ``apart``, that run into each other as saved."""
    unavailable_note(fig, unavailable, result, notes)
    result["texts"] = [t.get_text() for ax in fig.axes for t in ax.texts]
    result["figure_texts"] = [t.get_text() for t in fig.texts]
    result["axes"] = [describe_axes(ax) for ax in fig.axes]
    result["paths"] = save(fig, out_png, out_pdf)
    result["clipped"] = clipped(fig)
    result["overlapping"] = overlapping_ticklabels(fig) + overlapping(fig, apart)
    return result


def _drawn_ticklabels(axis, minor: bool = False) -> list:
    """The tick labels inside the view limits (the locator also makes some outside)."""
    lo, hi = sorted(axis.get_view_interval())
    ticks = axis.get_minor_ticks() if minor else axis.get_major_ticks()
    return [t.label1 for t in ticks
            if lo - 1e-9 * abs(hi - lo) <= t.get_loc() <= hi + 1e-9 * abs(hi - lo)]


def overlapping(fig: Figure, texts) -> list[tuple[str, str]]:
    """The pairs of the texts whose drawn boxes overlap (a reader sees them run together)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_window_extent(renderer), t.get_text()) for t in texts
             if t.get_visible() and t.get_text()]
    return [(ta, tb) for i, (a, ta) in enumerate(boxes) for b, tb in boxes[i + 1:]
            if a.overlaps(b)]


def overlapping_ticklabels(fig: Figure) -> list[tuple[str, str]]:
    """Tick labels of one axis (major and minor) that overlap: drawn run together."""
    return [pair for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
            for pair in overlapping(fig, [*_drawn_ticklabels(axis),
                                          *_drawn_ticklabels(axis, True)])]


def clipped(fig: Figure) -> list[str]:
    """The texts (labels, titles, tick labels, notes) drawn partly outside the canvas."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    W, H = fig.bbox.width, fig.bbox.height
    out = []
    for ax in fig.axes:
        items = [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.texts,
                 *_drawn_ticklabels(ax.xaxis), *_drawn_ticklabels(ax.yaxis)]
        leg = ax.get_legend()
        if leg:
            items.append(leg)
        for t in items:
            if not t.get_visible() or (hasattr(t, "get_text") and not t.get_text()):
                continue
            bb = t.get_window_extent(renderer)
            if bb.x0 < -1 or bb.y0 < -1 or bb.x1 > W + 1 or bb.y1 > H + 1:
                out.append(t.get_text() if hasattr(t, "get_text") else type(t).__name__)
    return out
