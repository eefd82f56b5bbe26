"""The closing summary of a pipeline run, and whether the run failed.

A benchmark that ends "100% done" while its table cells say ``error`` misleads: a
number gets copied into a paper.  So the last lines of every run (printed by the
Snakefile's ``onsuccess``/``onerror`` handlers, after Snakemake's own output) count
the result rows per engine by status, name each failed or disagreeing dataset and
engine with its one-line reason, and say why runs were skipped; the ``closing`` rule
writes the same text to ``results/tables/closing.txt`` for the report.

Which outcomes fail the run is the config's ``fail_on`` (default: error, timeout,
mismatch, unavailable; ``skipped`` — no CUDA device — does not fail it unless listed):
the ``check_counts`` rule fails on them (:func:`verdict`), and so does a run whose
targets stop short of that rule (the ``onsuccess`` handler's exit status).
"""

from __future__ import annotations

import logging
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mbebench import dataset_status, paths
from mbebench.oneline import one_line
from mbebench.row_schema import STATUSES, read_row_file

OUTCOMES = ("error", "timeout", "mismatch", "unavailable", "skipped")
FAIL_ON = ("error", "timeout", "mismatch", "unavailable")
MISMATCH = "mismatch"
COLUMNS = ("ok", MISMATCH, "error", "timeout", "skipped", "unavailable")


class RunsFailed(RuntimeError):
    """Rows with an outcome the config's ``fail_on`` lists; one line per dataset and run
    after a first line counting them."""


@dataclass
class Closing:
    lines: list[str] = field(default_factory=list)
    failed: Counter = field(default_factory=Counter)  # outcome -> rows, for those in fail_on

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0


def read_rows(paths: Iterable[str | os.PathLike]) -> tuple[list[dict], list[str]]:
    """The rows of the files that exist (the run may have stopped before the others), and a
    line for each file that cannot be read or is not a result row (it never stands for a
    result)."""
    rows, bad = [], []
    for p in paths:
        try:
            rows.append(read_row_file(p))
        except FileNotFoundError:
            continue
        except ValueError as e:
            bad.append(str(e))
    return rows, bad


def _mismatches(rows: list[dict]) -> dict[str, str]:
    from mbebench.report.agreement import mismatches

    return mismatches(rows)


def _label(row: Mapping) -> str:
    return str(row.get("label") or row.get("run_id") or row["engine"])


def summarize(row_paths: Sequence[str | os.PathLike], meta_paths: Iterable[str | os.PathLike] = (),
              *, fail_on: Iterable[str] = FAIL_ON, started_at: float | None = None,
              stopped: bool = False, dropped: Iterable[str] = ()) -> Closing:
    """The closing summary of the rows at ``row_paths`` (the run's planned rows).

    ``stopped``: the run stopped early (a job failed, or it was interrupted), so it
    fails whatever the rows say, and the summary says which planned rows are missing:
    a run whose log was written after ``started_at`` (this invocation's start) failed its
    job or was interrupted; one with no such log never started.  ``dropped``: a line for
    each part of the config the plan left out (:func:`mbebench.plan.dropped_runs`)."""
    fail_on = set(fail_on)
    rows, bad = read_rows(row_paths)
    unav = dataset_status.unavailable_datasets(meta_paths)
    mism = _mismatches(rows)
    out = Closing()
    per_engine = _per_engine(rows, mism)
    out.lines += _engine_table(per_engine, len(rows), len(list(row_paths)))
    out.lines += _skipped_lines(rows)
    out.lines += [one_line(line) for line in dropped]
    for ds, text in mism.items():
        out.lines.append(f"MISMATCH {ds}: {text}")
    for r in rows:
        if r["status"] in ("error", "timeout"):
            out.lines.append(f"{r['status'].upper()} {r['dataset']} {_label(r)}: "
                             f"{one_line(r.get('message')) or r['status']}")
    out.lines += [f"UNREADABLE {line}" for line in bad]
    unav_rows = Counter(r["dataset"] for r in rows if r["status"] == "unavailable")
    out.lines += _unavailable_lines(rows, unav_rows, unav)
    out.lines += _absent_lines(row_paths, started_at, stopped)

    counts = Counter()
    for c in per_engine.values():
        counts.update(c)
    counts[MISMATCH] = len(mism)  # datasets, not rows
    counts["error"] += len(bad)
    out.failed = Counter({k: counts[k] for k in OUTCOMES if k in fail_on and counts[k]})
    out.lines.append(_last_line(out.failed, counts, fail_on, stopped, len(unav_rows)))
    return out


def _per_engine(rows: Sequence[Mapping], mism: Mapping[str, str]) -> dict[str, Counter]:
    """Rows per engine and outcome; an ok row of a dataset whose runs disagree counts as a
    mismatch, an unknown status as an error."""
    per_engine: dict[str, Counter] = {}
    for r in rows:
        status = r["status"] if r["status"] in STATUSES else "error"
        if status == "ok" and r["dataset"] in mism:
            status = MISMATCH
        per_engine.setdefault(str(r["engine"]), Counter())[status] += 1
    return per_engine


def _engine_table(per_engine: Mapping[str, Counter], n_rows: int, n_planned: int) -> list[str]:
    width = max([len("engine"), *map(len, per_engine)])
    lines = [f"mbe-bench: {n_rows} result row(s) of {n_planned} planned"]
    if per_engine:
        lines.append("  " + "engine".ljust(width) + "".join(f"{c:>13}" for c in COLUMNS))
        for engine, c in per_engine.items():
            lines.append("  " + engine.ljust(width) + "".join(f"{c[k]:>13}" for k in COLUMNS))
    return lines


def _skipped_lines(rows: Sequence[Mapping]) -> list[str]:
    skipped = Counter((r["engine"], one_line(r.get("message")) or "skipped")
                      for r in rows if r["status"] == "skipped")
    lines = []
    for (engine, why), n in skipped.items():
        hint = (f" (set engines.{engine}.simulate: true for the CUDA simulator, or "
                f"require_gpu: true to fail instead)" if "CUDA" in why else "")
        lines.append(f"skipped: {n} {engine} run(s): {why}{hint}")
    return lines


def _unavailable_lines(rows: Sequence[Mapping], unav_rows: Mapping[str, int],
                       unav: Mapping[str, str]) -> list[str]:
    if not unav_rows:
        return []
    lines = [f"{len(unav_rows)} dataset(s) unavailable, left out of the tables "
             "(results/tables/summary.md lists them; the next run tries them again):"]
    for ds in unav_rows:
        why = unav.get(ds) or next((one_line(r.get("message")) for r in rows
                                    if r["dataset"] == ds and r.get("message")), "")
        lines.append(f"  {ds}: {why}")
    return lines


def _absent_lines(row_paths: Sequence[str | os.PathLike], started_at: float | None,
                  stopped: bool) -> list[str]:
    """The planned rows that are not there: after a stop, each with why; else one line."""
    if stopped:
        lines = _missing(row_paths, started_at)
        root = Path(row_paths[0]).parents[3] if row_paths else Path(".")
        return lines + failed_steps(root, started_at)
    absent = [str(p) for p in row_paths if not Path(p).exists()]
    if not absent:
        return []
    # A run whose targets stop short of the rows, or one Snakemake cut short: it does
    # not evaluate jobs below one that re-runs (a forced download, a download rule
    # of a new version), so their turn comes in the next run.
    return [f"mbe-bench: {len(absent)} planned engine run(s) have no row yet "
            f"(not needed for this run's targets, or left for the next run: "
            f"run the same command again), e.g. {absent[0]}"]


def _last_line(failed: Counter, counts: Mapping[str, int], fail_on: set[str], stopped: bool,
               unavailable_datasets: int) -> str:
    """The verdict; a stopped run fails even where no row does (``failed`` then gets
    "stopped")."""
    if stopped and not failed:  # Snakemake stopped: a job failed, or Ctrl-C
        failed["stopped"] = 1
        return ("mbe-bench: FAILED: a job failed or the run was interrupted (exit "
                "status 1; see the errors above)")
    if failed:
        what = tally(failed, unavailable_datasets)
        return (f"mbe-bench: FAILED: {what} (exit status 1; the config's fail_on "
                f"lists {', '.join(sorted(fail_on)) or 'nothing'})")
    done = Counter({k: counts[k] for k in ("ok", *OUTCOMES) if counts[k] or k == "ok"})
    return f"mbe-bench: done: {tally(done, unavailable_datasets)} (exit status 0)"


def tally(counts: Mapping[str, int], unavailable_datasets: int = 0) -> str:
    """``counts`` (outcome -> number) in words with their units, as the lines above count
    them: runs (result rows) for ok, error, timeout and skipped, datasets for mismatch, and
    for unavailable the datasets with their runs: "4 error, 1 timeout run(s); 1 mismatch
    dataset(s); 8 unavailable dataset(s) (88 runs)"."""
    runs = [f"{n} {k}" for k, n in counts.items() if k not in (MISMATCH, "unavailable")]
    parts = [", ".join(runs) + " run(s)"] if runs else []
    if counts.get(MISMATCH):
        parts.append(f"{counts[MISMATCH]} mismatch dataset(s)")
    if counts.get("unavailable"):
        parts.append(f"{unavailable_datasets} unavailable dataset(s) "
                     f"({counts['unavailable']} runs)" if unavailable_datasets else
                     f"{counts['unavailable']} unavailable run(s)")
    return "; ".join(parts)


def _missing(row_paths: Iterable[str | os.PathLike], started_at: float | None) -> list[str]:
    failed, never = [], []
    for p in map(Path, row_paths):
        if p.exists():
            continue
        started = False
        for log in run_logs(p):  # the run's log, or those of its shard jobs
            try:
                started = started or started_at is None or log.stat().st_mtime >= started_at
            except OSError:
                pass
        (failed if started else never).append(str(p))
    lines = []
    if failed:
        lines.append(f"mbe-bench: {len(failed)} engine run(s) left no row (their jobs failed or "
                     f"were interrupted; see the errors above and their logs), e.g. {failed[0]} "
                     f"({run_log(Path(failed[0]))})")
        # the job's own one-line reason: Snakemake's error shows only the command that failed
        for p in failed[:MAX_REASONS]:
            log, why = job_reason(run_logs(Path(p)), started_at)
            if why:
                lines.append(f"  {p}: {why} ({log})")
        if len(failed) > MAX_REASONS:
            lines.append(f"  ... and {len(failed) - MAX_REASONS} more (their logs say why)")
    if never:
        lines.append(f"mbe-bench: {len(never)} engine run(s) did not start (the run stopped "
                     f"first; the next run does them), e.g. {never[0]}")
    return lines


MAX_REASONS = 10
# The logs of the steps after the runs (a failed one stops the run before its output)
STEP_LOGS = tuple(paths.step_log(step) for step in ("tables", "plots", "closing"))


def _tail_lines(path: Path, size: int = 65536) -> list[str]:
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - size))
            data = f.read()
    except OSError:
        return []
    return [ln.strip() for ln in data.decode(errors="replace").splitlines() if ln.strip()]


def job_reason(logs: Iterable[Path], started_at: float | None = None) -> tuple[Path | None, str]:
    """(log, one-line reason) of a failed job from its logs written since ``started_at``: the
    last ``error:`` line (every mbebench command prints one when it fails), else the log's
    last line; (None, "") when no log says anything."""
    found: tuple[Path | None, str] = (None, "")
    for log in logs:
        try:
            if started_at is not None and log.stat().st_mtime < started_at:
                continue
        except OSError:
            continue
        lines = _tail_lines(log)
        errors = [ln for ln in lines if ln.startswith("error:")]
        if errors:
            return log, one_line(errors[-1])
        if lines and not found[1]:
            found = (log, one_line(lines[-1]))
    return found


def failed_steps(root: Path, started_at: float | None) -> list[str]:
    """A line for each step after the runs (tables, plots, closing) whose log, written since
    ``started_at``, ends in an error: its one-line reason, which the console lacks."""
    out = []
    for rel in STEP_LOGS:
        log, why = job_reason([root / rel], started_at)
        if why.startswith("error:"):
            out.append(f"FAILED {Path(rel).stem}: {why} ({log})")
    return out


def run_log(row_path: Path) -> Path:
    """``logs/runs/<dataset>/<run_id>.log`` of ``results/runs/<dataset>/<run_id>.json`` (the
    run_engine rule's log, relative to the same working directory)."""
    row_path = Path(row_path)
    return row_path.parents[3] / paths.run_log(row_path.parent.name, row_path.stem)


def run_logs(row_path: Path) -> list[Path]:
    """The run's log, and the logs of its shard jobs and their gather when it is sharded
    (mbebench.gather: ``logs/runs/<dataset>/<run_id>/job-<g>-of-<G>.log``, ``gather.log``)."""
    log = run_log(row_path)
    folder = log.with_suffix("")
    if not folder.is_dir():
        return [log]
    return [log, *sorted(folder.glob("job-*.log")), *sorted(folder.glob("gather.log"))]


def verdict(rows: Sequence[Mapping], unavailable: Mapping[str, str],
            fail_on: Iterable[str] = FAIL_ON) -> None:
    """Raise :class:`RunsFailed` when a row's outcome is one ``fail_on`` lists (the
    ``check_counts`` rule): the first line counts them, then one line each."""
    fail_on = set(fail_on)
    lines, counts = [], Counter()
    if MISMATCH in fail_on:
        for ds, text in _mismatches(list(rows)).items():
            counts[MISMATCH] += 1
            lines.append(f"{ds}: {text}")
    for r in rows:
        status = r.get("status")
        if status in ("error", "timeout", "skipped") and status in fail_on:
            counts[status] += 1
            lines.append(f"{r['dataset']} {_label(r)}: {status}: {one_line(r.get('message'))}")
    if "unavailable" in fail_on:
        seen = {r["dataset"] for r in rows if r.get("status") == "unavailable"} | set(unavailable)
        for ds in sorted(seen):
            counts["unavailable"] += 1
            lines.append(f"{ds}: unavailable: {unavailable.get(ds, '')}".rstrip())
    if counts:
        runs = [f"{counts[k]} {k}" for k in ("error", "timeout", "skipped") if counts[k]]
        head = "; ".join([*([", ".join(runs) + " run(s)"] if runs else []),
                          *(f"{counts[k]} {k} dataset(s)" for k in (MISMATCH, "unavailable")
                            if counts[k])])
        if counts[MISMATCH]:
            names = ", ".join(_mismatches(list(rows)))
            head = (f"count/fingerprint mismatch in {counts[MISMATCH]} dataset(s): {names}; "
                    + head)
        raise RunsFailed("\n".join([f"{head} (the config's fail_on: "
                                    f"{', '.join(sorted(fail_on))})", *lines]))


_STATE = {"handled": False, "idle": False}


class _NothingToBeDone(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        from snakemake.common import NOTHING_TO_BE_DONE_MSG

        try:
            if NOTHING_TO_BE_DONE_MSG in record.getMessage():
                _STATE["idle"] = True
        except Exception:  # a log record that does not format is none of ours
            pass


def on_idle_run(row_paths: Sequence[str], meta_paths: Sequence[str], config: Mapping,
                dryrun: Callable[[], bool], dropped: Sequence[str] = ()) -> None:
    """Print the summary after Snakemake's "Nothing to be done" too: it calls neither
    ``onsuccess`` nor ``onerror`` then, and a run with nothing left to do is still a run
    whose results someone reads.  Its exit status stays 0: a failed check leaves its
    output missing, so a run after a failed one always has that job to do."""
    import atexit

    logging.getLogger("snakemake.logging").addHandler(_NothingToBeDone())
    workdir = os.getcwd()  # the paths are relative to --directory, which Snakemake leaves

    def _print() -> None:
        if _STATE["idle"] and not _STATE["handled"] and not dryrun():
            back = os.getcwd()
            os.chdir(workdir)
            try:
                summary = summarize(row_paths, meta_paths,
                                    fail_on=config.get("fail_on", FAIL_ON), dropped=dropped)
            finally:
                os.chdir(back)
            print(summary.text, end="", file=sys.stderr)

    atexit.register(_print)


def handler(row_paths: Sequence[str], meta_paths: Sequence[str], config: Mapping, *,
            started_at: float, failed: bool, log: Any = None,
            dropped: Sequence[str] = ()) -> None:
    """What the Snakefile's ``onsuccess`` / ``onerror`` call: print the summary last and end
    Snakemake with its exit status (``SystemExit`` leaves out Snakemake's own closing lines,
    which would bury it; the name of its log file is printed here instead)."""
    _STATE["handled"] = True
    summary = summarize(row_paths, meta_paths, fail_on=config.get("fail_on", FAIL_ON),
                        started_at=started_at, stopped=failed, dropped=dropped)
    logs = [log] if isinstance(log, (str, os.PathLike)) else list(log or [])
    if logs:
        print(f"Complete log: {', '.join(map(str, logs))}", file=sys.stderr)
    print(summary.text, end="", file=sys.stderr)
    raise SystemExit(summary.exit_code)
