"""The pipeline on a real (local, one-node) SLURM cluster through profiles/slurm.

The fixture starts slurmctld and slurmd on 127.0.0.1 (tests/slurm_cluster.py)
and stops them afterwards; without SLURM installed (.ci/install-slurm.sh) or
without root the tests skip with the reason.

Reduced smoke config (to stay well under 4 minutes on 2 cores): two datasets
(crown-8 downloaded from the shipped KONECT archive, hubs from a local edge
list), iMBEA and ParMBE with 2 processes on both, one cuMBE build on hubs.  cuMBE runs with
``simulate: false``: its job is submitted with ``--gpus=1`` onto the cluster's
fake GPU (a gres backed by /dev/null), and the engine must notice there is no
usable CUDA device and record ``skipped`` (``ok`` on a machine with a GPU).
hubs is sharded (``shards: 2``): each shard of each of its runs is a SLURM job of its own,
asking for what the whole run would (the GPU, ParMBE's CPUs), and the shards' rows are
gathered on the submitting node.
The tables must agree with a local run of the same config (counts and
fingerprints, not times)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from slurm_cluster import LocalSlurm, unavailable_reason
from workflow_helpers import copy_workflow

REPO = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slurm, pytest.mark.slow]

CORES = 2
SHARDS = 2
OVERLAY = {
    "only": ["crown-8", "hubs"],
    "datasets": {"hubs": {"path": "graphs/out.hubs", "shards": SHARDS}},
    "engines": {
        "repeats": 1,
        "timeout_s": 120,
        "parmbe": {"processes": [CORES]},
        "cumbe": {"variant": "cuMBE", "instrument": False, "rounds": False, "simulate": False,
                  "datasets": ["hubs"]},
    },
}
# Columns of summary.csv that must not depend on where the runs ran.
STABLE = ["dataset", "|U|", "|V|", "|E|", "count", "fingerprint", "agree"]


def _workdir(dest: Path) -> Path:
    copy_workflow(dest)
    # both profiles, as in the repository root: profiles/default (timed runs one at a time) is
    # read beside --profile profiles/slurm, which lifts that limit for the cluster's jobs
    shutil.copytree(REPO / "profiles", dest / "profiles")
    (dest / "overlay.yaml").write_text(yaml.safe_dump(OVERLAY))
    return dest


def _snakemake(work: Path, *args: str, timeout=1200) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable, "-m", "snakemake", "--directory", ".test",
        "--configfile", str(work / "overlay.yaml"), *args,
    ]
    res = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-6000:]}"
        )
    return res


def _rows(work: Path) -> dict[tuple[str, str], dict]:
    rows = {}
    for p in (work / ".test" / "results" / "runs").glob("*/*.json"):
        row = json.loads(p.read_text())
        rows[(row["dataset"], row["run_id"])] = row
    return rows


@pytest.fixture(scope="module")
def slurm_and_local(tmp_path_factory):
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    local = _workdir(tmp_path_factory.mktemp("local"))
    _snakemake(local, "--cores", str(CORES), "--until", "tables")

    work = _workdir(tmp_path_factory.mktemp("slurm"))
    with LocalSlurm(tmp_path_factory.mktemp("cluster")) as cluster:
        t0 = time.monotonic()
        try:
            res = _snakemake(
                work,
                "--profile", "profiles/slurm",
                "--cores", str(CORES),  # the test node's CPUs (the profile says 16)
                # no accounting database on the test cluster: squeue, polled every second
                "--slurm-status-command", "squeue",
                "--slurm-init-seconds-before-status-checks", "1",
            )
        except AssertionError as e:
            raise AssertionError(f"{e}\n{cluster.logs()}") from None
        elapsed = time.monotonic() - t0
        jobs = cluster.jobs()
    return {"local": local, "slurm": work, "log": res.stdout + res.stderr,
            "jobs": jobs, "elapsed": elapsed}


def test_every_job_ran_as_a_slurm_job(slurm_and_local):
    log = slurm_and_local["log"]
    assert "submitted with SLURM jobid" in log
    jobs = slurm_and_local["jobs"]
    comments = [j.get("Comment", "") for j in jobs]
    for rule in ("download", "convert", "run_engine", "run_shards", "tables", "plots"):
        assert any(c.startswith(f"rule_{rule}") for c in comments), (rule, comments)
    # adding up a few rows is no job for the cluster: it runs where Snakemake runs
    assert not any(c.startswith("rule_gather_shards") for c in comments), comments
    assert all(j["JobState"] == "COMPLETED" for j in jobs), [
        (j["Comment"], j["JobState"]) for j in jobs
    ]


def _job(jobs, run_id: str, dataset: str = "crown-8", shard: int | None = None) -> dict:
    name = (f"rule_run_engine_wildcards_{dataset}_{run_id}" if shard is None else
            f"rule_run_shards_wildcards_{dataset}_{run_id}_{shard}_{SHARDS}")
    matches = [j for j in jobs if j.get("Comment") == name]
    assert len(matches) == 1, (name, [j.get("Comment") for j in jobs])
    return matches[0]


def test_engine_jobs_ask_for_gpus_cpus_memory_and_time(slurm_and_local):
    jobs = slurm_and_local["jobs"]
    timelimit = "00:17:00"  # engines.timeout_s 120 s -> 2 min + 15 min
    for shard in range(SHARDS):  # hubs: every shard is a job asking for what its run would
        cumbe = _job(jobs, "cumbe-cuMBE", "hubs", shard)
        assert cumbe.get("TresPerJob") == "gres:gpu:1", cumbe
        assert cumbe["NumCPUs"] == "1" and cumbe["TimeLimit"] == timelimit
        imbea = _job(jobs, "imbea", "hubs", shard)
        assert imbea.get("TresPerJob") in (None, "(null)"), imbea
        assert (imbea["NumCPUs"], imbea["TimeLimit"]) == ("1", timelimit)
        parmbe = _job(jobs, f"parmbe-p{CORES}", "hubs", shard)
        assert parmbe["NumCPUs"] == str(CORES) and parmbe.get("TresPerJob") in (None, "(null)")
    imbea = _job(jobs, "imbea")
    assert imbea.get("TresPerJob") in (None, "(null)"), imbea
    assert (imbea["NumCPUs"], imbea["MinMemoryNode"], imbea["TimeLimit"]) == (
        "1", "2000M", timelimit)
    parmbe = _job(jobs, f"parmbe-p{CORES}")
    assert parmbe["NumCPUs"] == str(CORES) and parmbe.get("TresPerJob") in (None, "(null)")
    assert parmbe["MinMemoryNode"] == f"{1500 + 500 * CORES}M"
    convert = next(j for j in jobs if j.get("Comment", "").startswith("rule_convert"))
    assert convert["MinMemoryNode"] == "16000M", convert  # profiles/slurm set-resources


def test_same_results_as_a_local_run(slurm_and_local):
    local, slurm = _rows(slurm_and_local["local"]), _rows(slurm_and_local["slurm"])
    assert set(slurm) == set(local) and len(local) == 5, sorted(slurm)
    for key, row in slurm.items():
        want = local[key]
        assert (row["status"], row["count"], row["fingerprint"]) == (
            want["status"], want["count"], want["fingerprint"]), (key, row["message"])
        expected = ("ok", "skipped") if row["engine"] == "cumbe" else ("ok",)
        assert row["status"] in expected, (key, row["status"], row["message"])
    s = pd.read_csv(slurm_and_local["slurm"] / ".test/results/tables/summary.csv")
    l_ = pd.read_csv(slurm_and_local["local"] / ".test/results/tables/summary.csv")
    pd.testing.assert_frame_equal(s[STABLE], l_[STABLE])
    assert s.set_index("dataset").loc["crown-8", "count"] == 2**8 - 2
    assert s.set_index("dataset")["shards"].to_dict() == {"crown-8": 1, "hubs": SHARDS}


def test_sharded_runs_are_gathered_from_their_shard_jobs(slurm_and_local):
    rows = _rows(slurm_and_local["slurm"])
    shards = slurm_and_local["slurm"] / ".test/results/runs/hubs"
    for run_id in ("imbea", f"parmbe-p{CORES}"):
        row = rows[("hubs", run_id)]
        assert row["status"] == "ok" and row["shards"]["n"] == SHARDS, row["message"]
        parts = [json.loads((shards / run_id / f"shard-{i}-of-{SHARDS}.json").read_text())
                 for i in range(SHARDS)]
        assert [p["params"]["shard"] for p in parts] == [f"{i}/{SHARDS}" for i in range(SHARDS)]
        assert sum(p["count"] for p in parts) == row["count"] == rows[("hubs", "imbea")]["count"]
        assert row["algo_s_median"] == max(p["algo_s_median"] for p in parts)


def test_gpu_run_without_a_usable_device_is_skipped_not_failed(slurm_and_local):
    row = _rows(slurm_and_local["slurm"])[("hubs", "cumbe-cuMBE")]
    if row["status"] == "ok":
        pytest.skip("this machine has a CUDA device: cuMBE ran")
    assert row["status"] == "skipped" and row["count"] is None and row["message"], row

