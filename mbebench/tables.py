"""Result rows -> the summary table and the paper's Table I (speedups).

``write_all`` is what ``python -m mbebench tables`` calls: it writes every
table first (a count mismatch is flagged loudly in the Markdown) and only then
raises :class:`CountMismatchError`, so the evidence is on disk when the rule fails.
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from mbebench import atomic
from mbebench.rows import (
    graph_meta,
    index_rows,
    ordered_datasets,
    parmbe_processes,
    run_id_sort_key,
    status_text,
)

IMBEA = "imbea"
CUMBE = "cumbe-cuMBE"
MISMATCH = "MISMATCH"
NOT_RUN = "not run"
GEOMEAN = "geometric mean"


class CountMismatchError(RuntimeError):
    """Two ok runs of one dataset disagree on the count or the fingerprint."""


# --------------------------------------------------------------------------- helpers


def _density(n_left, n_right, n_edges) -> float:
    """The paper's edge density 2|E| / (|U| |V|)."""
    try:
        if n_left and n_right:
            return 2.0 * float(n_edges) / (float(n_left) * float(n_right))
    except TypeError:
        pass
    return math.nan


def _meta_for(rows, meta: Mapping | None) -> dict[str, dict[str, int]]:
    out = graph_meta(rows)
    for ds, m in (meta or {}).items():
        out[ds] = {k: int(m[k]) for k in ("n_left", "n_right", "n_edges")}
    return out


def _agreement(rows_of_ds: Iterable[Mapping]) -> dict[tuple[int, str], list[str]]:
    """(count, fingerprint) -> run ids, over the ok rows (instrumented ones included)."""
    groups: dict[tuple[int, str], list[str]] = {}
    for r in sorted(rows_of_ds, key=lambda r: run_id_sort_key(r["run_id"])):
        if r.get("status") == "ok":
            key = (int(r["count"]), str(r["fingerprint"]).lower())
            groups.setdefault(key, []).append(r["run_id"])
    return groups


def _by_dataset(rows: Iterable[Mapping]) -> dict[str, list[Mapping]]:
    out: dict[str, list[Mapping]] = {}
    for r in rows:
        out.setdefault(r["dataset"], []).append(r)
    return out


def _describe_groups(groups: Mapping[tuple[int, str], list[str]]) -> str:
    return "; ".join(f"{', '.join(ids)} -> {c} ({fp})" for (c, fp), ids in groups.items())


def mismatches(rows: Iterable[Mapping]) -> dict[str, str]:
    """dataset -> one line saying which run ids gave which count/fingerprint."""
    out = {}
    for ds, rs in _by_dataset(rows).items():
        groups = _agreement(rs)
        if len(groups) > 1:
            out[ds] = _describe_groups(groups)
    return out


def check_agreement(rows: Iterable[Mapping]) -> None:
    """Raise CountMismatchError when ok runs of a dataset disagree.

    The first line names the datasets (the CLI prints only that line); then one
    line per dataset: which run ids gave which count (fingerprint).
    """
    bad = mismatches(list(rows))
    if bad:
        lines = [
            f"count/fingerprint mismatch in {len(bad)} dataset(s): {', '.join(bad)}"
            " (see the tables' MISMATCH marks)"
        ]
        lines += [f"{ds}: {text}" for ds, text in bad.items()]
        raise CountMismatchError("\n".join(lines))


SIMULATED = "CUDA simulator (no GPU time)"


def _time_cell(row: Mapping | None) -> Any:
    """Median algo seconds of an ok row; otherwise the status text."""
    if row is None:
        return NOT_RUN
    if row.get("status") == "ok":
        return float(statistics.median(float(x) for x in row.get("algo_s") or []))
    return status_text(row)


def _spread(row: Mapping | None) -> tuple[float, float]:
    if row is None or row.get("status") != "ok":
        return (math.nan, math.nan)
    algo = [float(x) for x in row.get("algo_s") or []]
    return (min(algo), max(algo))


def _is_time(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def geometric_mean(values: Iterable[float]) -> float:
    vals = [float(v) for v in values if _is_time(v)]
    if not vals:
        return math.nan
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


# --------------------------------------------------------------------------- summary


def summary_table(
    rows: Sequence[Mapping], datasets: Sequence[str], meta: Mapping | None = None
) -> pd.DataFrame:
    """One line per dataset: size, density, count, fingerprint, time per run id, agreement.

    Time cells hold the median algo seconds (float) of an ok row, or the status
    text (``skipped: ...``, ``timeout (600 s)``, ``error: ...``, ``not run``).
    ``agree`` is True/False, or None when the dataset has no ok run.
    """
    rows = list(rows)
    meta_ = _meta_for(rows, meta)
    idx = index_rows(rows)
    run_ids = sorted({r["run_id"] for r in rows}, key=run_id_sort_key)
    by_ds = _by_dataset(rows)
    records = []
    for ds in ordered_datasets(rows, datasets):
        m = meta_.get(ds, {})
        groups = _agreement(by_ds.get(ds, []))
        if len(groups) == 1:
            (count, fp), = groups
            agree: bool | None = True
        elif groups:
            count = " / ".join(str(c) for c, _ in groups)
            fp = " / ".join(f for _, f in groups)
            agree = False
        else:
            count, fp, agree = None, None, None
        rec = {
            "dataset": ds,
            "|U|": m.get("n_left"),
            "|V|": m.get("n_right"),
            "|E|": m.get("n_edges"),
            "density": _density(m.get("n_left"), m.get("n_right"), m.get("n_edges")),
            "count": count,
            "fingerprint": fp,
        }
        for rid in run_ids:
            rec[rid] = _time_cell(idx.get((ds, rid)))
        rec["agree"] = agree
        rec["mismatch"] = _describe_groups(groups) if agree is False else ""
        records.append(rec)
    cols = ["dataset", "|U|", "|V|", "|E|", "density", "count", "fingerprint", *run_ids,
            "agree", "mismatch"]
    df = pd.DataFrame.from_records(records, columns=cols)
    for c in ("|U|", "|V|", "|E|"):
        df[c] = df[c].astype("Int64")
    df.attrs["run_ids"] = run_ids
    return df


# --------------------------------------------------------------------------- formatting


def fmt_seconds(x: Any) -> str:
    if not _is_num(x):
        return "" if x is None else str(x)
    x = float(x)
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    if x >= 0.01 or x == 0:
        return f"{x:.3f}"
    return f"{x:.1e}"


def fmt_speedup(x: Any) -> str:
    if not _is_num(x):
        return "–"
    return f"{x:.2f}×"


def fmt_density(x: Any) -> str:
    return f"{x:.2e}" if _is_num(x) else "–"


def fmt_int(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)) or x is pd.NA:
        return "–"
    try:
        return f"{int(x):,}"
    except (TypeError, ValueError):
        return str(x)


def _is_num(x: Any) -> bool:
    return (
        isinstance(x, (int, float))
        and not isinstance(x, bool)
        and not (isinstance(x, float) and math.isnan(x))
    )


def _md_cell(text: Any) -> str:
    s = "" if text is None else str(text)
    s = " ".join(s.split())
    if len(s) > 70:
        s = s[:69] + "…"
    return s.replace("|", "\\|")


def _md_table(header: Sequence[str], body: Sequence[Sequence[Any]], right: set[int]) -> str:
    lines = ["| " + " | ".join(_md_cell(h) for h in header) + " |"]
    lines.append(
        "|" + "|".join("---:" if i in right else ":---" for i in range(len(header))) + "|"
    )
    for row in body:
        lines.append("| " + " | ".join(_md_cell(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


def _agree_text(agree: Any) -> str:
    if agree is True:
        return "yes"
    if agree is False:
        return f"**{MISMATCH}**"
    return "no ok run"


def summary_markdown(df: pd.DataFrame) -> str:
    run_ids = df.attrs.get("run_ids") or [
        c for c in df.columns
        if c not in ("dataset", "|U|", "|V|", "|E|", "density", "count", "fingerprint",
                     "agree", "mismatch")
    ]
    header = ["dataset", "|U|", "|V|", "|E|", "density", "count", "fingerprint",
              *[f"{rid} (s)" for rid in run_ids], "agree"]
    body = []
    for _, r in df.iterrows():
        bad = r["agree"] is False
        body.append(
            [f"**{r['dataset']}**" if bad else r["dataset"], fmt_int(r["|U|"]),
             fmt_int(r["|V|"]), fmt_int(r["|E|"]), fmt_density(r["density"]),
             fmt_int(r["count"]) if not bad else r["count"],
             r["fingerprint"] if r["fingerprint"] is not None else "–",
             *[fmt_seconds(r[rid]) for rid in run_ids], _agree_text(r["agree"])]
        )
    out = ["# Summary of all runs", ""]
    bad_rows = df[df["agree"].apply(lambda a: a is False)]
    if len(bad_rows):
        out += [
            f"**{MISMATCH}: the engines disagree on the maximal bicliques of "
            f"{len(bad_rows)} dataset(s). The pipeline fails on this.**",
            "",
        ]
        out += [f"- **{r['dataset']}**: " + r["mismatch"].replace("|", "\\|")
                for _, r in bad_rows.iterrows()]
        out.append("")
    out += [
        "Times: median algorithm seconds over the repeats (no I/O, no JIT compile). "
        "`-instr` runs are instrumented builds: they count for agreement, "
        "but their times are not the engines' times.",
        "Density: 2|E| / (|U| |V|).",
        "",
    ]
    return "\n".join(out) + "\n" + _md_table(header, body, right=set(range(1, 6)) | {
        7 + i for i in range(len(run_ids))})


def write_summary(df: pd.DataFrame, csv_path, md_path) -> None:
    atomic.write_text(csv_path, df.to_csv(index=False))
    atomic.write_text(md_path, summary_markdown(df))


# --------------------------------------------------------------------------- Table I


def _label(run_id: str) -> str:
    if run_id == IMBEA:
        return "iMBEA"
    if run_id == CUMBE:
        return "cuMBE"
    p = parmbe_processes(run_id)
    return f"ParMBE p={p}" if p is not None else run_id


def speedup_table(
    rows: Sequence[Mapping], datasets: Sequence[str], meta: Mapping | None = None
) -> pd.DataFrame:
    """The paper's Table I: sizes, #maximal bicliques, times, cuMBE speedups, geometric mean.

    Time columns ``<label> [s]`` hold the median algo seconds or the status text
    of a non-ok run; ``<label> min [s]`` / ``max [s]`` keep the spread.  Speedup
    columns ``cuMBE vs <label>`` are t(baseline) / t(cuMBE) where both are ok,
    else NaN.  The last line is the geometric mean of each speedup column over
    the datasets where both times exist (``df.attrs["geomean_n"]`` says how many).
    """
    rows = [r for r in rows]
    meta_ = _meta_for(rows, meta)
    idx = index_rows(rows)
    by_ds = _by_dataset(rows)
    procs = sorted({p for r in rows if (p := parmbe_processes(r["run_id"])) is not None})
    timed = [IMBEA, *[f"parmbe-p{p}" for p in procs], CUMBE]
    baselines = [rid for rid in timed if rid != CUMBE]
    labels = {rid: _label(rid) for rid in timed}

    records = []
    for ds in ordered_datasets(rows, datasets):
        m = meta_.get(ds, {})
        groups = _agreement(by_ds.get(ds, []))
        agree = True if len(groups) == 1 else (False if groups else None)
        if agree:
            (count, _), = groups
        elif groups:
            count = " / ".join(str(c) for c, _ in groups)
        else:
            count = None
        rec: dict[str, Any] = {
            "dataset": ds,
            "|U|": m.get("n_left"),
            "|V|": m.get("n_right"),
            "|E|": m.get("n_edges"),
            "density": _density(m.get("n_left"), m.get("n_right"), m.get("n_edges")),
            "maximal bicliques": count,
        }
        for rid in timed:
            row = idx.get((ds, rid))
            lo, hi = _spread(row)
            # a simulated GPU run has a real count but no GPU time to compare
            simulated = row is not None and row.get("simulated") and row.get("status") == "ok"
            rec[f"{labels[rid]} [s]"] = SIMULATED if simulated else _time_cell(row)
            rec[f"{labels[rid]} min [s]"] = lo
            rec[f"{labels[rid]} max [s]"] = hi
        t_cu = rec[f"{labels[CUMBE]} [s]"]
        for rid in baselines:
            t_b = rec[f"{labels[rid]} [s]"]
            rec[f"cuMBE vs {labels[rid]}"] = (
                t_b / t_cu if _is_time(t_b) and _is_time(t_cu) else math.nan
            )
        rec["agree"] = agree
        records.append(rec)

    speed_cols = [f"cuMBE vs {labels[rid]}" for rid in baselines]
    geo: dict[str, Any] = {"dataset": GEOMEAN}
    geomean_n: dict[str, int] = {}
    for c in speed_cols:
        vals = [r[c] for r in records if _is_time(r[c])]
        geo[c] = geometric_mean(vals)
        geomean_n[c] = len(vals)

    cols = ["dataset", "|U|", "|V|", "|E|", "density", "maximal bicliques"]
    for rid in timed:
        cols += [f"{labels[rid]} [s]", f"{labels[rid]} min [s]", f"{labels[rid]} max [s]"]
    cols += [*speed_cols, "agree"]
    df = pd.DataFrame.from_records([*records, geo], columns=cols)
    for c in ("|U|", "|V|", "|E|"):
        df[c] = df[c].astype("Int64")
    df.attrs["timed"] = [labels[rid] for rid in timed]
    df.attrs["speedups"] = speed_cols
    df.attrs["geomean_n"] = geomean_n
    df.attrs["n_datasets"] = len(records)
    return df


def _speedup_parts(df: pd.DataFrame):
    timed = df.attrs.get("timed") or [
        c[: -len(" [s]")] for c in df.columns
        if c.endswith(" [s]") and not c.endswith(("min [s]", "max [s]"))
    ]
    speed = df.attrs.get("speedups") or [c for c in df.columns if c.startswith("cuMBE vs ")]
    return timed, speed


def _geomean_note(df: pd.DataFrame, speed: Sequence[str]) -> str:
    n_all = int((df["dataset"] != GEOMEAN).sum())
    gn = df.attrs.get("geomean_n") or {}
    parts = [f"{c}: {gn.get(c, '?')} of {n_all}" for c in speed]
    return "Geometric mean over the datasets where both times exist (" + "; ".join(parts) + ")."


def speedup_markdown(df: pd.DataFrame) -> str:
    timed, speed = _speedup_parts(df)
    header = ["dataset", "|U|", "|V|", "|E|", "density", "#MB",
              *[f"{t} (s)" for t in timed], *speed]
    body = []
    for _, r in df.iterrows():
        if r["dataset"] == GEOMEAN:
            body.append([f"*{GEOMEAN}*", "", "", "", "", "", *["" for _ in timed],
                         *[fmt_speedup(r[c]) for c in speed]])
            continue
        bad = r["agree"] is False
        count = (f"{r['maximal bicliques']} **{MISMATCH}**" if bad
                 else fmt_int(r["maximal bicliques"]))
        body.append(
            [f"**{r['dataset']}**" if bad else r["dataset"], fmt_int(r["|U|"]),
             fmt_int(r["|V|"]), fmt_int(r["|E|"]), fmt_density(r["density"]), count,
             *[fmt_seconds(r[f"{t} [s]"]) for t in timed],
             *[fmt_speedup(r[c]) for c in speed]]
        )
    out = ["# Performance of the MBE engines (paper Table I)", ""]
    n_bad = int(df["agree"].apply(lambda a: a is False).sum())
    if n_bad:
        out += [f"**{MISMATCH}: the engines disagree on the number of maximal bicliques of "
                f"{n_bad} dataset(s); their times are not comparable. The pipeline fails on "
                f"this.**", ""]
    out += [
        "Times: median algorithm seconds over the repeats (spread in speedup.csv). "
        "Speedup: t(baseline) / t(cuMBE). #MB: number of maximal bicliques. "
        "Density: 2|E| / (|U| |V|). " + _geomean_note(df, speed),
        "",
    ]
    right = set(range(1, len(header)))
    return "\n".join(out) + "\n" + _md_table(header, body, right)


_TEX_ESCAPES = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "×": r"$\times$", "–": "--", "…": r"\ldots{}", "|": r"$|$", "<": r"$<$", ">": r"$>$",
}


def tex_escape(text: Any) -> str:
    s = "" if text is None else str(text)
    return "".join(_TEX_ESCAPES.get(ch, ch) for ch in s)


def _tex_time(x: Any) -> str:
    if _is_num(x):
        return fmt_seconds(x)
    s = str(x)
    # a table cell has no room for an error message: the status word is enough
    return s.split(":")[0].split(" (")[0] if not s.startswith("timeout") else s


def speedup_latex(df: pd.DataFrame) -> str:
    """A plain ``tabular`` (no booktabs) for ``\\input``; names and texts escaped."""
    timed, speed = _speedup_parts(df)
    header = ["Dataset", "$|U|$", "$|V|$", "$|E|$", "Density", "\\#MB",
              *[tex_escape(f"{t} (s)") for t in timed],
              *[tex_escape(c.replace("cuMBE vs ", "vs. ")) for c in speed]]
    lines = [
        "% generated by mbebench.tables; times: median algorithm seconds; "
        "speedup: t(baseline) / t(cuMBE)",
        "\\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
        "\\hline",
        " & ".join(header) + " \\\\",
        "\\hline",
    ]
    geo_line = None
    for _, r in df.iterrows():
        if r["dataset"] == GEOMEAN:
            cells = ["\\emph{Geo.\\ mean}", *[""] * (5 + len(timed)),
                     *[tex_escape(fmt_speedup(r[c])) for c in speed]]
            geo_line = " & ".join(cells) + " \\\\"
            continue
        bad = r["agree"] is False
        count = (tex_escape(str(r["maximal bicliques"])) + " (mismatch)" if bad
                 else tex_escape(fmt_int(r["maximal bicliques"])).replace(",", "{,}"))
        name = tex_escape(r["dataset"])
        cells = [
            f"\\textbf{{{name}}}$^\\dagger$" if bad else name,
            *[tex_escape(fmt_int(r[c])).replace(",", "{,}") for c in ("|U|", "|V|", "|E|")],
            tex_escape(fmt_density(r["density"])),
            count,
            *[tex_escape(_tex_time(r[f"{t} [s]"])) for t in timed],
            *[tex_escape(fmt_speedup(r[c])) for c in speed],
        ]
        lines.append(" & ".join(cells) + " \\\\")
    lines.append("\\hline")
    if geo_line:
        lines += [geo_line, "\\hline"]
    if df["agree"].apply(lambda a: a is False).any():
        lines.append(
            f"\\multicolumn{{{len(header)}}}{{l}}{{$^\\dagger$ MISMATCH: the engines "
            "disagree on the number of maximal bicliques.} \\\\"
        )
    lines.append("\\end{tabular}")
    return "\n".join(lines) + "\n"


def write_speedup(df: pd.DataFrame, csv_path, md_path, tex_path) -> None:
    atomic.write_text(csv_path, df.to_csv(index=False))
    atomic.write_text(md_path, speedup_markdown(df))
    atomic.write_text(tex_path, speedup_latex(df))


# --------------------------------------------------------------------------- CLI hook


def write_all(
    rows: Sequence[Mapping],
    datasets: Sequence[str],
    out_dir: str | os.PathLike,
    meta: Mapping | None = None,
) -> list[Path]:
    """Write summary.{csv,md} and speedup.{csv,md,tex}; then raise on a count mismatch."""
    rows = list(rows)
    out = Path(out_dir)
    paths = [out / n for n in ("summary.csv", "summary.md", "speedup.csv", "speedup.md",
                               "speedup.tex")]
    write_summary(summary_table(rows, datasets, meta), paths[0], paths[1])
    write_speedup(speedup_table(rows, datasets, meta), paths[2], paths[3], paths[4])
    check_agreement(rows)
    return paths


__all__ = [
    "CountMismatchError", "check_agreement", "mismatches", "summary_table", "write_summary",
    "speedup_table", "write_speedup", "write_all", "geometric_mean", "tex_escape",
    "fmt_seconds", "fmt_speedup",
]
