"""Scatter and gather: the shard rows of one run, and the one row they add up to.

A dataset with ``shards: N`` in the config has each engine run scattered into N shard
runs (``shard: "i/N"``, :mod:`mbebench.shard`), ``shards_per_job`` of them to one job
(one process: the start-up is paid once).  Each shard run writes its own row,
``results/runs/<dataset>/<run_id>/shard-<i>-of-<N>.json``, as soon as it is done, and
the job writes a receipt, ``.../job-<g>-of-<G>.json``, when all of its shards have rows.
A killed job leaves the rows of its finished shards; running it again runs only the
others (:func:`finished`).  :func:`gather` adds the N rows up into the run's ordinary
row, ``results/runs/<dataset>/<run_id>.json``:

* count: the sum; fingerprint: the sum mod 2**64 (exact: every maximal biclique is
  found by exactly one shard);
* time: the slowest shard's, repeat by repeat (``algo_s``; ``algo_s_median`` is their
  median): the makespan when the N shards run on N machines at once.  ``shards``
  holds the rest: ``time_sum_s`` (the shards' medians added up: the work, which one
  machine would take), ``time_max_s`` (the largest median), ``elapsed_s`` (first
  shard's start to last shard's end, as they were scheduled), each shard's count and
  median time, hosts and files;
* a shard that failed makes the row an error (or a timeout) naming the shard, never
  a partial count; shards of another run plan (other parameters, another graph) are
  a :class:`GatherError` and no row.
"""

from __future__ import annotations

import datetime as _dt
import json
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mbebench import paths
from mbebench.fingerprint_sum import sum_hex
from mbebench.row_schema import read_row_file, row_or_none

WHOLE = "0/1"
# What every shard of one run shares: any difference means the rows come from two run
# plans (another config, graph or engine entry) and must not be added up.
RUN_KEYS = ("dataset", "run_id", "engine", "label", "variant", "timed", "entry", "command",
            "repeats", "timeout_s", "simulated", "csr")
# Per-shard stats that add up over the shards (counts of work); other numbers that differ
# between shards take the largest (a resource one shard needed: memory, a launch size).
SUM_STATS = frozenset({"nodes", "tasks", "split_tasks", "presplit_tasks", "shard_tasks",
                       "shard_cost", "block_tasks"})


class GatherError(RuntimeError):
    """The shard rows of a run cannot be added up (one line, naming the dataset and shard)."""


def shard_row(folder: str | Path, i: int, n: int) -> Path:
    """The row of shard i of n, in the run's shard folder (``results/runs/<d>/<run_id>``)."""
    return Path(folder) / paths.shard_row_name(i, n)


def job_receipt(folder: str | Path, g: int, jobs: int) -> Path:
    return Path(folder) / paths.job_receipt_name(g, jobs)


def groups(n: int, per_job: int) -> list[list[int]]:
    """The shards of each job: consecutive runs of ``per_job`` (the last one may be shorter)."""
    per_job = max(1, min(int(per_job), int(n)))
    return [list(range(a, min(a + per_job, n))) for a in range(0, n, per_job)]


def shard_of(row: Mapping) -> str:
    return str((row.get("params") or {}).get("shard", WHOLE))


def run_key(row: Mapping) -> dict[str, Any]:
    """What a shard row says about its run, apart from which shard it is."""
    key = {k: row.get(k) for k in RUN_KEYS}
    key["params"] = {k: v for k, v in (row.get("params") or {}).items() if k != "shard"}
    return key


def finished(path: str | Path, want: Mapping) -> bool:
    """Whether the shard row at ``path`` is a finished row of the run ``want`` describes
    (:func:`run_key` of the row the job would write, shard included): such a shard is not
    run again.  A missing, unreadable or foreign row is not finished."""
    row = row_or_none(path)
    return row is not None and run_key(row) == run_key(want) and shard_of(row) == shard_of(want)


def _read(path: Path, what: str) -> dict:
    try:
        return read_row_file(path)
    except FileNotFoundError:
        raise GatherError(f"{what}: no row at {path} (its job did not finish; run the "
                          "pipeline again)") from None
    except ValueError as e:
        raise GatherError(f"{what}: {e}") from None


def _diff(a: Mapping, b: Mapping) -> str:
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            if isinstance(a.get(k), Mapping) and isinstance(b.get(k), Mapping):
                return f"{k}.{_diff(a[k], b[k])}"
            return f"{k} {json.dumps(a.get(k), sort_keys=True)} vs " \
                   f"{json.dumps(b.get(k), sort_keys=True)}"
    return "?"


def load(folder: str | Path, n: int, *, dataset: str, run_id: str) -> list[dict]:
    """The n shard rows of a run, checked to be of one run: GatherError otherwise."""
    rows = []
    for i in range(n):
        path = shard_row(folder, i, n)
        what = f"dataset {dataset!r} run {run_id} shard {i}/{n}"
        row = _read(path, what)
        if shard_of(row) != f"{i}/{n}":
            raise GatherError(f"{what}: {path} holds shard {shard_of(row)}")
        if (row.get("dataset"), row.get("run_id")) != (dataset, run_id):
            raise GatherError(f"{what}: {path} is a row of dataset {row.get('dataset')!r} "
                              f"run {row.get('run_id')}")
        if rows and run_key(row) != run_key(rows[0]):
            why = _diff(run_key(rows[0]), run_key(row))
            raise GatherError(f"{what}: not of the same run as shard 0/{n} ({why}); delete "
                              f"{folder} to run the shards again")
        row["_source"] = str(path)
        rows.append(row)
    # the same parameters and graph give every shard the same task list; another engine
    # version on one machine might not, and its shards would not be a partition
    ok = [r.get("stats") or {} for r in rows if r["status"] == "ok"]
    totals = {st.get("total_tasks") for st in ok}
    totals.discard(None)
    # an engine that records its partition's digest (cuMBE) in one shard must in every one
    parts = {st.get("partition") for st in ok} if any("partition" in st for st in ok) else set()
    if len(totals) > 1 or len(parts) > 1:
        what = (f"total_tasks {sorted(totals)}" if len(totals) > 1
                else f"partitions {sorted(map(str, parts))}")
        raise GatherError(f"dataset {dataset!r} run {run_id}: the shards partitioned different "
                          f"task lists ({what}); delete {folder} to run the shards again")
    return rows


def _median(xs: Sequence[float]) -> float | None:
    return statistics.median(xs) if xs else None


def _merge_stats(stats: list[Mapping]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    keys = list(dict.fromkeys(k for s in stats for k in s))
    for k in keys:
        if k in ("shard",):
            continue
        vals = [s.get(k) for s in stats if k in s]
        first = vals[0]
        if all(isinstance(v, list) for v in vals):
            out[k] = [x for v in vals for x in v]  # one entry per worker of every shard
        elif all(isinstance(v, Mapping) for v in vals):
            merged: dict[str, Any] = {}
            for v in vals:
                for kk, x in v.items():
                    if isinstance(x, (int, float)) and not isinstance(x, bool):
                        merged[kk] = merged.get(kk, 0) + x
                    else:
                        merged.setdefault(kk, x)
            out[k] = merged
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals) \
                and (k in SUM_STATS or any(v != first for v in vals)):
            out[k] = sum(vals) if k in SUM_STATS else max(vals)
        elif all(v == first for v in vals):
            out[k] = first
        else:
            out[k] = first
    return out


def _scalar_stats(stats: Mapping) -> dict[str, Any]:
    return {k: v for k, v in stats.items() if not isinstance(v, (list, Mapping))}


def _time(text: str | None) -> _dt.datetime | None:
    try:
        return _dt.datetime.fromisoformat(text) if text else None
    except ValueError:
        return None


def gather(rows: Sequence[Mapping], *, per_job: int = 1) -> dict[str, Any]:
    """The run's row from its n shard rows (in shard order, checked by :func:`load`)."""
    n = len(rows)
    first = rows[0]
    out = {k: v for k, v in first.items() if not k.startswith("_")}
    out["params"] = {**(first.get("params") or {}), "shard": WHOLE}
    out.pop("csr", None)
    medians = [r.get("algo_s_median") if r["status"] == "ok" else None for r in rows]
    starts = [t for t in (_time(r.get("started_at")) for r in rows) if t]
    ends = [t for t in (_time(r.get("finished_at")) for r in rows) if t]
    info: dict[str, Any] = {
        "n": n,
        "per_job": max(1, min(int(per_job), n)),
        "time_s": None,
        "time_max_s": None,
        "time_sum_s": None,
        "elapsed_s": (max(ends) - min(starts)).total_seconds() if starts and ends else None,
        "status": [r["status"] for r in rows],
        "count": [r.get("count") for r in rows],
        "algo_s_median": medians,
        "hosts": list(dict.fromkeys((r.get("host") or {}).get("hostname") for r in rows)),
        "rows": [Path(r.get("_source", "")).name for r in rows],
        "stats": [_scalar_stats(r.get("stats") or {}) for r in rows],
    }
    out.update(
        started_at=min(starts).isoformat(timespec="seconds") if starts else first.get("started_at"),
        finished_at=max(ends).isoformat(timespec="seconds") if ends else first.get("finished_at"),
        count=None, fingerprint=None, algo_s=[], wall_s=[], algo_s_median=None,
        compile_s=None, peak_rss_bytes=None, stats={}, message=None, shards=info,
    )
    bad = _failure(rows)
    if bad is not None:
        out["status"], out["message"] = bad
        return out
    out["status"] = "ok"
    fps = [r.get("fingerprint") for r in rows]
    out["count"] = sum(int(r["count"]) for r in rows)
    if all(fp is not None for fp in fps):
        out["fingerprint"] = sum_hex(fps)
    reps = min(len(r.get("algo_s") or []) for r in rows)
    # the makespan of each repeat: the shards run side by side, the slowest decides
    out["algo_s"] = [max(float(r["algo_s"][j]) for r in rows) for j in range(reps)]
    walls = min(len(r.get("wall_s") or []) for r in rows)
    out["wall_s"] = [max(float(r["wall_s"][j]) for r in rows) for j in range(walls)]
    out["algo_s_median"] = _median(out["algo_s"])
    compile_s = [float(r["compile_s"]) for r in rows if r.get("compile_s") is not None]
    out["compile_s"] = max(compile_s) if compile_s else None
    rss = [int(r["peak_rss_bytes"]) for r in rows if r.get("peak_rss_bytes") is not None]
    out["peak_rss_bytes"] = max(rss) if rss else None
    out["stats"] = {**_merge_stats([r.get("stats") or {} for r in rows]), "shards": n}
    info["time_s"] = out["algo_s_median"]
    info["time_max_s"] = max(medians)
    info["time_sum_s"] = sum(medians)
    return out


def _failure(rows: Sequence[Mapping]) -> tuple[str, str] | None:
    """(status, message) of a run with a shard that is not ok; None when all are."""
    n = len(rows)
    statuses = [r["status"] for r in rows]
    if all(s == "ok" for s in statuses):
        return None
    for want in ("unavailable", "skipped"):
        if all(s == want for s in statuses):  # nothing ran: the dataset's or the machine's reason
            return want, rows[0].get("message") or want
    for want in ("error", "timeout", "skipped", "unavailable"):
        for i, r in enumerate(rows):
            if r["status"] == want:
                why = " ".join(str(r.get("message") or want).split())
                others = sum(s == "ok" for s in statuses)
                status = "timeout" if want == "timeout" else "error"
                return status, (f"shard {i}/{n} {want}: {why} ({others} of {n} shards ok; "
                                "no partial count)")
    return "error", f"shards ended {statuses}"
