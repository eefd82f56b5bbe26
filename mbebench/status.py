"""``python -m mbebench status``: where the runs of a pipeline stand, from its files alone.

Per dataset and run id: **finished** (count and time; a sharded run's shard count and
the sum of its shard times), **mismatch** (finished, but the dataset's finished runs disagree
on the count or fingerprint: the closing summary's MISMATCH), **running** (its last
progress line, :mod:`mbebench.progress`;
a sharded run's shards done of N), **failed** (the one-line error of its row, of a failed
shard, or the last line of a log that ends in an error without a row), **stopped** (a
log without a row that nobody writes to any more: the run was interrupted), **not
started**.

It reads ``results/`` and ``logs/`` only, never Snakemake's own state.  Which runs the
pipeline plans is ``results/plan.json``, written when a pipeline run starts
(:func:`write_plan`, the Snakefile's ``onstart``); without it the runs are those with a
row, a shard folder or a log.  A run counts as running while its log changed in the
last :data:`FRESH_S` seconds: the runner touches its log every few seconds
(:data:`mbebench.runner.HEARTBEAT_S`) and progress lines come every 10 s.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mbebench import atomic, paths
from mbebench.progress import is_progress
from mbebench.oneline import one_line
from mbebench.row_schema import row_or_none

PLAN = paths.PLAN
FRESH_S = 30.0
MISMATCH = "mismatch"
STATES = ("finished", MISMATCH, "running", "failed", "stopped", "skipped", "unavailable",
          "not started")
_SHARD_FILE = re.compile(r"^shard-(\d+)-of-(\d+)\.json$")
_JOB_LOG = re.compile(r"^job-(\d+)-of-(\d+)\.log$")


# --------------------------------------------------------------------------- the plan


def plan_entries(datasets, runs: Mapping, shards: Mapping) -> list[dict[str, Any]]:
    """One entry per planned run: its row, its log(s), its shards."""
    from mbebench import plan

    out = []
    for ds in datasets:
        sh = shards[ds]
        for run_id, spec in runs.items():
            if not spec.applies_to(ds):
                continue
            entry = {"dataset": ds, "run_id": run_id, "label": spec.label or run_id,
                     "row": paths.row(ds, run_id), "shards": sh.n}
            if sh.sharded:
                jobs = len(sh.groups())
                entry["shard_rows"] = plan.shard_rows(ds, run_id, sh)
                entry["logs"] = [paths.job_log(ds, run_id, g, jobs) for g in range(jobs)]
            else:
                entry["logs"] = [paths.run_log(ds, run_id)]
            out.append(entry)
    return out


def write_plan(path: str | Path, datasets, runs: Mapping, shards: Mapping) -> None:
    atomic.write_json(path, {
        "written_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "runs": plan_entries(datasets, runs, shards),
    })


def write_plan_or_exit(path: str | Path, datasets, runs: Mapping, shards: Mapping) -> None:
    """:func:`write_plan` at the start of a pipeline run (the Snakefile's ``onstart``): a plan
    that cannot be written (a read-only ``results/``) stops the run with one line naming the
    path, not a traceback; nothing could be written there anyway."""
    import sys

    try:
        write_plan(path, datasets, runs, shards)
    except OSError as e:
        where = e.filename or path
        print(f"error: cannot write {path} ({e.strerror or type(e).__name__}: {where}); the "
              "pipeline writes results/, resources/ and logs/ under its working directory, "
              "which must be writable", file=sys.stderr)
        raise SystemExit(1) from None


def _discovered(root: Path) -> list[dict[str, Any]]:
    """Entries for the runs found on disk (no plan file): rows, shard folders, logs."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    runs, logs = root / paths.RUNS, root / paths.RUN_LOGS
    for base in (runs, logs):
        if not base.is_dir():
            continue
        for ds_dir in sorted(p for p in base.iterdir() if p.is_dir()):
            for item in sorted(ds_dir.iterdir()):
                run_id = item.name if item.is_dir() else item.stem
                if item.is_file() and item.suffix not in (".json", ".log"):
                    continue
                found.setdefault((ds_dir.name, run_id), {
                    "dataset": ds_dir.name, "run_id": run_id, "label": run_id,
                    "row": paths.row(ds_dir.name, run_id), "shards": 1,
                    "logs": [paths.run_log(ds_dir.name, run_id)]})
    for (ds, run_id), entry in found.items():
        n = _latest_n(runs / ds / run_id, logs / ds / run_id)
        if n > 1:
            entry["shards"] = n
            entry["shard_rows"] = [paths.shard_row(ds, run_id, i, n) for i in range(n)]
            entry["logs"] = sorted(
                f"{paths.RUN_LOGS}/{ds}/{run_id}/{p.name}"
                for p in (logs / ds / run_id).glob("*.log") if _JOB_LOG.match(p.name))
    return list(found.values())


def _latest_n(*folders: Path) -> int:
    """The shard count of the most recent shard row in the folders (1: none)."""
    best, n = -1.0, 1
    for folder in folders:
        if not folder.is_dir():
            continue
        for p in folder.iterdir():
            m = _SHARD_FILE.match(p.name)
            if m and p.stat().st_mtime > best:
                best, n = p.stat().st_mtime, int(m.group(2))
    return n


# --------------------------------------------------------------------------- the state


@dataclass
class RunState:
    dataset: str
    run_id: str
    label: str
    state: str
    detail: str
    shards: int = 1
    shards_done: int = 0


def _seconds(x: Any) -> str:
    return f"{x:.3g} s" if isinstance(x, (int, float)) else "? s"


def _finished(row: Mapping) -> tuple[str, str]:
    status = row.get("status")
    if status == "ok":
        detail = f"count {row.get('count')}, {_seconds(row.get('algo_s_median'))}"
        sh = row.get("shards")
        if isinstance(sh, Mapping) and sh.get("n", 1) > 1:
            detail += (f" (slowest of {sh['n']} shards; their sum "
                       f"{_seconds(sh.get('time_sum_s'))})")
        return "finished", detail
    msg = one_line(row.get("message")) or str(status)
    if status in ("error", "timeout"):
        return "failed", f"{status}: {msg}"
    if status == "skipped":
        return "skipped", msg
    if status == "unavailable":
        return "unavailable", msg
    return "failed", f"status {status!r}: {msg}"


def _tail(path: Path, size: int = 65536) -> list[str]:
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            end = f.tell()
            f.seek(max(0, end - size))
            data = f.read()
    except OSError:
        return []
    return [ln.strip() for ln in data.decode(errors="replace").splitlines() if ln.strip()]


def _log_state(path: Path, now: float) -> tuple[bool, str, str] | None:
    """(fresh, last progress line or last line, last line) of a log; None if there is none."""
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None
    lines = _tail(path)
    last = lines[-1] if lines else ""
    progress = next((ln for ln in reversed(lines) if is_progress(ln)), "")
    return now - mtime <= FRESH_S, progress or last, last


def run_state(root: Path, entry: Mapping, now: float,
              rows: dict[tuple[str, str], dict] | None = None) -> RunState:
    """The state of one planned run; ``rows`` (if given) collects its row, for the datasets'
    agreement (:func:`status`)."""
    st = RunState(entry["dataset"], entry["run_id"], entry.get("label") or entry["run_id"],
                  "not started", "", int(entry.get("shards", 1)))
    row = row_or_none(root / entry["row"])
    if row is not None and rows is not None:  # grouped by where the plan put it
        rows[(st.dataset, st.run_id)] = {**row, "dataset": st.dataset, "run_id": st.run_id}
    shard_rows = [row_or_none(root / p) for p in entry.get("shard_rows", [])]
    st.shards_done = sum(r is not None for r in shard_rows)
    if row is not None:
        st.state, st.detail = _finished(row)
        st.shards_done = st.shards if st.shards > 1 else 0
        return st
    logs = [s for s in (_log_state(root / p, now) for p in entry.get("logs", [])) if s]
    running = [s for s in logs if s[0]]
    failed_shards = [f"shard {i}/{st.shards} {r['status']}: {one_line(r.get('message'))}"
                     for i, r in enumerate(shard_rows)
                     if r is not None and r.get("status") in ("error", "timeout")]
    done = f"shards {st.shards_done}/{st.shards} done" if st.shards > 1 else ""
    if running:
        st.state = "running"
        st.detail = "; ".join(x for x in (done, *(s[1] for s in running)) if x)
    elif failed_shards:
        st.state, st.detail = "failed", "; ".join([done, *failed_shards])
    elif logs and any(s[2].startswith("error:") for s in logs):
        st.state = "failed"
        st.detail = "; ".join(x for x in (done, *(s[2] for s in logs if s[2].startswith("error:")))
                              if x)
    elif logs or st.shards_done:
        st.state = "stopped"
        what = ("all shards done, not gathered yet" if st.shards > 1 and
                st.shards_done == st.shards else done)
        last = next((s[2] for s in reversed(logs) if s[2]), "")
        st.detail = "; ".join(x for x in (what, f"last log line: {last}" if last else "") if x)
    else:
        st.detail = done
    return st


def status(root: str | Path = ".", now: float | None = None) -> tuple[list[RunState], str | None]:
    """The state of every run, and when the plan was written (None: no plan file)."""
    root = Path(root)
    now = time.time() if now is None else now
    plan = _row_plan(root / PLAN)
    entries = plan["runs"] if plan else _discovered(root)
    rows: dict[tuple[str, str], dict] = {}
    states = [run_state(root, e, now, rows) for e in entries]
    _mark_mismatches(states, rows)
    return states, (plan or {}).get("written_at")


def _mark_mismatches(states: list[RunState], rows: Mapping[tuple[str, str], dict]) -> None:
    """A finished run of a dataset whose finished runs disagree is a mismatch, as in the
    closing summary and the tables: its count is not a result."""
    from mbebench.report.agreement import mismatches

    try:
        bad = mismatches(list(rows.values()))
    except (KeyError, TypeError, ValueError):  # a malformed row: its own state says enough
        return
    for st in states:
        if st.state == "finished" and st.dataset in bad:
            st.state = MISMATCH
            st.detail = f"{st.detail}; the dataset's runs disagree: {bad[st.dataset]}"


def _row_plan(path: Path) -> dict | None:
    try:
        obj = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return obj if isinstance(obj, dict) and isinstance(obj.get("runs"), list) else None


def format_status(states: list[RunState], written_at: str | None) -> str:
    counts = {s: sum(x.state == s for x in states) for s in STATES}
    head = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no runs"
    where = (f"plan of {written_at}" if written_at else
             f"no {PLAN}: the runs found on disk")
    lines = [f"mbe-bench status: {len(states)} run(s) ({where}): {head}"]
    width = max([len(s.run_id) for s in states] + [6])
    for ds in dict.fromkeys(s.dataset for s in states):
        lines.append(ds)
        for s in (x for x in states if x.dataset == ds):
            lines.append(f"  {s.run_id.ljust(width)}  {s.state:<11}  {s.detail}".rstrip())
    return "\n".join(lines) + "\n"


def as_json(states: list[RunState], written_at: str | None) -> str:
    return json.dumps({"written_at": written_at, "runs": [asdict(s) for s in states]},
                      indent=1)
