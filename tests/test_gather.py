"""Scatter/gather (issue 18 item 3): shard rows written one per shard by one process, a
killed shard redone alone, and the gathered row (count and fingerprint summed, the
slowest shard's time, an error naming a failed shard, never a partial count)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mbebench import csr, gather, plan
from mbebench.fingerprint import to_hex
from mbebench.oracle import count_and_fingerprint

HERE = Path(__file__).resolve().parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
MASK = (1 << 64) - 1


def _row(i, n, *, status="ok", count=10, fp=1, algo=(1.0,), params=None, **extra):
    return {
        "schema_version": 3, "dataset": "D", "run_id": "imbea", "engine": "imbea",
        "label": "iMBEA", "variant": None, "timed": True, "entry": "baselines.imbea:run",
        "command": None, "repeats": len(algo), "timeout_s": 60.0, "simulated": False,
        "csr": "3x3/5/crc32:00000001",
        "params": {"side": "auto", **(params or {}), "shard": f"{i}/{n}"},
        "status": status, "message": None if status == "ok" else f"{status} here",
        "count": count if status == "ok" else None,
        "fingerprint": to_hex(fp) if status == "ok" else None,
        "algo_s": list(algo) if status == "ok" else [], "wall_s": [a + 0.5 for a in algo],
        "algo_s_median": float(np.median(algo)) if status == "ok" else None,
        "compile_s": 0.3, "peak_rss_bytes": 100 + i, "graph": {"n_left": 3, "n_right": 3,
                                                                "n_edges": 5},
        "stats": {"shard": f"{i}/{n}", "shard_tasks": 2, "total_tasks": 6, "nodes": 7,
                  "partition": "a" * 16,
                  "worker_busy_s": [0.1 * (i + 1)], "side": "left"},
        "host": {"hostname": f"node{i}"}, "env": {"cpu_model": "x"},
        "started_at": f"2026-01-01T00:00:0{i}+00:00",
        "finished_at": f"2026-01-01T00:00:1{i}+00:00", **extra,
    }


def _write(folder: Path, rows):
    folder.mkdir(parents=True, exist_ok=True)
    for r in rows:
        i, n = map(int, r["params"]["shard"].split("/"))
        (folder / f"shard-{i}-of-{n}.json").write_text(json.dumps(r))


def test_sums_and_the_slowest_shard(tmp_path):
    big = MASK - 5  # the fingerprint's sum wraps
    rows = [_row(0, 3, count=4, fp=big, algo=(1.0, 3.0, 2.0)),
            _row(1, 3, count=5, fp=9, algo=(2.5, 1.0, 1.0)),
            _row(2, 3, count=6, fp=2, algo=(0.5, 0.5, 4.0))]
    _write(tmp_path / "R", rows)
    out = gather.gather(gather.load(tmp_path / "R", 3, dataset="D", run_id="imbea"), per_job=2)
    assert out["status"] == "ok" and out["count"] == 15
    assert out["fingerprint"] == to_hex((big + 9 + 2) & MASK)
    assert out["algo_s"] == [2.5, 3.0, 4.0] and out["algo_s_median"] == 3.0  # per repeat max
    sh = out["shards"]
    assert (sh["n"], sh["per_job"], sh["time_s"]) == (3, 2, 3.0)
    assert sh["time_max_s"] == 2.0 and sh["time_sum_s"] == pytest.approx(2.0 + 1.0 + 0.5)
    assert sh["count"] == [4, 5, 6] and sh["hosts"] == ["node0", "node1", "node2"]
    assert sh["elapsed_s"] == 12.0 and sh["rows"][1] == "shard-1-of-3.json"
    assert out["params"]["shard"] == "0/1" and "csr" not in out
    assert out["stats"]["worker_busy_s"] == pytest.approx([0.1, 0.2, 0.3])
    assert out["stats"]["nodes"] == 21 and out["stats"]["shard_tasks"] == 6
    assert out["stats"]["total_tasks"] == 6 and out["stats"]["shards"] == 3
    assert out["peak_rss_bytes"] == 102
    from mbebench.rows import validate_row

    validate_row(out, "gathered")


@pytest.mark.parametrize("bad,status,text", [
    ("error", "error", "shard 1/3 error: error here (2 of 3 shards ok; no partial count)"),
    ("timeout", "timeout", "shard 1/3 timeout:"),
    ("skipped", "error", "shard 1/3 skipped:"),
])
def test_a_failed_shard_makes_an_error_row_naming_it(tmp_path, bad, status, text):
    rows = [_row(0, 3), _row(1, 3, status=bad), _row(2, 3)]
    out = gather.gather(rows)
    assert out["status"] == status and text in out["message"]
    assert out["count"] is None and out["fingerprint"] is None and out["algo_s"] == []


@pytest.mark.parametrize("status", ["skipped", "unavailable"])
def test_all_shards_skipped_or_unavailable_is_that(status):
    out = gather.gather([_row(i, 2, status=status) for i in range(2)])
    assert out["status"] == status and out["message"] == f"{status} here"


@pytest.mark.parametrize("change,text", [
    (lambda r: r["params"].update(side="left"), "side"),
    (lambda r: r.update(csr="3x3/5/crc32:00000002"), "csr"),
    (lambda r: r.update(repeats=5), "repeats"),
    (lambda r: r["params"].update(shard="0/3"), "holds shard 0/3"),
    (lambda r: r["stats"].update(total_tasks=7), "different task lists"),
    (lambda r: r["stats"].update(partition="b" * 16), "partitions"),
    (lambda r: r["stats"].pop("partition"), "partitions"),
])
def test_shards_of_two_run_plans_are_refused(tmp_path, change, text):
    rows = [_row(i, 3) for i in range(3)]
    change(rows[2])
    _write(tmp_path / "R", rows[:2])
    (tmp_path / "R" / "shard-2-of-3.json").write_text(json.dumps(rows[2]))
    with pytest.raises(gather.GatherError) as e:
        gather.load(tmp_path / "R", 3, dataset="D", run_id="imbea")
    msg = str(e.value)
    assert "\n" not in msg and "dataset 'D'" in msg and text in msg


def test_a_missing_shard_row_is_named(tmp_path):
    _write(tmp_path / "R", [_row(0, 2)])
    with pytest.raises(gather.GatherError, match=r"shard 1/2: no row at .*shard-1-of-2\.json"):
        gather.load(tmp_path / "R", 2, dataset="D", run_id="imbea")


def test_groups_and_receipts():
    assert gather.groups(5, 2) == [[0, 1], [2, 3], [4]]
    assert gather.groups(3, 9) == [[0, 1, 2]] and gather.groups(3, 1) == [[0], [1], [2]]
    sh = plan.Sharding(5, 2)
    assert plan.shard_receipts("D", "r", sh) == [f"results/runs/D/r/job-{g}-of-3.json"
                                                 for g in range(3)]
    assert plan.job_shards(sh, 2, 3) == [4]
    with pytest.raises(ValueError):
        plan.job_shards(sh, 0, 2)  # a job of another plan


# --------------------------------------------------------------------- the CLI, for real


def _graph(tmp_path):
    rng = np.random.default_rng(5)
    m = rng.random((16, 30)) < 0.35  # the oracle takes up to 18 vertices on one side
    left, right = np.nonzero(m)
    g = csr.from_edges(left, right, 16, 30)
    csr.write_csr(g, tmp_path / "g.csr")
    return g, tmp_path / "g.csr"


def _job(engine="fake_engines:shards_imbea"):
    spec = plan.direct_run(engine, {"shard": "0/1"}, "imbea")
    return json.dumps(spec.job())


def _run_shards(graph, out, shards, n, env=None, engine="fake_engines:shards_imbea"):
    return subprocess.run(
        [sys.executable, "-m", "mbebench", "run", "--dataset", "D", "--run-id", "imbea",
         "--graph", str(graph), "--out", str(out), "--job", _job(engine),
         "--shards", *map(str, shards), "--of", str(n), "--retry", "0"],
        capture_output=True, text=True, env={**ENV, **(env or {})})


def test_one_job_many_shards_and_a_killed_one_is_redone_alone(tmp_path):
    g, path = _graph(tmp_path)
    folder = tmp_path / "runs" / "D" / "imbea"
    folder.mkdir(parents=True)
    receipt = folder / "job-0-of-1.json"
    starts = tmp_path / "starts"
    flag = tmp_path / "kill"
    flag.touch()
    env = {"MBEBENCH_TEST_SHARD_LOG": str(starts), "MBEBENCH_TEST_KILL_SHARD": "1/3",
           "MBEBENCH_TEST_KILL_FLAG": str(flag)}
    res = _run_shards(path, receipt, [0, 1, 2], 3, env)
    assert res.returncode == 1 and not receipt.exists(), res.stderr
    err = res.stderr.strip().splitlines()[-1]
    assert err.startswith("error: dataset 'D' run imbea shard 1/3: the engine process was "
                          "killed by SIGKILL from outside") and "2 of this job's 3" in err, err
    assert sorted(p.name for p in folder.iterdir()) == ["shard-0-of-3.json", "shard-2-of-3.json"]
    mtimes = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    # one process for the three shards, then one for the shard after the killed one
    assert starts.read_text().splitlines() == [f"D imbea shard {i}/3" for i in (0, 1, 2)]

    flag.unlink()
    res = _run_shards(path, receipt, [0, 1, 2], 3, env)
    assert res.returncode == 0, res.stderr
    assert "shard(s) 0/3, 2/3 finished before, kept" in res.stderr
    assert starts.read_text().splitlines()[3:] == ["D imbea shard 1/3"]  # only the killed one
    assert all(p.stat().st_mtime_ns == mtimes[p.name] for p in folder.iterdir()
               if p.name in mtimes)
    receipt_obj = json.loads(receipt.read_text())
    assert receipt_obj["status"] == "ok" and receipt_obj["shards"] == [0, 1, 2]

    out = tmp_path / "runs" / "D" / "imbea.json"
    res = subprocess.run([sys.executable, "-m", "mbebench", "gather", "--dataset", "D",
                          "--run-id", "imbea", "--shard-dir", str(folder), "--of", "3",
                          "--out", str(out)], capture_output=True, text=True, env=ENV)
    assert res.returncode == 0, res.stderr
    row = json.loads(out.read_text())
    count, fp = count_and_fingerprint(g)
    assert (row["status"], row["count"], row["fingerprint"]) == ("ok", count, to_hex(fp))
    assert row["shards"]["n"] == 3 and sum(row["shards"]["count"]) == count


def test_a_shard_of_another_graph_or_run_is_run_again(tmp_path):
    g, path = _graph(tmp_path)
    folder = tmp_path / "R"
    folder.mkdir()
    starts = tmp_path / "starts"
    env = {"MBEBENCH_TEST_SHARD_LOG": str(starts)}
    assert _run_shards(path, folder / "job-0-of-1.json", [0, 1], 2, env).returncode == 0
    # the graph changes (a new conversion): both shards run again
    g2 = csr.from_edges([0, 1, 1], [0, 0, 1], 2, 2)
    csr.write_csr(g2, path)
    assert _run_shards(path, folder / "job-0-of-1.json", [0, 1], 2, env).returncode == 0
    assert len(starts.read_text().splitlines()) == 4
    rows = gather.load(folder, 2, dataset="D", run_id="imbea")
    assert gather.gather(rows)["count"] == count_and_fingerprint(g2)[0]


def test_a_failing_shard_gives_an_error_row_and_the_gather_names_it(tmp_path):
    _, path = _graph(tmp_path)
    folder = tmp_path / "R"
    folder.mkdir()
    res = _run_shards(path, folder / "job-0-of-1.json", [0, 1, 2], 3,
                      {"MBEBENCH_TEST_FAIL_SHARD": "2/3"})
    assert res.returncode == 0, res.stderr  # an engine's error is a row, like any run's
    rows = gather.load(folder, 3, dataset="D", run_id="imbea")
    assert [r["status"] for r in rows] == ["ok", "ok", "error"]
    out = gather.gather(rows)
    assert out["status"] == "error" and out["count"] is None
    assert out["message"].startswith("shard 2/3 error: RuntimeError: boom on shard 2/3")
