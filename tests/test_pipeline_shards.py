"""Scatter/gather in the pipeline (issue 18 item 3): ``datasets.<d>.shards: 3`` scatters
every engine run of the dataset into 3 shard jobs gathered into its one row; a shard
killed from outside is redone alone by the next run (its finished siblings are kept, to
the byte), in one job per shard and with ``shards_per_job: 3`` alike, and so is a shard
row deleted by hand; a failed shard makes an error row naming it; a new shard count redoes
only that dataset's runs.  The
gathered count and fingerprint equal the unsharded run's of the same graph."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from workflow_helpers import copy_workflow, fake_engine_env

pytestmark = pytest.mark.slow

SUMMARY = "results/tables/summary.csv"
HUBS = {"path": "graphs/out.hubs"}
OVERLAY = {
    "only": ["hubs", "hubs-job", "hubs-whole"],
    # the error row of the failing shard is the point here: only disagreement fails the run
    "fail_on": ["mismatch"],
    "datasets": {"hubs": {**HUBS, "shards": 3},
                 "hubs-job": {**HUBS, "shards": 3, "shards_per_job": 3},
                 "hubs-whole": HUBS},
    "engines": {"repeats": 1, "parmbe": {"processes": [1]}, "cumbe": {"enabled": False}},
}


def _snakemake(work: Path, env, check=True):
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "--directory", ".test",
           "--keep-going", SUMMARY, "--configfile", str(work / "overlay.yaml")]
    res = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=900, env=env)
    if check and res.returncode != 0:
        raise AssertionError(f"snakemake failed:\n{res.stdout[-3000:]}\n{res.stderr[-6000:]}")
    return res


def _row(work: Path, ds: str, run_id: str) -> dict:
    return json.loads((work / ".test/results/runs" / ds / f"{run_id}.json").read_text())


def _shard_files(work: Path) -> dict[str, int]:
    runs = work / ".test/results/runs"
    return {str(p.relative_to(runs)): p.stat().st_mtime_ns for p in runs.glob("*/*/shard-*.json")}


def test_a_killed_shard_is_redone_alone_and_the_gathered_row_is_the_whole_runs(tmp_path):
    (tmp_path / "w").mkdir()
    work = copy_workflow(tmp_path / "w")
    (work / "overlay.yaml").write_text(yaml.safe_dump(OVERLAY))
    starts, flag = tmp_path / "starts", tmp_path / "kill"
    env = {**fake_engine_env(tmp_path, {"imbea": "fake_engines:shards_imbea",
                                        "parmbe": "fake_engines:shards_imbea"}),
           "MBEBENCH_TEST_SHARD_LOG": str(starts), "MBEBENCH_TEST_KILL_FLAG": str(flag),
           "MBEBENCH_TEST_KILL_SHARD": "hubs imbea shard 1/3,hubs-job imbea shard 1/3",
           "MBEBENCH_TEST_FAIL_SHARD": "hubs parmbe-p1 shard 2/3"}

    # 1: two shards are killed from outside (no row, their jobs fail), one fails (a row)
    flag.touch()
    res = _snakemake(work, env, check=False)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-3000:]
    runs = work / ".test/results/runs"
    assert not (runs / "hubs/imbea.json").exists() and not (runs / "hubs-job/imbea.json").exists()
    first = _shard_files(work)
    for ds in ("hubs", "hubs-job"):
        assert {k for k in first if k.startswith(f"{ds}/imbea/")} == {
            f"{ds}/imbea/shard-0-of-3.json", f"{ds}/imbea/shard-2-of-3.json"}
    assert not (runs / "hubs-job/imbea/job-0-of-1.json").exists()  # the job failed
    failed = _row(work, "hubs", "parmbe-p1")
    assert failed["status"] == "error" and failed["count"] is None
    assert failed["message"].startswith("shard 2/3 error: RuntimeError: boom on shard 2/3")
    assert failed["shards"]["status"] == ["ok", "ok", "error"]
    assert "ERROR hubs ParMBE p=1: shard 2/3 error" in out  # the closing summary
    ran = starts.read_text().splitlines()
    assert ran.count("hubs imbea shard 0/3") == 1 and ran.count("hubs imbea shard 1/3") == 1

    # 2: the same command redoes exactly the two killed shards, nothing else
    flag.unlink()
    _snakemake(work, env)
    assert sorted(starts.read_text().splitlines()[len(ran):]) == [
        "hubs imbea shard 1/3", "hubs-job imbea shard 1/3"]
    second = _shard_files(work)
    assert {k: second[k] for k in first} == first  # finished shards untouched
    whole = _row(work, "hubs-whole", "imbea")
    for ds in ("hubs", "hubs-job"):
        row = _row(work, ds, "imbea")
        assert (row["status"], row["count"], row["fingerprint"]) == (
            "ok", whole["count"], whole["fingerprint"])
        assert row["shards"]["n"] == 3 and row["params"]["shard"] == "0/1"
        assert row["algo_s"] == [max(row["shards"]["algo_s_median"])]  # one repeat
    assert _row(work, "hubs-job", "imbea")["shards"]["per_job"] == 3
    summary = pd.read_csv(work / ".test" / SUMMARY).set_index("dataset")
    assert summary["shards"].to_dict() == {"hubs": 3, "hubs-job": 3, "hubs-whole": 1}
    assert summary.loc["hubs", "iMBEA"] == _row(work, "hubs", "imbea")["algo_s_median"]
    res = subprocess.run([sys.executable, "-m", "mbebench", "status", "--dir", ".test", "--json"],
                         cwd=work, capture_output=True, text=True, env=env)
    states = {(r["dataset"], r["run_id"]): r["state"] for r in json.loads(res.stdout)["runs"]}
    assert states.pop(("hubs", "parmbe-p1")) == "failed"
    assert set(states.values()) == {"finished"} and len(states) == 5

    # a shard row that went missing (deleted by hand) is redone alone: its job's retry token
    (runs / "hubs-job/imbea/shard-2-of-3.json").unlink()
    before = len(starts.read_text().splitlines())
    _snakemake(work, env)
    assert starts.read_text().splitlines()[before:] == ["hubs-job imbea shard 2/3"]
    assert _row(work, "hubs-job", "imbea")["fingerprint"] == whole["fingerprint"]

    # 3: another shard count redoes that dataset's runs with it, and only those
    OVERLAY2 = {**OVERLAY, "datasets": {**OVERLAY["datasets"], "hubs": {**HUBS, "shards": 2}}}
    (work / "overlay.yaml").write_text(yaml.safe_dump(OVERLAY2))
    before = len(starts.read_text().splitlines())
    _snakemake(work, env)
    assert sorted(starts.read_text().splitlines()[before:]) == [
        f"hubs {run} shard {i}/2" for run in ("imbea", "parmbe-p1") for i in (0, 1)]
    row = _row(work, "hubs", "imbea")
    assert (row["count"], row["fingerprint"], row["shards"]["n"]) == (
        whole["count"], whole["fingerprint"], 2)
    assert _row(work, "hubs", "parmbe-p1")["status"] == "ok"
    assert all(p in _shard_files(work) for p in first)  # the 3-shard rows are still there
