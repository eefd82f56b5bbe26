"""The summary table (``results/tables/summary.{csv,md}``): one line per dataset with its
sizes in the paper's orientation, the count all engines agree on, the side each engine
enumerated from, and per configuration its time, peak RSS and GPU memory."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from mbebench import atomic
from mbebench.environment import describe
from mbebench.report import agreement, fmt
from mbebench.report import select as sel

BASE_COLUMNS = ["dataset", "|U|", "|V|", "|E|", "density", "count", "fingerprint"]
DENSITY_HEADER = "density 2|E|/(|U||V|)"


def time_cell(row: Mapping | None) -> Any:
    """Median algo seconds of an ok row (a text saying so for a simulator's seconds,
    which are CPU time of the simulation, not the engine's); otherwise the status text."""
    if row is None:
        return sel.NOT_RUN
    t = sel.median_s(row)
    if t is not None:
        return f"{fmt.seconds(t)} ({sel.SIMULATOR_NOTE})" if sel.simulated(row) else t
    return sel.status_text(row)


def _ok_int(row: Mapping | None, value: Any) -> int | None:
    ok = row is not None and row.get("status") == "ok" and fmt.is_num(value)
    return int(value) if ok else None


def peak_rss(row: Mapping | None) -> int | None:
    """Peak resident memory of the run's process, bytes (the runner's measure)."""
    return _ok_int(row, None if row is None else row.get("peak_rss_bytes"))


def gpu_bytes(row: Mapping | None) -> int | None:
    """Device memory the engine allocated, bytes (``stats.memory_bytes``: cuMBE)."""
    return _ok_int(row, None if row is None else (row.get("stats") or {}).get("memory_bytes"))


def sides(rows_of_ds: Sequence[Mapping], cfgs, swapped: bool) -> str:
    """Which side each configuration enumerated from: "U (all)", or "U: a, b; V: c"."""
    by_key = {sel.config_key(r): r for r in rows_of_ds}
    got: dict[str, list[str]] = {}
    for c in cfgs:
        side = sel.side_of(by_key[c.key], swapped) if c.key in by_key else None
        if side:
            got.setdefault(side, []).append(c.label)
    if not got:
        return ""
    if len(got) == 1:
        return f"{next(iter(got))} (all)"
    return "; ".join(f"{s}: {', '.join(labels)}" for s, labels in sorted(got.items()))


def summary_table(
    rows: Sequence[Mapping], datasets: Sequence[str], meta: Mapping | None = None,
    unavailable: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One line per dataset: size, density, count, fingerprint, time per configuration,
    agreement, then the side enumerated from and each configuration's memory.

    Time cells hold the median algo seconds (float) of an ok row, ``"<s> (simulator)"``
    for a run in a simulator, or the status text (``skipped: ...``, ``timeout (600 s)``,
    ``error: ...``, ``unavailable``, ``not run``).  ``agree`` is True/False, or None when
    the dataset has no ok run; ``unavailable`` holds why a dataset could not run.
    ``|U|``/``|V|`` follow the paper's orientation for its datasets (``sel.sizes``).
    ``<label> peak RSS [B]``: the run's process; ``<label> GPU [B]``: device memory,
    for the configurations that report it.
    """
    rows = list(rows)
    size = sel.sizes(rows, meta)
    unav = sel.unavailable(rows, unavailable)
    cfgs = sel.configs(rows)
    idx = sel.by_config(rows)
    by_ds = sel.by_dataset(rows)
    labels = [c.label for c in cfgs]
    gpu_cfgs = [c for c in cfgs if any(gpu_bytes(idx.get((ds, c.key))) is not None
                                       for ds in by_ds)]
    records = []
    marks: dict[tuple[str, str], str] = {}
    marked_rows = []
    for ds in sel.ordered_datasets(rows, datasets):
        m = size.get(ds, {})
        g = agreement.groups(by_ds.get(ds, []))
        agree = agreement.agrees(g)
        count, fp = agreement.count_fp(g)
        rec = {"dataset": ds, "|U|": m.get("U"), "|V|": m.get("V"), "|E|": m.get("E"),
               "density": sel.density(m.get("U"), m.get("V"), m.get("E")),
               "count": count, "fingerprint": fp}
        for c in cfgs:
            row = idx.get((ds, c.key))
            rec[c.label] = time_cell(row)
            if sel.is_time(rec[c.label]) and sel.time_marks(row):
                marks[ds, c.label] = sel.time_marks(row)
                marked_rows.append(row)
        rec["agree"] = agree
        rec["mismatch"] = agreement.describe(g) if agree is False else ""
        rec["unavailable"] = unav.get(ds, "")
        rec["enumerated from"] = sides(by_ds.get(ds, []), cfgs, bool(m.get("swapped")))
        for c in cfgs:
            rec[f"{c.label} peak RSS [B]"] = peak_rss(idx.get((ds, c.key)))
        for c in gpu_cfgs:
            rec[f"{c.label} GPU [B]"] = gpu_bytes(idx.get((ds, c.key)))
        records.append(rec)
    memory = [f"{lab} peak RSS [B]" for lab in labels] + [f"{c.label} GPU [B]" for c in gpu_cfgs]
    # a dataset's runs gathered from shards: how many (only when some are, so that the
    # table of an unsharded pipeline keeps its columns)
    shards = {ds: max(sel.shard_count(r) for r in by_ds.get(ds, [{}])) for ds in by_ds}
    shard_col = ["shards"] if any(n > 1 for n in shards.values()) else []
    for rec in records:
        if shard_col:
            rec["shards"] = shards.get(rec["dataset"], 1)
    cols = [*BASE_COLUMNS, *shard_col, *labels, "agree", "mismatch", "unavailable",
            "enumerated from", *memory]
    df = pd.DataFrame.from_records(records, columns=cols)
    for c in ("|U|", "|V|", "|E|", *shard_col, *memory):
        df[c] = df[c].astype("Int64")
    fmt.int_column(df, "count")
    df.attrs["configs"] = labels
    df.attrs["gpu_configs"] = [c.label for c in gpu_cfgs]
    df.attrs["untimed"] = [c.label for c in cfgs if not c.timed]
    df.attrs["simulated"] = sorted({c.label for c in cfgs for r in rows
                                    if sel.config_key(r) == c.key and sel.simulated(r)})
    df.attrs["environments"] = environments(rows)
    df.attrs["swapped"] = [ds for ds in df["dataset"] if size.get(ds, {}).get("swapped")]
    df.attrs["marks"] = marks
    df.attrs["mark_notes"] = sel.mark_notes(marked_rows)
    df.attrs["mismatch"] = {r["dataset"]: agreement.disagreement(
        agreement.groups(by_ds.get(r["dataset"], []))) for r in records if r["agree"] is False}
    df.attrs["skipped_everywhere"] = sel.skipped_everywhere(
        {c.label: [idx.get((r["dataset"], c.key)) for r in records
                  if r["dataset"] not in unav] for c in cfgs})
    return df


def environments(rows: Iterable[Mapping]) -> list[str]:
    """The distinct machines and software the rows ran on, one line each."""
    return list(dict.fromkeys(describe(r.get("env")) for r in rows if r.get("env")))


# --------------------------------------------------------------------------- Markdown


def _main_table(df: pd.DataFrame, labels: Sequence[str]) -> str:
    sharded = "shards" in df.columns
    marks = df.attrs.get("marks") or {}
    header = ["dataset", "|U|", "|V|", "|E|", DENSITY_HEADER, "count", "fingerprint",
              *(["shards"] if sharded else []), *[f"{lab} (s)" for lab in labels], "agree",
              "enumerated from"]
    body = []
    for _, r in df.iterrows():
        bad = r["agree"] is False
        body.append(
            [f"**{r['dataset']}**" if bad else r["dataset"], fmt.integer(r["|U|"]),
             fmt.integer(r["|V|"]), fmt.integer(r["|E|"]), fmt.density(r["density"]),
             fmt.integer(r["count"]) if not bad else r["count"],
             "–" if fmt.missing(r["fingerprint"]) else r["fingerprint"],
             *([fmt.integer(r["shards"]) if r["shards"] > 1 else "–"] if sharded else []),
             *[sel.marked(fmt.seconds(r[lab]), marks.get((r["dataset"], lab), ""))
               for lab in labels],
             "unavailable" if r.get("unavailable") else fmt.agree_text(r["agree"]),
             r["enumerated from"] or "–"])
    first_time = 8 if sharded else 7
    right = set(range(1, 6)) | {first_time + i for i in range(len(labels))}
    right |= {7} if sharded else set()
    return fmt.markdown(header, body, right)


def _memory_table(df: pd.DataFrame, labels: Sequence[str], gpu: Sequence[str]) -> str:
    """One column per configuration: peak RSS, and " / GPU bytes" where it reports them."""
    header = ["dataset", *[f"{lab} (RSS / GPU)" if lab in gpu else f"{lab} (RSS)"
                           for lab in labels]]

    def cell(r, lab):
        rss = fmt.size_bytes(r[f"{lab} peak RSS [B]"])
        return f"{rss} / {fmt.size_bytes(r[f'{lab} GPU [B]'])}" if lab in gpu else rss

    body = [[r["dataset"], *[cell(r, lab) for lab in labels]] for _, r in df.iterrows()]
    return fmt.markdown(header, body, set(range(1, len(header))))


def summary_markdown(df: pd.DataFrame) -> str:
    gone = df.attrs.get("skipped_everywhere") or {}
    labels = [lab for lab in df.attrs.get("configs") or [] if lab not in gone]
    out = ["# Summary of all runs", ""]
    bad_rows = df[df["agree"].apply(lambda a: a is False)]
    if len(bad_rows):
        out += [f"**{fmt.MISMATCH}: "
                + agreement.disagreement_sentence(df.attrs.get("mismatch") or {})
                + ". The pipeline fails on this (rule check_counts).**", ""]
        out += [f"- **{r['dataset']}**: " + r["mismatch"].replace("|", "\\|")
                for _, r in bad_rows.iterrows()]
        out.append("")
    out += unavailable_lines(df)
    untimed = df.attrs.get("untimed") or []
    simulated = df.attrs.get("simulated") or []
    swapped = df.attrs.get("swapped") or []
    out += [
        "Times: median algorithm seconds over the repeats (no I/O, no JIT compile)."
        + (f" Instrumented builds ({', '.join(untimed)}) count for agreement, "
           "but their times are not the engines' times." if untimed else "")
        + (f" \"(simulator)\": {', '.join(simulated)} ran in the CUDA simulator on the CPU; "
           "its seconds are the simulation's, not GPU times." if simulated else "")
        + (" Shards: a dataset's runs split into that many shard jobs (datasets.<d>.shards); "
           "their time is the slowest shard's, the makespan on as many machines (the sum of "
           "the shard times is the row's shards.time_sum_s)." if "shards" in df.columns
           else ""),
        "Fingerprint: of the runs that compute one (a command-line engine may give only "
        "its count). Density: 2|E| / (|U| |V|), the paper's definition (a complete "
        "bipartite graph has 2). |U|, |V|: for the paper's datasets in its orientation"
        + (f" (the CSR's sides swapped for {', '.join(swapped)})" if swapped else "")
        + ". Enumerated from: the side each engine's search started from, as it reported it.",
        "",
    ]
    if gone:
        out += [skipped_note(gone), ""]
    envs = df.attrs.get("environments") or []
    tail = ["", *[f"Ran on: {e}." for e in envs]] if envs else []
    memory = ["", "## Memory", "",
              "RSS: peak resident memory of the run's process (the engine, its JIT "
              "compiler and the graph). GPU: device memory the engine allocated for the "
              "graph and its work arrays.", "",
              _memory_table(df, labels, df.attrs.get("gpu_configs") or []).rstrip("\n")]
    notes = ["", *df.attrs.get("mark_notes")] if df.attrs.get("mark_notes") else []
    return ("\n".join(out) + "\n" + _main_table(df, labels)
            + "".join(line + "\n" for line in notes + memory + tail))


def skipped_note(gone: Mapping[str, str]) -> str:
    """One line for the configurations skipped on every dataset for one reason each."""
    by_reason: dict[str, list[str]] = {}
    for label, why in gone.items():
        by_reason.setdefault(why, []).append(label)
    return ("Not shown as columns, skipped on every dataset they were to run on: "
            + "; ".join(f"{', '.join(labels)} ({why})" for why, labels in by_reason.items())
            + ".")


def unavailable_lines(df: pd.DataFrame) -> list[str]:
    """The Markdown paragraph listing the unavailable datasets and why (paths cut to file
    names: the report is read elsewhere; the CSV keeps the whole reason)."""
    if "unavailable" not in df.columns:
        return []
    unav = [(r["dataset"], r["unavailable"]) for _, r in df.iterrows()
            if isinstance(r["unavailable"], str) and r["unavailable"]]
    if not unav:
        return []
    out = [f"**{len(unav)} dataset(s) unavailable** (download or convert failed; nothing ran "
           "on them, the next run tries them again):", ""]
    out += [f"- **{ds}**: " + sel.without_paths(why).replace("|", "\\|") for ds, why in unav]
    return out + [""]


def write_summary(df: pd.DataFrame, csv_path, md_path) -> None:
    atomic.write_text(csv_path, df.to_csv(index=False))
    atomic.write_text(md_path, summary_markdown(df))
