"""``python -m mbebench status``: finished, running (last progress line, shards done),
failed (the one-line error), stopped and not started runs, from results/ and logs/ only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mbebench import plan, status
from mbebench.plan import RunSpec, Sharding

NOW = time.time()
PROGRESS = ("parmbe progress: A parmbe-p2: tasks 3/40 (cost 12.0%), 812 bicliques, 270/s, "
            "ETA 22 s")


def _runs():
    return {r: RunSpec(r, r.split("-")[0], r, {"shard": "0/1"})
            for r in ("imbea", "parmbe-p2", "cumbe", "plug", "other")}


def _put(root: Path, rel: str, text: str, age_s: float = 0.0) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    os.utime(p, (NOW - age_s, NOW - age_s))
    return p


def _row(status_, **kw):
    row = {"dataset": "A", "run_id": "x", "engine": "imbea", "status": status_,
           "count": 12 if status_ == "ok" else None, "algo_s": [0.25], "algo_s_median": 0.25,
           "message": None}
    row.update(kw)
    return json.dumps(row)


def _pipeline(root: Path) -> None:
    shards = {"A": Sharding(1, 1), "B": Sharding(3, 1)}
    status.write_plan(root / status.PLAN, ["A", "B"], _runs(), shards)
    # A: one of each state
    _put(root, "results/runs/A/imbea.json", _row("ok"))
    _put(root, "logs/runs/A/parmbe-p2.log", "compiling\n" + PROGRESS + "\n", age_s=3)
    _put(root, "results/runs/A/cumbe.json", _row("error", message="RuntimeError: boom\nmore"))
    _put(root, "logs/runs/A/plug.log", "start\nerror: dataset 'A' run plug: the engine process"
         " was killed by SIGKILL from outside\n", age_s=600)
    _put(root, "logs/runs/A/other.log", "starting\n", age_s=600)
    # B, sharded 3 ways: imbea running (one shard done), cumbe with a failed shard, the
    # rest not started; parmbe finished and gathered
    _put(root, "results/runs/B/imbea/shard-0-of-3.json", _row("ok"))
    _put(root, "logs/runs/B/imbea/job-0-of-3.log", "done\n", age_s=400)
    _put(root, "logs/runs/B/imbea/job-1-of-3.log",
         PROGRESS.replace("A parmbe-p2", "B imbea shard 1/3") + "\n", age_s=1)
    _put(root, "results/runs/B/cumbe/shard-2-of-3.json", _row("error", message="no memory"))
    _put(root, "results/runs/B/parmbe-p2.json",
         _row("ok", shards={"n": 3, "time_sum_s": 0.6}, count=40))


def test_every_state_from_the_files(tmp_path):
    _pipeline(tmp_path)
    states, written = status.status(tmp_path, now=NOW)
    got = {(s.dataset, s.run_id): (s.state, s.detail) for s in states}
    assert written and len(states) == 10
    assert got[("A", "imbea")] == ("finished", "count 12, 0.25 s")
    assert got[("A", "parmbe-p2")] == ("running", PROGRESS)
    assert got[("A", "cumbe")] == ("failed", "error: RuntimeError: boom more")
    assert got[("A", "plug")][0] == "failed" and "killed by SIGKILL" in got[("A", "plug")][1]
    assert got[("A", "other")] == ("stopped", "last log line: starting")
    state, detail = got[("B", "imbea")]
    assert state == "running" and detail.startswith("shards 1/3 done; parmbe progress: B imbea "
                                                    "shard 1/3: tasks 3/40")
    assert got[("B", "cumbe")] == ("failed", "shards 1/3 done; shard 2/3 error: no memory")
    assert got[("B", "parmbe-p2")] == ("finished", "count 40, 0.25 s (slowest of 3 shards; "
                                                   "their sum 0.6 s)")
    assert got[("B", "other")] == ("not started", "shards 0/3 done")
    # a while later nothing writes to the logs any more: the running runs stopped
    later = {(s.dataset, s.run_id): s.state for s in status.status(tmp_path, now=NOW + 3600)[0]}
    assert later[("A", "parmbe-p2")] == later[("B", "imbea")] == "stopped"


def test_cli_text_and_json(tmp_path):
    _pipeline(tmp_path)
    res = subprocess.run([sys.executable, "-m", "mbebench", "status", "--dir", str(tmp_path)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("mbe-bench status: 10 run(s) (plan of ")
    assert "2 finished" in lines[0] and "not started" in lines[0]
    assert "A" in lines and any(ln.split()[:2] == ["cumbe", "failed"] for ln in lines)
    res = subprocess.run([sys.executable, "-m", "mbebench", "status", "--dir", str(tmp_path),
                          "--json"], capture_output=True, text=True)
    runs = json.loads(res.stdout)["runs"]
    assert {r["state"] for r in runs} >= {"finished", "failed", "not started"}
    assert next(r for r in runs if r["dataset"] == "B" and r["run_id"] == "imbea")["shards"] == 3


def test_without_a_plan_the_runs_on_disk(tmp_path):
    _pipeline(tmp_path)
    (tmp_path / status.PLAN).unlink()
    states, written = status.status(tmp_path, now=NOW)
    got = {(s.dataset, s.run_id): s for s in states}
    assert written is None
    assert got[("A", "imbea")].state == "finished" and got[("A", "parmbe-p2")].state == "running"
    assert got[("B", "imbea")].shards == 3 and got[("B", "imbea")].state == "running"
    assert ("B", "other") not in got  # nothing on disk: not known without the plan
    assert "no results/plan.json" in status.format_status(states, written).splitlines()[0]


def test_plan_entries_name_shard_rows_and_job_logs():
    shards = {"B": Sharding(5, 2)}
    (entry,) = status.plan_entries(["B"], {"imbea": _runs()["imbea"]}, shards)
    assert entry["shard_rows"] == plan.shard_rows("B", "imbea", shards["B"])
    assert entry["logs"] == [f"logs/runs/B/imbea/job-{g}-of-3.log" for g in range(3)]


def test_a_finished_run_of_a_dataset_whose_runs_disagree_is_a_mismatch(tmp_path):
    """Issue 33, item 5: a run whose count disagrees with the others' showed as finished."""
    _pipeline(tmp_path)
    _put(tmp_path, "results/runs/A/cumbe.json", _row("ok", run_id="cumbe", count=13))
    got = {(s.dataset, s.run_id): s for s in status.status(tmp_path, now=NOW)[0]}
    for run_id in ("imbea", "cumbe"):
        st = got[("A", run_id)]
        assert st.state == "mismatch", (run_id, st)
        assert "the dataset's runs disagree: " in st.detail and "-> 13" in st.detail
    assert got[("B", "parmbe-p2")].state == "finished"  # B's one finished run agrees with itself
    head = status.format_status(list(got.values()), None).splitlines()[0]
    assert "2 mismatch" in head


def test_status_of_a_missing_directory_is_a_one_line_error(tmp_path):
    """Issue 33, item 5: `status --dir <typo>` printed "no runs" with exit status 0."""
    typo = tmp_path / "tset"
    res = subprocess.run([sys.executable, "-m", "mbebench", "status", "--dir", str(typo)],
                         capture_output=True, text=True)
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.strip().splitlines() == [
        f"error: --dir {typo}: no such directory (the pipeline's working directory, holding "
        "results/ and logs/)"]


def test_a_plan_that_cannot_be_written_is_one_line_naming_it(tmp_path, capsys):
    """Issue 33, item 7: a read-only results/ gave write_plan's PermissionError traceback.
    (The tests run as root too, where a read-only folder is writable: a folder in the plan
    file's place fails the same way.)"""
    path = tmp_path / "results" / "plan.json"
    path.mkdir(parents=True)
    with pytest.raises(SystemExit) as e:
        status.write_plan_or_exit(path, ["A"], _runs(), {"A": Sharding(1, 1)})
    assert e.value.code == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: cannot write {path} (Is a directory: ")
    assert line.endswith("which must be writable")
