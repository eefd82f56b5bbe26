"""mbebench.resume: a row that finished while Snakemake was stopping is kept for the next run,
and taken only by a job of the very same run (issue 33, item 3)."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from pathlib import Path

from mbebench import resume


def _row(**kw) -> dict:
    row = {"dataset": "a", "run_id": "imbea", "engine": "imbea", "label": "iMBEA",
           "variant": None, "timed": True, "entry": "baselines.imbea:run", "command": None,
           "repeats": 1, "timeout_s": 60.0, "simulated": False, "csr": "3x3/5/crc32:00000001",
           "params": {"side": "smaller", "shard": "0/1"}, "status": "ok", "count": 4,
           "algo_s": [0.5], "started_at": "2026-11-27T15:00:00+00:00"}
    row.update(kw)
    return row


def _put(tmp_path, run_id: str, row: dict, age_s: float = 0.0) -> str:
    p = tmp_path / "results" / "runs" / "a" / f"{run_id}.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(row))
    os.utime(p, (time.time() - age_s, time.time() - age_s))
    return str(p)


def test_only_rows_finished_after_the_interrupt_are_kept(tmp_path):
    interrupted = time.time() - 10
    fresh = _put(tmp_path, "imbea", _row())
    old = _put(tmp_path, "old", _row(run_id="old"), age_s=60)  # before it: recorded
    skipped = _put(tmp_path, "cumbe", _row(run_id="cumbe", status="skipped"))
    missing = str(tmp_path / "results/runs/a/never.json")
    made = resume.keep([fresh, old, skipped, missing], interrupted)
    assert made == [resume.copy_path(fresh)]
    assert made[0] == tmp_path / "results/stopped/a/imbea.json"
    assert json.loads(made[0].read_text()) == _row()
    made[0].unlink()
    assert resume.keep([fresh], None) == []  # failed without an interrupt: all recorded


def test_the_interrupt_is_noted_and_sigint_still_interrupts():
    before = signal.getsignal(signal.SIGINT)
    # Python's own handler as a command starts with it (a test before this one in the same
    # process may have left another)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        resume.note_interrupt()
        assert resume.interrupted_at() is None
        t0 = time.time()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler runs at the next bytecode
        assert t0 <= resume.interrupted_at() <= time.time()
    finally:
        signal.signal(signal.SIGINT, before)
        resume._STOP.clear()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        resume.note_interrupt()  # an ignored SIGINT stays ignored
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_kept_row_is_taken_by_the_same_run_only(tmp_path):
    row_path = _put(tmp_path, "imbea", _row())
    resume.keep([row_path], 0.0)
    os.unlink(row_path)  # what --rerun-incomplete does before the job
    want = {k: v for k, v in _row().items() if k not in ("status", "count", "started_at")}
    for other in ({"params": {"side": "larger", "shard": "0/1"}}, {"csr": "3x3/5/crc32:2"},
                  {"repeats": 3}, {"timeout_s": 5.0}):
        resume.keep([_put(tmp_path, "imbea", _row())], 0.0)
        os.unlink(row_path)
        assert resume.take(row_path, {**want, **other}) is None, other
        assert not os.path.exists(row_path)
        assert not resume.copy_path(row_path).exists()  # a copy of another run is dropped
    resume.keep([_put(tmp_path, "imbea", _row())], 0.0)
    os.unlink(row_path)
    assert resume.take(row_path, want) == _row()
    assert json.loads(open(row_path).read()) == _row()
    assert not resume.copy_path(row_path).exists()  # taken once
    assert resume.take(row_path, want) is None


def test_a_copy_lives_for_one_run(tmp_path):
    (copy,) = resume.keep([_put(tmp_path, "imbea", _row())], 0.0)
    os.utime(copy, (time.time() - 60, time.time() - 60))
    (newer,) = resume.keep([_put(tmp_path, "other", _row(run_id="other"))], 0.0)
    resume.clear(tmp_path, before=time.time() - 30)  # a stopped run: the last run's go
    assert not copy.exists() and newer.exists()
    resume.clear(tmp_path)  # a run that ended well: all go
    assert not newer.exists() and not (tmp_path / "results/stopped").exists()
    resume.clear(tmp_path)  # nothing there: nothing to do


@pytest.mark.parametrize("where", ["x.json", "out/x.json", "/x.json", "a/b/c/x.json",
                                   "a/results/other/d/x.json"])
def test_a_row_outside_the_runs_folder_is_neither_kept_nor_taken(tmp_path, where):
    """``mbe-bench run --out`` by hand may write its row anywhere: no copy path, nothing kept
    or taken, no error."""
    assert resume.copy_path(where) is None
    p = tmp_path / where.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(_row()))
    assert resume.copy_path(p) is None
    assert resume.keep([p], 0.0) == []
    assert resume.take(p, _row()) is None
    assert json.loads(p.read_text()) == _row()


def test_relative_and_absolute_rows_of_the_runs_folder_have_copies(tmp_path):
    assert resume.copy_path("results/runs/a/x.json") == Path("results/stopped/a/x.json")
    assert resume.copy_path(tmp_path / "results/runs/a/x.json") == \
        tmp_path / "results/stopped/a/x.json"
