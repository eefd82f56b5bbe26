"""The paper's Table I (``results/tables/speedup.{csv,md,tex}``): sizes, #maximal
bicliques, each engine's time and the reference's speedup over it.

The reference is the first configuration (in :func:`mbebench.rows.configs` order)
matching :data:`mbebench.paper.REFERENCE`; the reference engine's other variants are
ablations (Fig. 7 and the summary show them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from mbebench import atomic, paper
from mbebench.report import agreement, fmt
from mbebench.report import select as sel
from mbebench.report.summary import DENSITY_HEADER, skipped_note, time_cell

GEOMEAN = "geometric mean"
SIMULATED = "CUDA simulator (no GPU time)"


def speedup_table(
    rows: Sequence[Mapping], datasets: Sequence[str], meta: Mapping | None = None,
    unavailable: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Table I as a frame.

    Time columns ``<label> [s]`` hold the median algo seconds or the status text
    of a non-ok run; ``<label> min [s]`` / ``max [s]`` keep the spread.  Speedup
    columns ``<reference> vs <label>`` are t(other) / t(reference) where both are
    ok, else NaN.  The last line is the geometric mean of each speedup column over
    the datasets where both times exist (``df.attrs["geomean_n"]`` says how many).
    A run in a simulator shows :data:`SIMULATED` and no spread; an unavailable
    dataset's cells say ``unavailable`` and it is listed with its reason
    (``df.attrs["unavailable"]``).  |U|, |V|: as in the summary (paper orientation).
    """
    rows = list(rows)
    size = sel.sizes(rows, meta)
    unav = sel.unavailable(rows, unavailable)
    idx = sel.by_config(rows)
    by_ds = sel.by_dataset(rows)
    shown, ref = _shown_and_reference(rows)
    others = [c for c in shown if c is not ref]

    records = []
    marks: dict[tuple[str, str], str] = {}  # (dataset, time or speedup column) -> marks
    marked_rows: list = []
    for ds in sel.ordered_datasets(rows, datasets):
        rec = _dataset_record(ds, size.get(ds, {}), by_ds.get(ds, []), idx, shown, marks,
                              marked_rows)
        _add_speedups(rec, ds, ref, others, marks)
        records.append(rec)

    speed_cols = [f"{ref.label} vs {c.label}" for c in others]
    geo, geomean_n = _geomean_record(records, speed_cols, marks)
    df = _frame(records, geo, shown, speed_cols)
    df.attrs["unavailable"] = {ds: unav[ds] for ds in df["dataset"] if ds in unav}
    df.attrs["timed"] = [c.label for c in shown]
    df.attrs["speedups"] = speed_cols
    df.attrs["reference"] = ref.label
    df.attrs["geomean_n"] = geomean_n
    df.attrs["n_datasets"] = len(records)
    df.attrs["marks"] = {k: v for k, v in marks.items() if v}
    df.attrs["mark_notes"] = sel.mark_notes(marked_rows)
    df.attrs["mismatch"] = {r["dataset"]: r["disagree on"] for r in records if r["disagree on"]}
    df.attrs["skipped_everywhere"] = sel.skipped_everywhere(
        {c.label: [idx.get((r["dataset"], c.key)) for r in records
                  if r["dataset"] not in unav] for c in shown})
    return df


def _shown_and_reference(rows: Sequence[Mapping]) -> tuple[list, Any]:
    """The configurations Table I shows and its reference among them."""
    shown = [c for c in sel.configs(rows) if sel.in_table_one(c)]
    ref = next((c for c in shown if c.engine == sel.REF_ENGINE), None)
    if ref is None:  # Table I without its reference says so in a column of its own
        ref = sel.Config(("", ""), sel.REF_ENGINE, paper.REFERENCE_LABEL, sel.REF_VARIANT, {},
                         True)
        shown.append(ref)
    return shown, ref


def _dataset_record(
    ds: str, m: Mapping, ds_rows: Sequence[Mapping], idx: Mapping, shown: Sequence,
    marks: dict[tuple[str, str], str], marked_rows: list,
) -> dict[str, Any]:
    """One dataset's line without its speedups; its marked times go into ``marks`` and
    their rows into ``marked_rows`` (the notes under the table name them)."""
    g = agreement.groups(ds_rows)
    count, _ = agreement.count_fp(g)
    rec: dict[str, Any] = {
        "dataset": ds, "|U|": m.get("U"), "|V|": m.get("V"), "|E|": m.get("E"),
        "density": sel.density(m.get("U"), m.get("V"), m.get("E")),
        "maximal bicliques": count,
    }
    for c in shown:
        row = idx.get((ds, c.key))
        lo, hi = sel.spread(row)
        # a simulated GPU run has a real count but no GPU time to compare
        rec[f"{c.label} [s]"] = SIMULATED if sel.simulated(row) else time_cell(row)
        rec[f"{c.label} min [s]"] = lo
        rec[f"{c.label} max [s]"] = hi
        rec[f"{c.label} shards"] = sel.shard_count(row)
        rec[f"{c.label} GPUs"] = sel.device_count(row)
        if sel.is_time(rec[f"{c.label} [s]"]) and sel.time_marks(row):
            marks[ds, c.label] = sel.time_marks(row)
            marked_rows.append(row)
    rec["agree"] = agreement.agrees(g)
    rec["disagree on"] = agreement.disagreement(g) or ""
    return rec


def _add_speedups(rec: dict[str, Any], ds: str, ref: Any, others: Sequence,
                  marks: dict[tuple[str, str], str]) -> None:
    t_ref = rec[f"{ref.label} [s]"]
    for c in others:
        t_b = rec[f"{c.label} [s]"]
        col = f"{ref.label} vs {c.label}"
        both = sel.is_time(t_b) and sel.is_time(t_ref)
        rec[col] = t_b / t_ref if both else math.nan
        if both:  # a ratio of a marked time is as marked as the time
            marks[ds, col] = sel.union_marks(marks.get((ds, ref.label), ""),
                                    marks.get((ds, c.label), ""))


def _geomean_record(records: Sequence[Mapping], speed_cols: Sequence[str],
                    marks: dict[tuple[str, str], str]) -> tuple[dict[str, Any], dict[str, int]]:
    """The last line and, per speedup column, how many datasets it is the mean of."""
    geo: dict[str, Any] = {"dataset": GEOMEAN}
    geomean_n: dict[str, int] = {}
    for col in speed_cols:
        vals = [r[col] for r in records if sel.is_time(r[col])]
        geo[col] = sel.geometric_mean(vals)
        geomean_n[col] = len(vals)
        marks[GEOMEAN, col] = sel.union_marks(*(marks.get((r["dataset"], col), "")
                                                for r in records))
    return geo, geomean_n


def _frame(records: Sequence[Mapping], geo: Mapping, shown: Sequence,
           speed_cols: Sequence[str]) -> pd.DataFrame:
    cols = ["dataset", "|U|", "|V|", "|E|", "density", "maximal bicliques"]
    for c in shown:
        cols += [f"{c.label} [s]", f"{c.label} min [s]", f"{c.label} max [s]"]
    cols += [*speed_cols, "agree"]
    # appended, and only where some time is sharded or on several GPUs: the CSV of an
    # ordinary run keeps its columns
    for what in ("shards", "GPUs"):
        cols += [f"{c.label} {what}" for c in shown
                 if any(r[f"{c.label} {what}"] > 1 for r in records)]
    cols.append("disagree on")
    df = pd.DataFrame.from_records([*records, geo], columns=cols)
    for c in ("|U|", "|V|", "|E|", *[c for c in cols if c.endswith((" shards", " GPUs"))]):
        df[c] = df[c].astype("Int64")
    # the counts as given: from_records makes a column with a gap float64, exact only to 2**53
    df["maximal bicliques"] = pd.Series([r["maximal bicliques"] for r in records] + [None],
                                        index=df.index, dtype=object)
    fmt.int_column(df, "maximal bicliques")
    return df


def _columns(df: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The time and speedup columns the Markdown and LaTeX show: a configuration skipped
    on every dataset for one reason is a line under the table, not a column, and so is
    every speedup over it (all of them when it is the reference)."""
    gone = df.attrs.get("skipped_everywhere") or {}
    ref = df.attrs.get("reference")
    timed = [t for t in df.attrs["timed"] if t not in gone]
    speed = [] if ref in gone else [c for c in df.attrs["speedups"]
                                    if c.split(" vs ", 1)[1] not in gone]
    return timed, speed


def _skipped_note(df: pd.DataFrame) -> str:
    gone = df.attrs.get("skipped_everywhere") or {}
    if not gone:
        return ""
    ref = df.attrs.get("reference")
    return skipped_note(gone) + (f" No speedup over {ref} exists." if ref in gone else "")


def _mismatch_text(df: pd.DataFrame) -> str:
    kinds = df.attrs.get("mismatch") or {}
    return (f"{fmt.MISMATCH}: {agreement.disagreement_sentence(kinds)}; their times are not "
            "comparable.") if kinds else ""


def _geomean_note(df: pd.DataFrame, speed: Sequence[str]) -> str:
    if not speed:
        return ""
    n_all = int((df["dataset"] != GEOMEAN).sum())
    gn = df.attrs.get("geomean_n") or {}
    parts = [f"{c}: {gn.get(c, '?')} of {n_all}" for c in speed]
    return "Geometric mean over the datasets where both times exist (" + "; ".join(parts) + ")."


def _cell(df: pd.DataFrame, ds: str, col: str, text: str) -> str:
    return sel.marked(text, (df.attrs.get("marks") or {}).get((ds, col), ""))


def speedup_markdown(df: pd.DataFrame) -> str:
    timed, speed = _columns(df)
    header = ["dataset", "|U|", "|V|", "|E|", DENSITY_HEADER, "#MB",
              *[f"{t} (s)" for t in timed], *speed]
    body = []
    for _, r in df.iterrows():
        ds = r["dataset"]
        speeds = [_cell(df, ds, c, fmt.speedup(r[c])) for c in speed]
        if ds == GEOMEAN:  # without a speedup column, no mean of one
            if speed:
                body.append([f"*{GEOMEAN}*", "", "", "", "", "", *["" for _ in timed], *speeds])
            continue
        bad = r["agree"] is False
        count = (f"{r['maximal bicliques']} **{fmt.MISMATCH}**" if bad
                 else fmt.integer(r["maximal bicliques"]))
        body.append([f"**{ds}**" if bad else ds, fmt.integer(r["|U|"]),
                     fmt.integer(r["|V|"]), fmt.integer(r["|E|"]), fmt.density(r["density"]),
                     count, *[_cell(df, ds, t, fmt.seconds(r[f"{t} [s]"])) for t in timed],
                     *speeds])
    out = ["# Performance of the MBE engines (paper Table I)", ""]
    if df.attrs.get("mismatch"):
        out += [f"**{_mismatch_text(df)} The pipeline fails on this.**", ""]
    unav = df.attrs.get("unavailable") or {}
    if unav:
        out += ["Unavailable (download or convert failed, not run):", ""]
        out += [f"- {ds}: " + sel.without_paths(why).replace("|", "\\|")
                for ds, why in unav.items()]
        out.append("")
    out += [
        "Times: median algorithm seconds over the repeats (spread in speedup.csv). "
        f"Speedup: t(other) / t({df.attrs.get('reference', paper.REFERENCE_LABEL)}). "
        "#MB: number of maximal bicliques. "
        "Density: 2|E| / (|U| |V|), the paper's definition. |U|, |V|: the paper's "
        "orientation for its datasets." + (" " + _geomean_note(df, speed)).rstrip(),
        "",
    ]
    skipped = _skipped_note(df)
    if skipped:
        out += [skipped, ""]
    notes = df.attrs.get("mark_notes") or []
    tail = "".join(f"\n{n}\n" for n in notes)
    return ("\n".join(out) + "\n" + fmt.markdown(header, body, set(range(1, len(header))))
            + tail)


def _tex_time(x: Any) -> str:
    if fmt.is_num(x):
        return fmt.seconds(x)
    s = str(x)
    # a table cell has no room for an error message: the status word is enough
    return s.split(":")[0].split(" (")[0] if not s.startswith("timeout") else s


def speedup_latex(df: pd.DataFrame) -> str:
    """A plain ``tabular`` (no booktabs) for ``\\input``; names and texts escaped."""
    timed, speed = _columns(df)
    header = ["Dataset", "$|U|$", "$|V|$", "$|E|$", "Density", "\\#MB",
              *fmt.tex_escape([f"{t} (s)" for t in timed]),
              *fmt.tex_escape(["vs. " + c.split(" vs ", 1)[1] for c in speed])]
    body, bold, geo = [], [], None
    for _, r in df.iterrows():
        ds = r["dataset"]
        speeds = [_cell(df, ds, c, fmt.speedup(r[c])) for c in speed]
        if ds == GEOMEAN:
            geo = ["Geo. mean", *[""] * (5 + len(timed)), *speeds] if speed else None
            continue
        bad = r["agree"] is False
        if bad:
            bold.append(len(body))
        body.append([ds, *[fmt.integer(r[c]) for c in ("|U|", "|V|", "|E|")],
                     fmt.density(r["density"]),
                     f"{r['maximal bicliques']} (mismatch)" if bad
                     else fmt.integer(r["maximal bicliques"]),
                     *[_cell(df, ds, t, _tex_time(r[f"{t} [s]"])) for t in timed],
                     *speeds])
    footer = [*(df.attrs.get("mark_notes") or [])]
    if bold:
        footer.append(_mismatch_text(df))
    unav = df.attrs.get("unavailable") or {}
    if unav:
        footer.append(f"Unavailable (not run): {', '.join(unav)}.")
    if _skipped_note(df):
        footer.append(_skipped_note(df))
    reference = df.attrs.get("reference", paper.REFERENCE_LABEL)
    return fmt.latex(header, [*body, *([geo] if geo is not None else [])], bold=bold,
                     total=geo is not None,
                     footer=footer, comment="generated by mbebench.report.speedup; times: "
                     f"median algorithm seconds; speedup: t(other) / t({reference})")


def write_speedup(df: pd.DataFrame, csv_path, md_path, tex_path) -> None:
    atomic.write_text(csv_path, df.to_csv(index=False))
    atomic.write_text(md_path, speedup_markdown(df))
    atomic.write_text(tex_path, speedup_latex(df))
