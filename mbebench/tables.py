"""Result rows -> the summary table and the paper's Table I (speedups).

``write_all`` is what ``python -m mbebench tables`` calls: it writes every
table, a count mismatch flagged loudly in the Markdown, and does not fail on
it; ``python -m mbebench check`` (the ``check_counts`` rule) fails instead, so
the tables, outputs of another rule, stay on disk as the evidence.

Columns are configurations (:func:`mbebench.rows.configs`: an engine with one
set of parameters), named by the rows' labels; a parameter sweep adds columns
with no code here.  Table I's reference is chosen by data (:mod:`mbebench.paper`).
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from mbebench import atomic, paper
from mbebench.environment import describe
from mbebench.rows import (
    Config,
    by_config,
    config_key,
    configs,
    graph_meta,
    ordered_datasets,
    status_text,
)
from mbebench.rows import unavailable as unavailable_in

MISMATCH = "MISMATCH"
NOT_RUN = "not run"
GEOMEAN = "geometric mean"


class CountMismatchError(RuntimeError):
    """Two ok runs of one dataset disagree on the count or the fingerprint."""


class NotAllDatasetsRan(RuntimeError):
    """Some datasets are unavailable (their download or convert failed)."""


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
    """Sizes per dataset: the CSR metadata (``meta``, known even when no run succeeded),
    else the rows'."""
    out = graph_meta(rows)
    for ds, m in (meta or {}).items():
        out[ds] = {k: int(m[k]) for k in ("n_left", "n_right", "n_edges")}
    return out


def _unavailable(rows, unavailable: Mapping | None) -> dict[str, str]:
    """dataset -> reason, from the rows and from the convert step's statuses."""
    out = unavailable_in(rows)
    out.update((ds, why) for ds, why in (unavailable or {}).items() if ds not in out)
    return out


def _int_column(df: pd.DataFrame, col: str) -> None:
    """Whole numbers stay whole in the CSV (9, not 9.0); a column holding text (a
    mismatch's "3 / 4") stays as it is."""
    vals = [v for v in df[col] if not _missing(v)]
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer()
           for v in vals):
        df[col] = pd.array([None if _missing(v) else int(v) for v in df[col]], dtype="Int64")


def _missing(x: Any) -> bool:
    return x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x))


def _agreement(rows_of_ds: Iterable[Mapping]) -> dict[tuple[int, str | None], list[str]]:
    """(count, fingerprint or None) -> labels, over the ok rows (instrumented ones included)."""
    order = {c.key: i for i, c in enumerate(configs(rows_of_ds))}
    groups: dict[tuple[int, str | None], list[str]] = {}
    for r in sorted(rows_of_ds, key=lambda r: order[config_key(r)]):
        if r.get("status") == "ok":
            fp = str(r["fingerprint"]).lower() if r.get("fingerprint") else None
            groups.setdefault((int(r["count"]), fp), []).append(r.get("label") or r["run_id"])
    return groups


def _agrees(groups: Mapping[tuple[int, str | None], list[str]]) -> bool | None:
    """Same count everywhere and one fingerprint among the runs that give one; None: no ok run."""
    if not groups:
        return None
    counts = {c for c, _ in groups}
    fps = {f for _, f in groups if f is not None}
    return len(counts) == 1 and len(fps) <= 1


def _count_fp(groups) -> tuple[Any, Any]:
    """The summary's count and fingerprint cells."""
    if _agrees(groups):
        fps = {f for _, f in groups if f is not None}
        return next(iter(groups))[0], (fps.pop() if fps else None)
    if not groups:
        return None, None
    counts = list(dict.fromkeys(c for c, _ in groups))
    fps = list(dict.fromkeys(f or "–" for _, f in groups))
    return " / ".join(map(str, counts)), " / ".join(fps)


def _by_dataset(rows: Iterable[Mapping]) -> dict[str, list[Mapping]]:
    out: dict[str, list[Mapping]] = {}
    for r in rows:
        out.setdefault(r["dataset"], []).append(r)
    return out


def _describe_groups(groups: Mapping[tuple[int, str | None], list[str]]) -> str:
    return "; ".join(f"{', '.join(ids)} -> {c} ({fp or 'no fingerprint'})"
                     for (c, fp), ids in groups.items())


def mismatches(rows: Iterable[Mapping]) -> dict[str, str]:
    """dataset -> one line saying which runs gave which count/fingerprint."""
    out = {}
    for ds, rs in _by_dataset(rows).items():
        groups = _agreement(rs)
        if _agrees(groups) is False:
            out[ds] = _describe_groups(groups)
    return out


def check_all(rows: Iterable[Mapping], unavailable: Mapping[str, str] | None = None) -> None:
    """The pipeline's final check: raise when ok runs of a dataset disagree
    (CountMismatchError) or when datasets are unavailable (NotAllDatasetsRan).

    The message has one line per dataset after a first line naming them all.
    """
    rows = list(rows)
    unav = _unavailable(rows, unavailable)
    lines = []
    if unav:
        lines.append(f"{len(unav)} dataset(s) unavailable, left out of the tables (the next run "
                     f"tries them again): {', '.join(unav)}")
        lines += [f"{ds}: unavailable: {why}" for ds, why in unav.items()]
    try:
        check_agreement(rows)
    except CountMismatchError as e:
        raise CountMismatchError("\n".join([str(e), *lines])) from None
    if lines:
        raise NotAllDatasetsRan("\n".join(lines))


def check_agreement(rows: Iterable[Mapping]) -> None:
    """Raise CountMismatchError when ok runs of a dataset disagree.

    The first line names the datasets (the CLI prints only that line); then one
    line per dataset: which runs gave which count (fingerprint).
    """
    bad = mismatches(list(rows))
    if bad:
        lines = [
            f"count/fingerprint mismatch in {len(bad)} dataset(s): {', '.join(bad)}"
            " (see the tables' MISMATCH marks)"
        ]
        lines += [f"{ds}: {text}" for ds, text in bad.items()]
        raise CountMismatchError("\n".join(lines))


def agreement_report(rows: Iterable[Mapping], unavailable: Mapping[str, str] | None = None) -> str:
    """One line per dataset: the count all ok runs agree on, who said what, or why the
    dataset is unavailable."""
    rows = list(rows)
    unav = _unavailable(rows, unavailable)
    lines = []
    for ds, rs in _by_dataset(rows).items():
        groups = _agreement(rs)
        agree = _agrees(groups)
        if ds in unav:
            lines.append(f"{ds}: unavailable: {unav[ds]}")
        elif agree is None:
            lines.append(f"{ds}: no ok run")
        elif agree:
            count, fp = _count_fp(groups)
            n = sum(len(v) for v in groups.values())
            lines.append(f"{ds}: {n} ok runs agree: {count} ({fp or 'no fingerprint'})")
        else:
            lines.append(f"{ds}: {MISMATCH}: {_describe_groups(groups)}")
    with_rows = {r["dataset"] for r in rows}
    lines += [f"{ds}: unavailable: {why}" for ds, why in unav.items() if ds not in with_rows]
    return "\n".join(lines) + "\n"


SIMULATED = "CUDA simulator (no GPU time)"
SIMULATOR_NOTE = "simulator"


def _simulated(row: Mapping | None) -> bool:
    return row is not None and bool(row.get("simulated")) and row.get("status") == "ok"


def _time_cell(row: Mapping | None) -> Any:
    """Median algo seconds of an ok row (a text saying so for a simulator's seconds,
    which are CPU time of the simulation, not the engine's); otherwise the status text."""
    if row is None:
        return NOT_RUN
    if row.get("status") == "ok":
        t = float(statistics.median(float(x) for x in row.get("algo_s") or []))
        return f"{fmt_seconds(t)} ({SIMULATOR_NOTE})" if _simulated(row) else t
    return status_text(row)


def _spread(row: Mapping | None) -> tuple[float, float]:
    if row is None or row.get("status") != "ok" or _simulated(row):
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
    rows: Sequence[Mapping], datasets: Sequence[str], meta: Mapping | None = None,
    unavailable: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One line per dataset: size, density, count, fingerprint, time per configuration, agreement.

    Time cells hold the median algo seconds (float) of an ok row, ``"<s> (simulator)"``
    for a run in a simulator, or the status text (``skipped: ...``, ``timeout (600 s)``,
    ``error: ...``, ``unavailable``, ``not run``).  ``agree`` is True/False, or None when
    the dataset has no ok run; ``unavailable`` holds why a dataset could not run.
    ``meta``: sizes from the CSR metadata; ``unavailable``: dataset -> reason, besides
    the rows' own.
    """
    rows = list(rows)
    meta_ = _meta_for(rows, meta)
    unav = _unavailable(rows, unavailable)
    cfgs = configs(rows)
    idx = by_config(rows)
    by_ds = _by_dataset(rows)
    labels = [c.label for c in cfgs]
    records = []
    for ds in ordered_datasets(rows, datasets):
        m = meta_.get(ds, {})
        groups = _agreement(by_ds.get(ds, []))
        agree = _agrees(groups)
        count, fp = _count_fp(groups)
        rec = {
            "dataset": ds,
            "|U|": m.get("n_left"),
            "|V|": m.get("n_right"),
            "|E|": m.get("n_edges"),
            "density": _density(m.get("n_left"), m.get("n_right"), m.get("n_edges")),
            "count": count,
            "fingerprint": fp,
        }
        for c in cfgs:
            rec[c.label] = _time_cell(idx.get((ds, c.key)))
        rec["agree"] = agree
        rec["mismatch"] = _describe_groups(groups) if agree is False else ""
        rec["unavailable"] = unav.get(ds, "")
        records.append(rec)
    cols = ["dataset", "|U|", "|V|", "|E|", "density", "count", "fingerprint", *labels,
            "agree", "mismatch", "unavailable"]
    df = pd.DataFrame.from_records(records, columns=cols)
    for c in ("|U|", "|V|", "|E|"):
        df[c] = df[c].astype("Int64")
    _int_column(df, "count")
    df.attrs["configs"] = labels
    df.attrs["untimed"] = [c.label for c in cfgs if not c.timed]
    df.attrs["simulated"] = sorted({c.label for c in cfgs for r in rows
                                    if config_key(r) == c.key and _simulated(r)})
    df.attrs["environments"] = environments(rows)
    return df


def environments(rows: Iterable[Mapping]) -> list[str]:
    """The distinct machines and software the rows ran on, one line each."""
    return list(dict.fromkeys(describe(r.get("env")) for r in rows if r.get("env")))


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
    labels = df.attrs.get("configs") or [
        c for c in df.columns
        if c not in ("dataset", "|U|", "|V|", "|E|", "density", "count", "fingerprint",
                     "agree", "mismatch", "unavailable")
    ]
    header = ["dataset", "|U|", "|V|", "|E|", "density", "count", "fingerprint",
              *[f"{lab} (s)" for lab in labels], "agree"]
    body = []
    for _, r in df.iterrows():
        bad = r["agree"] is False
        body.append(
            [f"**{r['dataset']}**" if bad else r["dataset"], fmt_int(r["|U|"]),
             fmt_int(r["|V|"]), fmt_int(r["|E|"]), fmt_density(r["density"]),
             fmt_int(r["count"]) if not bad else r["count"],
             "–" if _missing(r["fingerprint"]) else r["fingerprint"],
             *[fmt_seconds(r[lab]) for lab in labels],
             "unavailable" if r.get("unavailable") else _agree_text(r["agree"])]
        )
    out = ["# Summary of all runs", ""]
    bad_rows = df[df["agree"].apply(lambda a: a is False)]
    if len(bad_rows):
        out += [
            f"**{MISMATCH}: the engines disagree on the maximal bicliques of "
            f"{len(bad_rows)} dataset(s). The pipeline fails on this (rule check_counts).**",
            "",
        ]
        out += [f"- **{r['dataset']}**: " + r["mismatch"].replace("|", "\\|")
                for _, r in bad_rows.iterrows()]
        out.append("")
    out += _unavailable_lines(df)
    untimed = df.attrs.get("untimed") or []
    simulated = df.attrs.get("simulated") or []
    out += [
        "Times: median algorithm seconds over the repeats (no I/O, no JIT compile)."
        + (f" Instrumented builds ({', '.join(untimed)}) count for agreement, "
           "but their times are not the engines' times." if untimed else "")
        + (f" \"(simulator)\": {', '.join(simulated)} ran in the CUDA simulator on the CPU; "
           "its seconds are the simulation's, not GPU times." if simulated else ""),
        "Fingerprint: of the runs that compute one (a command-line engine may give only "
        "its count). Density: 2|E| / (|U| |V|).",
        "",
    ]
    envs = df.attrs.get("environments") or []
    tail = ["", *[f"Ran on: {e}." for e in envs]] if envs else []
    return "\n".join(out) + "\n" + _md_table(header, body, right=set(range(1, 6)) | {
        7 + i for i in range(len(labels))}) + "".join(line + "\n" for line in tail)


def _unavailable_lines(df: pd.DataFrame) -> list[str]:
    """The Markdown paragraph listing the unavailable datasets and why."""
    if "unavailable" not in df.columns:
        return []
    unav = [(r["dataset"], r["unavailable"]) for _, r in df.iterrows()
            if isinstance(r["unavailable"], str) and r["unavailable"]]
    if not unav:
        return []
    out = [f"**{len(unav)} dataset(s) unavailable** (download or convert failed; nothing ran "
           "on them, the next run tries them again):", ""]
    out += [f"- **{ds}**: " + why.replace("|", "\\|") for ds, why in unav]
    return out + [""]


def write_summary(df: pd.DataFrame, csv_path, md_path) -> None:
    atomic.write_text(csv_path, df.to_csv(index=False))
    atomic.write_text(md_path, summary_markdown(df))


# --------------------------------------------------------------------------- Table I


def _in_table_one(c: Config) -> bool:
    """Every engine's timed runs, but of the reference engine only its reference variant
    (the others are ablations: Fig. 7 and the summary show them)."""
    return c.timed and (c.engine != paper.REFERENCE["engine"]
                        or c.variant == paper.REFERENCE["variant"])


def speedup_table(
    rows: Sequence[Mapping], datasets: Sequence[str], meta: Mapping | None = None,
    unavailable: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The paper's Table I: sizes, #maximal bicliques, times, cuMBE speedups, geometric mean.

    Time columns ``<label> [s]`` hold the median algo seconds or the status text
    of a non-ok run; ``<label> min [s]`` / ``max [s]`` keep the spread.  The
    reference is the first configuration (in :func:`mbebench.rows.configs` order) matching
    :data:`mbebench.paper.REFERENCE`;
    speedup columns ``<reference> vs <label>`` are t(other) / t(reference) where
    both are ok, else NaN.  The last line is the geometric mean of each speedup
    column over the datasets where both times exist (``df.attrs["geomean_n"]``
    says how many).  A run in a simulator shows :data:`SIMULATED` and no spread;
    an unavailable dataset's cells say ``unavailable`` and it is listed with its
    reason (``df.attrs["unavailable"]``).
    """
    rows = [r for r in rows]
    meta_ = _meta_for(rows, meta)
    unav = _unavailable(rows, unavailable)
    idx = by_config(rows)
    by_ds = _by_dataset(rows)
    shown = [c for c in configs(rows) if _in_table_one(c)]
    ref = next((c for c in shown if c.engine == paper.REFERENCE["engine"]), None)
    if ref is None:  # Table I without its reference says so in a column of its own
        ref = Config(("", ""), paper.REFERENCE["engine"], paper.REFERENCE_LABEL,
                     paper.REFERENCE["variant"], {}, True)
        shown.append(ref)
    others = [c for c in shown if c is not ref]
    timed = shown

    records = []
    for ds in ordered_datasets(rows, datasets):
        m = meta_.get(ds, {})
        groups = _agreement(by_ds.get(ds, []))
        agree = _agrees(groups)
        count, _ = _count_fp(groups)
        rec: dict[str, Any] = {
            "dataset": ds,
            "|U|": m.get("n_left"),
            "|V|": m.get("n_right"),
            "|E|": m.get("n_edges"),
            "density": _density(m.get("n_left"), m.get("n_right"), m.get("n_edges")),
            "maximal bicliques": count,
        }
        for c in timed:
            row = idx.get((ds, c.key))
            lo, hi = _spread(row)
            # a simulated GPU run has a real count but no GPU time to compare
            rec[f"{c.label} [s]"] = SIMULATED if _simulated(row) else _time_cell(row)
            rec[f"{c.label} min [s]"] = lo
            rec[f"{c.label} max [s]"] = hi
        t_ref = rec[f"{ref.label} [s]"]
        for c in others:
            t_b = rec[f"{c.label} [s]"]
            rec[f"{ref.label} vs {c.label}"] = (
                t_b / t_ref if _is_time(t_b) and _is_time(t_ref) else math.nan
            )
        rec["agree"] = agree
        records.append(rec)

    speed_cols = [f"{ref.label} vs {c.label}" for c in others]
    geo: dict[str, Any] = {"dataset": GEOMEAN}
    geomean_n: dict[str, int] = {}
    for col in speed_cols:
        vals = [r[col] for r in records if _is_time(r[col])]
        geo[col] = geometric_mean(vals)
        geomean_n[col] = len(vals)

    cols = ["dataset", "|U|", "|V|", "|E|", "density", "maximal bicliques"]
    for c in timed:
        cols += [f"{c.label} [s]", f"{c.label} min [s]", f"{c.label} max [s]"]
    cols += [*speed_cols, "agree"]
    df = pd.DataFrame.from_records([*records, geo], columns=cols)
    for c in ("|U|", "|V|", "|E|"):
        df[c] = df[c].astype("Int64")
    _int_column(df, "maximal bicliques")
    df.attrs["unavailable"] = {ds: unav[ds] for ds in df["dataset"] if ds in unav}
    df.attrs["timed"] = [c.label for c in timed]
    df.attrs["speedups"] = speed_cols
    df.attrs["reference"] = ref.label
    df.attrs["geomean_n"] = geomean_n
    df.attrs["n_datasets"] = len(records)
    return df


def _speedup_parts(df: pd.DataFrame):
    timed = df.attrs.get("timed") or [
        c[: -len(" [s]")] for c in df.columns
        if c.endswith(" [s]") and not c.endswith(("min [s]", "max [s]"))
    ]
    speed = df.attrs.get("speedups") or [c for c in df.columns if " vs " in c]
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
    unav = df.attrs.get("unavailable") or {}
    if unav:
        out += ["Unavailable (download or convert failed, not run):", ""]
        out += [f"- {ds}: " + why.replace("|", "\\|") for ds, why in unav.items()]
        out.append("")
    out += [
        "Times: median algorithm seconds over the repeats (spread in speedup.csv). "
        f"Speedup: t(other) / t({df.attrs.get('reference', paper.REFERENCE_LABEL)}). "
        "#MB: number of maximal bicliques. "
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
              *[tex_escape("vs. " + c.split(" vs ", 1)[1]) for c in speed]]
    lines = [
        "% generated by mbebench.tables; times: median algorithm seconds; "
        f"speedup: t(other) / t({df.attrs.get('reference', paper.REFERENCE_LABEL)})",
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
    unav = df.attrs.get("unavailable") or {}
    if unav:
        lines.append(f"\\multicolumn{{{len(header)}}}{{l}}{{Unavailable (not run): "
                     f"{tex_escape(', '.join(unav))}.}} \\\\")
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
    unavailable: Mapping[str, str] | None = None,
) -> list[Path]:
    """Write summary.{csv,md} and speedup.{csv,md,tex}, mismatches and unavailable datasets
    marked (no exception: :func:`check_all` is the separate check)."""
    rows = list(rows)
    out = Path(out_dir)
    paths = [out / n for n in ("summary.csv", "summary.md", "speedup.csv", "speedup.md",
                               "speedup.tex")]
    write_summary(summary_table(rows, datasets, meta, unavailable), paths[0], paths[1])
    write_speedup(speedup_table(rows, datasets, meta, unavailable), paths[2], paths[3], paths[4])
    return paths


__all__ = [
    "CountMismatchError", "NotAllDatasetsRan", "agreement_report", "check_agreement",
    "check_all", "mismatches", "summary_table",
    "write_summary",
    "speedup_table", "write_speedup", "write_all", "geometric_mean", "tex_escape",
    "fmt_seconds", "fmt_speedup",
]
