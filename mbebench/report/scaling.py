"""ParMBE strong scaling (``results/plots/scaling.{png,pdf}``): speedup over its own
1-process time (else its smallest process count) against the process count."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.ticker import FixedLocator, FormatStrFormatter, NullLocator

from mbebench.report import figure
from mbebench.report import select as sel

NO_SCALING_TEXT = "no successful ParMBE runs"
XLABEL = "ParMBE processes"


def _curves(rows, order, procs, result) -> dict[str, tuple[int, list[int], list[float]]]:
    curves = {}
    for ds in order:
        times, missing = {}, []
        for p in procs:
            cands = [r for r in sel.worker_rows(rows, ds, timed=True)
                     if r["params"][sel.WORKER_PARAM] == p]
            r = next((c for c in cands if c.get("status") == "ok"), cands[0] if cands else None)
            if r is None:
                continue
            t = sel.median_s(r)
            if t is not None and t > 0:
                times[p] = t
                continue
            missing.append(f"p={p}: {sel.status_text(r) if r.get('status') != 'ok' else 'no time'}")
        if missing:
            result["notes"].append(f"{ds}: left out {'; '.join(missing)}")
        if not times:
            result["left_out"][ds] = f"no ok {sel.WORKER_ENGINE} rows"
            continue
        base = 1 if 1 in times else min(times)
        ps = sorted(times)
        curves[ds] = (base, ps, [times[base] / times[p] for p in ps])
        # sharded: every time is a makespan over the shards (mbebench.gather)
        n = max(sel.shard_count(r) for r in sel.worker_rows(rows, ds, timed=True))
        if n > 1:
            result.setdefault("sharded", {})[ds] = n
    return curves


def _label(ds: str, base: int, shards: int) -> str:
    notes = [*([f"base p={base}"] if base != 1 else []),
             *([f"{shards} shards: slowest shard's times"] if shards > 1 else [])]
    return f"{ds} ({', '.join(notes)})" if notes else ds


def plot(rows: Sequence[Mapping], datasets: Sequence[str], out_png, out_pdf,
         unavailable: Mapping[str, str] | None = None) -> dict:
    """Draw the scaling figure; return what was drawn (line data read back)."""
    rows = list(rows)
    result: dict[str, Any] = {"figure": "scaling", "xlabel": XLABEL, "ylabel": None,
                              "series": {}, "ideal": {}, "left_out": {}, "notes": []}
    procs = sorted({int(r["params"][sel.WORKER_PARAM])
                    for r in sel.worker_rows(rows, timed=True)})
    curves = _curves(rows, sel.ordered_datasets(rows, datasets), procs, result)

    fig = figure.new(7.5, 4.8)
    ax = fig.subplots()
    ax.set_title("ParMBE strong scaling (median algorithm time)", fontsize=10)
    if not curves:
        figure.empty_note(ax, NO_SCALING_TEXT)
        result["notes"].append(NO_SCALING_TEXT)
        return figure.finish(fig, result, out_png, out_pdf, unavailable)

    markers = "osD^v<>pPX*h"
    lines = {}
    for i, (ds, (base, ps, sp)) in enumerate(curves.items()):
        (line,) = ax.plot(ps, sp, marker=markers[i % len(markers)], lw=1.4, ms=5,
                          label=_label(ds, base, (result.get("sharded") or {}).get(ds, 1)),
                          color=f"C{i % 10}", ls="-" if i < 10 else ":")
        lines[ds] = (line, base)
    bases = sorted({b for b, _, _ in curves.values()})
    ylabel = ("speedup over ParMBE with 1 process" if bases == [1]
              else "speedup over ParMBE's smallest process count run")
    result["ylabel"] = ylabel
    xmax = max(procs)
    for b in bases:
        xi = [p for p in procs if p >= b] or [b]
        if len(xi) == 1:
            xi = [b, xmax] if xmax > b else [b]
        (ideal,) = ax.plot(xi, [p / b for p in xi], color="black", lw=1.1, ls=(0, (4, 3)),
                           label="ideal" if len(bases) == 1 else f"ideal (base p={b})", zorder=3)
        result["ideal"][b] = {"processes": [float(x) for x in ideal.get_xdata()],
                              "speedup": [float(y) for y in ideal.get_ydata()]}
    for ds, (line, base) in lines.items():
        result["series"][ds] = {"base": base, "processes": [int(x) for x in line.get_xdata()],
                                "speedup": [float(y) for y in line.get_ydata()]}

    # log axes for a wide range of process counts, or speedups that span a decade
    xlog = max(procs) / min(procs) >= 8
    ylog = xlog or figure.spans_decades([y for _, _, sp in curves.values() for y in sp])
    result["xscale"] = "log" if xlog else "linear"
    result["yscale"] = "log" if ylog else "linear"
    for on, axis, set_scale in ((xlog, ax.xaxis, ax.set_xscale), (ylog, ax.yaxis, ax.set_yscale)):
        if on:
            set_scale("log", base=2)
            axis.set_major_formatter(FormatStrFormatter("%g"))
            axis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_locator(FixedLocator(procs))
    ax.set_xlabel(XLABEL)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    result["legend"] = [t.get_text() for t in ax.get_legend().get_texts()]
    result["xticks"] = [float(x) for x in ax.get_xticks()]
    return figure.finish(fig, result, out_png, out_pdf, unavailable)
