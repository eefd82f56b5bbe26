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


def ours(rows, ds: str, what: str) -> float | None:
    """One of the paper's ratios on one dataset, from our rows (None if a time is missing)."""
    ref = _time(sel.reference_timed(rows, ds))
    other = {"parmbe": lambda: _parmbe_row(rows, ds),
             "serial": lambda: (_one(rows, ds, **paper.PAPER_SERIAL)
                                or _one(rows, ds, **paper.SERIAL)),
             "noWS": lambda: _one(rows, ds, engine=sel.REF_ENGINE,
                                  variant=paper.NO_WORK_STEALING)}[what]()
    t = _time(other)
    return t / ref if t and ref else None


def _ratio(a: Any, b: Any) -> float:
    return a / b if fmt.is_num(a) and fmt.is_num(b) and b else math.nan


def datasets_table(rows: Sequence[Mapping], meta: Mapping | None = None) -> pd.DataFrame:
    rows = list(rows)
    size = sel.sizes(rows, meta)
    by_ds = sel.by_dataset(rows)
    recs = []
    for ds, (pu, pv, pe) in paper.DATASETS.items():
        if ds not in size and ds not in by_ds:
            continue
        m, pub = size.get(ds, {}), paper.TABLE_I.get(ds, {})
        count, _ = agreement.count_fp(agreement.groups(by_ds.get(ds, [])))
        t_cu = _time(sel.reference_timed(rows, ds))
        par = _parmbe_row(rows, ds)
        t_par = _time(par)
        p_speed = _ratio(pub.get("parmbe_s"), pub.get("cumbe_s"))
        o_speed = _ratio(t_par, t_cu)
        recs.append({
            "dataset": ds, "paper |U|": pu, "paper |V|": pv, "paper |E|": pe,
            "|U|": m.get("U"), "|V|": m.get("V"), "|E|": m.get("E"),
            "|E| ratio": _ratio(m.get("E"), pe),
            "paper #MB": pub.get("count"), "#MB": count, "#MB ratio": _ratio(count, pub.get("count")),
            "paper cuMBE [s]": pub.get("cumbe_s"), "cuMBE [s]": t_cu,
            "cuMBE ratio": _ratio(t_cu, pub.get("cumbe_s")),
            "paper ParMBE [s]": pub.get("parmbe_s"), "ParMBE [s]": t_par,
            "ParMBE processes": par["params"][sel.WORKER_PARAM] if par else None,
            "ParMBE ratio": _ratio(t_par, pub.get("parmbe_s")),
            "paper speedup": p_speed, "speedup": o_speed, "speedup ratio": _ratio(o_speed, p_speed),
        })
    df = pd.DataFrame.from_records(recs, columns=[
        "dataset", "paper |U|", "paper |V|", "paper |E|", "|U|", "|V|", "|E|", "|E| ratio",
        "paper #MB", "#MB", "#MB ratio", "paper cuMBE [s]", "cuMBE [s]", "cuMBE ratio",
        "paper ParMBE [s]", "ParMBE [s]", "ParMBE processes", "ParMBE ratio", "paper speedup",
        "speedup", "speedup ratio"])
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
    for spec in paper.PUBLISHED:
        vals = {ds: ours(rows, ds, spec["ours"]) for ds in _which(spec)}
        got = [v for v in vals.values() if v is not None]
        stat = sel.geometric_mean if spec["stat"] == "geometric mean" else statistics.fmean
        mine = stat(got) if got else math.nan
        recs.append({"figure": spec["figure"], "source": spec["source"], "paper": spec["paper"],
                     "ours": mine, "ratio": _ratio(mine, spec["paper"]),
                     "datasets": len(got), "of": len(vals),
                     "over": ", ".join(ds for ds, v in vals.items() if v is not None)})
    return pd.DataFrame.from_records(recs, columns=["figure", "source", "paper", "ours", "ratio",
                                                    "datasets", "of", "over"])


def _cell(x: Any, show) -> str:
    return NOT_PUBLISHED if fmt.missing(x) else show(x)


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
                 _cell(r["paper #MB"], fmt.integer), fmt.integer(r["#MB"]),
                 _cell(r["paper cuMBE [s]"], fmt.seconds), fmt.seconds(r["cuMBE [s]"]),
                 _cell(r["paper ParMBE [s]"], fmt.seconds), fmt.seconds(r["ParMBE [s]"]),
                 fmt.integer(r["ParMBE processes"]),
                 _cell(r["paper speedup"], fmt.speedup), fmt.speedup(r["speedup"])]
                for _, r in sizes_df.iterrows()]
        if not paper.TABLE_I:
            out += [f"\"{NOT_PUBLISHED}\": the paper's Table I (per-dataset counts and "
                    "times) is left out of the copy of the paper this project has "
                    "(../shared/paper), so only its sizes (../shared/datasets.md) and the "
                    "speedups its text states (below) are compared.", ""]
        out += [fmt.markdown(header, body, set(range(1, len(header)))), ""]
    out += ["## Speedups the paper states", "",
            "Ours: over the paper's datasets this run holds (no simulated GPU times), the "
            "same statistic as the paper's.", ""]
    header = ["figure", "paper", "ours", "ours / paper", "datasets", "source"]
    body = [[r["figure"], fmt.speedup(r["paper"]), fmt.speedup(r["ours"]), fmt.ratio(r["ratio"]),
             f"{r['datasets']} of {r['of']}", r["source"]] for _, r in pub.iterrows()]
    out.append(fmt.markdown(header, body, {1, 2, 3, 4}))
    return "\n".join(out)


def write_vs_paper(rows: Sequence[Mapping], csv_path, speedups_csv_path, md_path,
                   meta: Mapping | None = None):
    sizes_df, pub = datasets_table(rows, meta), published_table(rows)
    atomic.write_text(csv_path, sizes_df.to_csv(index=False))
    atomic.write_text(speedups_csv_path, pub.to_csv(index=False))
    atomic.write_text(md_path, vs_paper_markdown(sizes_df, pub))
    return sizes_df, pub
