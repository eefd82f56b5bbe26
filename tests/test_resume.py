"""mbebench.resume: a row that finished while Snakemake was stopping is kept for the next run,
and taken only by a job of the very same run (issue 33, item 3)."""

from __future__ import annotations

import json
import os
import time

from mbebench import resume


def _row(**kw) -> dict:
    row = {"dataset": "a", "run_id": "imbea", "engine": "imbea", "label": "iMBEA",
           "variant": None, "timed": True, "entry": "baselines.imbea:run", "command": None,
           "repeats": 1, "timeout_s": 60.0, "simulated": False, "csr": "3x3/5/crc32:00000001",
           "params": {"side": "smaller", "shard": "0/1"}, "status": "ok", "count": 4,
           "started_at": "2026-11-27T15:00:00+00:00"}
    row.update(kw)
    return row


def _put(tmp_path, run_id: str, row: dict, age_s: float = 0.0) -> str:
    p = tmp_path / "results" / "runs" / "a" / f"{run_id}.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(row))
    os.utime(p, (time.time() - age_s, time.time() - age_s))
    return str(p)


def test_only_rows_finished_in_the_stopped_run_are_kept(tmp_path):
    started = time.time() - 10
    fresh = _put(tmp_path, "imbea", _row())
    old = _put(tmp_path, "old", _row(run_id="old"), age_s=60)  # an earlier run's: recorded
    skipped = _put(tmp_path, "cumbe", _row(run_id="cumbe", status="skipped"))
    missing = str(tmp_path / "results/runs/a/never.json")
    made = resume.keep([fresh, old, skipped, missing], started)
    assert made == [resume.copy_path(fresh)]
    assert made[0] == tmp_path / "results/stopped/a/imbea.json"
    assert json.loads(made[0].read_text()) == _row()


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


def test_a_run_that_ends_well_clears_the_copies(tmp_path):
    resume.keep([_put(tmp_path, "imbea", _row())], 0.0)
    assert (tmp_path / "results/stopped").is_dir()
    resume.clear(tmp_path)
    assert not (tmp_path / "results/stopped").exists()
    resume.clear(tmp_path)  # nothing there: nothing to do
