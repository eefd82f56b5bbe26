"""Rows that finished while Snakemake was stopping, kept for the next run.

After Ctrl-C (SIGINT to Snakemake alone, as ``kill -INT`` or a scheduler sends it), Snakemake
waits for its running jobs.  A job that then finishes writes its row, and the closing summary
counts it, but Snakemake never records the job: it marks the row incomplete, and the next run
(``--rerun-incomplete``) deletes the row and runs the engine again.

So when a run stops (the Snakefile's ``onerror``), :func:`keep` copies each row written during
it to ``results/stopped/<dataset>/<run_id>.json``.  A job of a later run whose copy is there
and was made for this very run (:func:`take`: the same engine, parameters, repeats, timeout
and graph, :func:`mbebench.gather.run_key`) writes the copy as its row instead of running the
engine.  A run that ends without failing removes the copies (:func:`clear`): every job it
needed ran, so a copy left then is of a job Snakemake did record, and a later
``--forcerun`` must run it again.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

from mbebench import atomic

STOPPED = Path("results") / "stopped"
# A row the engine gave; skipped (no CUDA device here) and unavailable rows cost nothing to
# redo, and their answer may be another one next time.
REUSABLE = ("ok", "error", "timeout")


def _root(row_path: str | os.PathLike) -> Path:
    """The working directory of ``results/runs/<dataset>/<run_id>.json``."""
    return Path(row_path).parents[3]


def copy_path(row_path: str | os.PathLike) -> Path:
    """Where :func:`keep` puts the copy of the row at ``row_path``."""
    p = Path(row_path)
    return _root(p) / STOPPED / p.parent.name / p.name


def keep(row_paths: Iterable[str | os.PathLike], started_at: float) -> list[Path]:
    """Copy each of ``row_paths`` written since ``started_at`` (during this run) that is a
    finished row; the copies made."""
    made = []
    for p in map(Path, row_paths):
        try:
            if p.stat().st_mtime < started_at:
                continue
            row = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(row, dict) and row.get("status") in REUSABLE:
            dest = copy_path(p)
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
    try:
        row = json.loads(src.read_text())
    except (OSError, ValueError):
        return None
    if not (isinstance(row, dict) and row.get("status") in REUSABLE
            and run_key(row) == run_key(want)):
        src.unlink(missing_ok=True)
        return None
    atomic.write_json(row_path, row)
    src.unlink(missing_ok=True)
    return row


def clear(root: str | os.PathLike = ".") -> None:
    """Remove every kept copy under ``root`` (a run that ended without failing)."""
    shutil.rmtree(Path(root) / STOPPED, ignore_errors=True)
