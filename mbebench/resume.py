"""Rows that finished while Snakemake was stopping, kept for the next run.

After Ctrl-C (SIGINT to Snakemake alone, as ``kill -INT`` or a scheduler sends it), Snakemake
waits for its running jobs.  A job that then finishes writes its row, and the closing summary
counts it, but Snakemake never records the job: it marks the row incomplete, and the next run
(``--rerun-incomplete``) deletes the row and runs the engine again.

So Snakemake's main process notes when SIGINT reached it (:func:`note_interrupt`), and when
the run stops (the Snakefile's ``onerror``) :func:`keep` copies each row written after that
to ``results/stopped/<dataset>/<run_id>.json``; a run that failed without an interrupt keeps
none (Snakemake recorded its finished jobs).  A job of a later run whose copy is there and
was made for this very run (:func:`take`: the same engine, parameters, repeats, timeout and
graph, :func:`mbebench.gather.run_key`) writes the copy as its row instead of running the
engine.  A copy lives for one run that gets as far as its handlers (:func:`clear`): a later
``--forcerun`` must run the engine again.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from mbebench import atomic, paths
from mbebench.row_schema import row_or_none

STOPPED = Path(paths.STOPPED)
# A row the engine gave; skipped (no CUDA device here) and unavailable rows cost nothing to
# redo, and their answer may be another one next time.
REUSABLE = ("ok", "error", "timeout")


_STOP: dict[str, float] = {}


def note_interrupt() -> None:
    """Note the time SIGINT first reaches this process (Snakemake's main process), then let
    the handler there was (Python's: KeyboardInterrupt) act as before.  An ignored SIGINT
    stays ignored."""
    before = signal.getsignal(signal.SIGINT)
    if not callable(before):
        return

    def noted(signum, frame):
        _STOP.setdefault("at", time.time())
        before(signum, frame)

    try:
        signal.signal(signal.SIGINT, noted)
    except ValueError:  # not the main thread: nothing to note
        pass


def interrupted_at() -> float | None:
    """When SIGINT reached this process (:func:`note_interrupt`); None: it did not."""
    return _STOP.get("at")


def _root(row_path: str | os.PathLike) -> Path | None:
    """The working directory of ``results/runs/<dataset>/<run_id>.json``; None for a row
    written anywhere else (``mbe-bench run --out`` by hand: Snakemake never ran it, so
    nothing of it is kept or taken)."""
    p = Path(row_path)
    if len(p.parents) < 4 or p.parents[1].relative_to(p.parents[3]) != Path(paths.RUNS):
        return None
    return p.parents[3]


def copy_path(row_path: str | os.PathLike) -> Path | None:
    """Where :func:`keep` puts the copy of the row at ``row_path`` (None: nowhere, see
    :func:`_root`)."""
    p = Path(row_path)
    root = _root(p)
    return None if root is None else root / STOPPED / p.parent.name / p.name


def keep(row_paths: Iterable[str | os.PathLike], since: float | None) -> list[Path]:
    """Copy each of ``row_paths`` written since ``since`` (the interrupt; None: none came,
    nothing to keep) that is a finished row; the copies made."""
    made = []
    if since is None:
        return made
    for p in map(Path, row_paths):
        try:
            if p.stat().st_mtime < since:
                continue
        except OSError:
            continue
        row = row_or_none(p)
        dest = copy_path(p)
        if dest is not None and row is not None and row["status"] in REUSABLE:
            dest.parent.mkdir(parents=True, exist_ok=True)
            atomic.write_json(dest, row)
            made.append(dest)
    return made


def take(row_path: str | os.PathLike, want: Mapping) -> dict | None:
    """The kept row of ``row_path`` when it is a finished row of the run ``want`` describes
    (the row the job would write: its run key and ``csr``), written to ``row_path``; None
    when there is none (the job runs).  A copy of another run is removed."""
    from mbebench.gather import run_key

    src = copy_path(row_path)
    if src is None:
        return None
    row = row_or_none(src)
    if row is None and not src.exists():
        return None
    if not (row is not None and row["status"] in REUSABLE and run_key(row) == run_key(want)):
        src.unlink(missing_ok=True)
        return None
    atomic.write_json(row_path, row)
    src.unlink(missing_ok=True)
    return row


def clear(root: str | os.PathLike = ".", before: float | None = None) -> None:
    """Remove the kept copies under ``root`` made before ``before`` (this run's start: they
    were the last run's, for this run to take), or all of them (None)."""
    top = Path(root) / STOPPED
    for p in top.glob("*/*.json"):
        try:
            if before is None or p.stat().st_mtime < before:
                p.unlink()
        except OSError:
            pass
    for folder in [*top.glob("*"), top]:  # the empty ones
        try:
            folder.rmdir()
        except OSError:
            pass
