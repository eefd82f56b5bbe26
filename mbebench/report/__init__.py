"""Result rows -> the report: tables (``results/tables/``) and figures (``results/plots/``).

One module per table or figure, over one row-selection layer (:mod:`.select`: rows
are chosen by their fields, never by their names):

- tables: :mod:`.summary`, :mod:`.speedup` (the paper's Table I), :mod:`.agreement`
  (the engines' counts; ``check_counts``), :mod:`.vs_paper`;
- figures: :mod:`.workload` (Fig. 6), :mod:`.breakdown` (Fig. 7), :mod:`.scaling`
  (ParMBE), :mod:`.time_vs_size`;
- :mod:`.fmt` renders tables (pandas: Markdown through tabulate, ``Styler.to_latex``),
  :mod:`.figure` holds what every figure shares;
- :mod:`.registry` lists every table and figure once (name, formats, module, rule,
  caption): the rules and the functions below take their file names from it.

:func:`write_tables` is what ``python -m mbebench tables`` calls, :func:`write_figures`
``python -m mbebench plots``.  Neither fails on a mismatch:
:func:`.agreement.check_all` (``python -m mbebench check``) is the separate check, so
the tables, outputs of another rule, stay on disk as the evidence.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from mbebench.report.registry import BY_NAME, of_rule

# the names of the files the tables and plots rules write (mbebench.report.registry)
TABLE_FILES = tuple(Path(f).name for o in of_rule("tables") for f in o.files())
FIGURES = tuple(o.name for o in of_rule("plots"))


def write_tables(rows: Sequence[Mapping], datasets: Sequence[str], out_dir: str | os.PathLike,
                 meta: Mapping | None = None,
                 unavailable: Mapping[str, str] | None = None) -> list[Path]:
    """Every table of :data:`TABLE_FILES` under ``out_dir``, mismatches and unavailable
    datasets marked (no exception)."""
    from mbebench.report import speedup, summary, vs_paper

    rows = list(rows)

    def path(name: str, fmt: str) -> Path:
        return Path(BY_NAME[name].file(fmt, out_dir))

    summary.write_summary(summary.summary_table(rows, datasets, meta, unavailable),
                          path("summary", "csv"), path("summary", "md"))
    speedup.write_speedup(speedup.speedup_table(rows, datasets, meta, unavailable),
                          path("speedup", "csv"), path("speedup", "md"), path("speedup", "tex"))
    vs_paper.write_vs_paper(rows, path("vs_paper", "csv"), path("vs_paper_speedups", "csv"),
                            path("vs_paper", "md"), meta=meta)
    return [Path(out_dir) / name for name in TABLE_FILES]


def write_figures(rows: Sequence[Mapping], datasets: Sequence[str],
                  out_dir: str | os.PathLike,
                  unavailable: Mapping[str, str] | None = None) -> list[Path]:
    """Each figure of :data:`FIGURES` as .png and .pdf under ``out_dir``; the unavailable
    datasets (the rows' and ``unavailable``: dataset -> reason) listed under each."""
    from mbebench.report.select import ordered_datasets
    from mbebench.report.select import unavailable as unavailable_of

    rows = list(rows)
    merged = {**(unavailable or {}), **unavailable_of(rows)}
    order = ordered_datasets(rows, [*datasets, *merged])  # listed in the tables' order
    unav = {ds: merged[ds] for ds in order if ds in merged}
    out = Path(out_dir)
    paths: list[Path] = []
    for figure in of_rule("plots"):
        png, pdf = (Path(figure.file(fmt, out)) for fmt in ("png", "pdf"))
        module = importlib.import_module(f"mbebench.report.{figure.module}")
        info = module.plot(rows, datasets, png, pdf, unav)
        paths += info["paths"]
    return paths
