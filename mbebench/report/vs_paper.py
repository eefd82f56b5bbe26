"""Our results beside the paper's (``results/tables/vs_paper.{csv,md}``).

Per paper dataset that this run holds, in the paper's order: its sizes and ours (both
in the paper's orientation), and Table I's count and times beside ours with the ratio
where the paper's copy publishes them (:data:`mbebench.paper.TABLE_I`).  Then every
speedup the paper's text publishes (:data:`mbebench.paper.PUBLISHED`) beside the same
quantity from our rows.  Simulated runs have no GPU time and count for nothing here.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from mbebench import atomic, paper
from mbebench.report import agreement, fmt
from mbebench.report import select as sel

NOT_PUBLISHED = "not in our copy"


def _time(row: Mapping | None) -> float | None:
    return None if row is None or sel.simulated(row) else sel.median_s(row)


def _parmbe_row(rows, ds: str) -> Mapping | None:
    """The ok timed run of the worker engine with the most workers (the paper's ParMBE ran
    on every core of its machines)."""
    cands = [r for r in sel.worker_rows(rows, ds, timed=True) if _time(r) is not None]
    return max(cands, key=lambda r: r["params"][sel.WORKER_PARAM], default=None)


def _one(rows, ds: str, **fields) -> Mapping | None:
    cands = sel.in_table_order(rows, sel.select(rows, dataset=ds, timed=True, ok=True,
                                                **fields))
    return next((r for r in cands if _time(r) is not None), None)


def _pair(rows, ds: str, what: str) -> tuple[Mapping | None, Mapping | None]:
    """The reference's timed row and the other row one of the paper's ratios compares."""
    other = {"parmbe": lambda: _parmbe_row(rows, ds),
             "serial": lambda: (_one(rows, ds, **paper.PAPER_SERIAL)
                                or _one(rows, ds, **paper.SERIAL)),
             "noWS": lambda: _one(rows, ds, engine=sel.REF_ENGINE,
                                  variant=paper.NO_WORK_STEALING)}[what]()
    return sel.reference_timed(rows, ds), other


def ours(rows, ds: str, what: str) -> float | None:
    """One of the paper's ratios on one dataset, from our rows (None if a time is missing)."""
    ref, other = (_time(r) for r in _pair(rows, ds, what))
    return other / ref if other and ref else None


def _marks(*rows_: Mapping | None) -> str:
    return sel.union_marks(*(sel.time_marks(r) for r in rows_ if _time(r) is not None))


def _ratio(a: Any, b: Any) -> float:
    return a / b if fmt.is_num(a) and fmt.is_num(b) and b else math.nan


def datasets_table(rows: Sequence[Mapping], meta: Mapping | None = None) -> pd.DataFrame:
    rows = list(rows)
    size = sel.sizes(rows, meta)
    by_ds = sel.by_dataset(rows)
    recs = []
    used: list[Mapping] = []
    for ds, (pu, pv, pe) in paper.DATASETS.items():
        if ds not in size and ds not in by_ds:
            continue
        m, pub = size.get(ds, {}), paper.TABLE_I.get(ds, {})
        g = agreement.groups(by_ds.get(ds, []))
        count, _ = agreement.count_fp(g)
        cu = sel.reference_timed(rows, ds)
        t_cu = _time(cu)
        par = _parmbe_row(rows, ds)
        used += [r for r in (cu, par) if _time(r) is not None and sel.time_marks(r)]
        t_par = _time(par)
        p_speed = _ratio(pub.get("parmbe_s"), pub.get("cumbe_s"))
        o_speed = _ratio(t_par, t_cu)
        recs.append({
            "dataset": ds, "paper |U|": pu, "paper |V|": pv, "paper |E|": pe,
            "|U|": m.get("U"), "|V|": m.get("V"), "|E|": m.get("E"),
            "|E| ratio": _ratio(m.get("E"), pe),
            "paper #MB": pub.get("count"), "#MB": count,
            "#MB ratio": _ratio(count, pub.get("count")),
            "paper cuMBE [s]": pub.get("cumbe_s"), "cuMBE [s]": t_cu,
            "cuMBE ratio": _ratio(t_cu, pub.get("cumbe_s")),
            "paper ParMBE [s]": pub.get("parmbe_s"), "ParMBE [s]": t_par,
            "ParMBE processes": par["params"][sel.WORKER_PARAM] if par else None,
            "ParMBE ratio": _ratio(t_par, pub.get("parmbe_s")),
            "paper speedup": p_speed, "speedup": o_speed, "speedup ratio": _ratio(o_speed, p_speed),
            "cuMBE marks": _marks(cu), "ParMBE marks": _marks(par),
            "disagree on": agreement.disagreement(g) or "",
        })
    df = pd.DataFrame.from_records(recs, columns=[
        "dataset", "paper |U|", "paper |V|", "paper |E|", "|U|", "|V|", "|E|", "|E| ratio",
        "paper #MB", "#MB", "#MB ratio", "paper cuMBE [s]", "cuMBE [s]", "cuMBE ratio",
        "paper ParMBE [s]", "ParMBE [s]", "ParMBE processes", "ParMBE ratio", "paper speedup",
        "speedup", "speedup ratio", "cuMBE marks", "ParMBE marks", "disagree on"])
    df.attrs["mark_notes"] = sel.mark_notes(used)
    for c in ("paper |U|", "paper |V|", "paper |E|", "|U|", "|V|", "|E|", "ParMBE processes"):
        df[c] = df[c].astype("Int64")
    return df


def _which(spec: Mapping) -> tuple[str, ...]:
    d = spec["datasets"]
    if d is None:
        return tuple(paper.DATASETS)
    if d == "large":
        return paper.LARGE
    if d == "small":
        return tuple(ds for ds in paper.DATASETS if ds not in paper.LARGE)
    return tuple(d)


def published_table(rows: Sequence[Mapping]) -> pd.DataFrame:
    """Each speedup the paper publishes beside ours over the same datasets (those we ran)."""
    rows = list(rows)
    recs = []
    used: list[Mapping] = []
    for spec in paper.PUBLISHED:
        vals = {ds: ours(rows, ds, spec["ours"]) for ds in _which(spec)}
        got = [v for v in vals.values() if v is not None]
        marked = {}
        for ds, v in vals.items():
            pair = _pair(rows, ds, spec["ours"]) if v is not None else ()
            if _marks(*pair):
                marked[ds] = _marks(*pair)
                used += [r for r in pair if sel.time_marks(r)]
        stat = sel.geometric_mean if spec["stat"] == "geometric mean" else statistics.fmean
        mine = stat(got) if got else math.nan
        recs.append({"figure": spec["figure"], "source": spec["source"], "paper": spec["paper"],
                     "ours": mine, "ratio": _ratio(mine, spec["paper"]),
                     "datasets": len(got), "of": len(vals),
                     "over": ", ".join(ds for ds, v in vals.items() if v is not None),
                     "marks": sel.union_marks(*marked.values()),
                     "marked": ", ".join(f"{ds} {m}" for ds, m in marked.items())})
    df = pd.DataFrame.from_records(recs, columns=["figure", "source", "paper", "ours", "ratio",
                                                  "datasets", "of", "over", "marks", "marked"])
    df.attrs["mark_notes"] = sel.mark_notes(list({id(r): r for r in used}.values()))
    return df


def _cell(x: Any, show) -> str:
    return NOT_PUBLISHED if fmt.missing(x) else show(x)


def _count_cell(r) -> str:
    """Our #MB, and what the engines disagree on where they do (the count or only the
    fingerprint: the number is then one, the bicliques are not)."""
    kind = r["disagree on"]
    return fmt.integer(r["#MB"]) + (f" {fmt.MISMATCH} ({kind})" if kind else "")


def vs_paper_markdown(sizes_df: pd.DataFrame, pub: pd.DataFrame) -> str:
    out = ["# Beside the paper", "",
           "The cuMBE paper (Hsieh et al.) ran cuMBE on an RTX 3090 and ParMBE on 64- and "
           "96-core CPUs; ours ran where the summary says. Ratios are ours / the paper's. "
           "Sizes: both in the paper's orientation. Our ParMBE: the run with the most "
           "processes (p in its column).", ""]
    if not len(sizes_df):
        out += ["None of the paper's datasets is in this run.", ""]
    else:
        header = ["dataset", "|U| paper", "|U|", "|V| paper", "|V|", "|E| paper", "|E|",
                  "|E| ratio", "#MB paper", "#MB", "cuMBE s paper", "cuMBE s", "ParMBE s paper",
                  "ParMBE s", "p", "speedup paper", "speedup"]
        body = [[r["dataset"], fmt.integer(r["paper |U|"]), fmt.integer(r["|U|"]),
                 fmt.integer(r["paper |V|"]), fmt.integer(r["|V|"]),
                 fmt.integer(r["paper |E|"]), fmt.integer(r["|E|"]), fmt.ratio(r["|E| ratio"]),
                 _cell(r["paper #MB"], fmt.integer), _count_cell(r),
                 _cell(r["paper cuMBE [s]"], fmt.seconds),
                 sel.marked(fmt.seconds(r["cuMBE [s]"]), r["cuMBE marks"]),
                 _cell(r["paper ParMBE [s]"], fmt.seconds),
                 sel.marked(fmt.seconds(r["ParMBE [s]"]), r["ParMBE marks"]),
                 fmt.integer(r["ParMBE processes"]),
                 _cell(r["paper speedup"], fmt.speedup),
                 sel.marked(fmt.speedup(r["speedup"]),
                            sel.union_marks(r["cuMBE marks"], r["ParMBE marks"]))]
                for _, r in sizes_df.iterrows()]
        if not paper.TABLE_I:
            out += [f"\"{NOT_PUBLISHED}\": the paper's Table I (per-dataset counts and "
                    "times) is left out of the copy of the paper this project has "
                    "(../shared/paper), so only its sizes (../shared/datasets.md) and the "
                    "speedups its text states (below) are compared.", ""]
        out += [fmt.markdown(header, body, set(range(1, len(header)))), ""]
        out += [line for n in sizes_df.attrs.get("mark_notes") or [] for line in (n, "")]
    out += ["## Speedups the paper states", "",
            "Ours: over the paper's datasets this run holds (no simulated GPU times), the "
            "same statistic as the paper's.", ""]
    header = ["figure", "paper", "ours", "ours / paper", "datasets", "source"]
    body = [[r["figure"], fmt.speedup(r["paper"]), sel.marked(fmt.speedup(r["ours"]), r["marks"]),
             fmt.ratio(r["ratio"]), f"{r['datasets']} of {r['of']}", r["source"]]
            for _, r in pub.iterrows()]
    out.append(fmt.markdown(header, body, {1, 2, 3, 4}))
    notes = pub.attrs.get("mark_notes") or []
    if notes:
        out += [*[line for n in notes for line in ("", n)], "",
                ("A marked statistic includes at least one such time (on which datasets: the "
                 "`marked` column of vs_paper_speedups.csv).")]
    return "\n".join(out)


def write_vs_paper(rows: Sequence[Mapping], csv_path, speedups_csv_path, md_path,
                   meta: Mapping | None = None):
    sizes_df, pub = datasets_table(rows, meta), published_table(rows)
    atomic.write_text(csv_path, sizes_df.to_csv(index=False))
    atomic.write_text(speedups_csv_path, pub.to_csv(index=False))
    atomic.write_text(md_path, vs_paper_markdown(sizes_df, pub))
    return sizes_df, pub
