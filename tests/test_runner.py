import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mbebench import csr, oracle, runner
from mbebench.fingerprint import to_hex

HERE = Path(__file__).resolve().parent
ENV = {"PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}


@pytest.fixture
def graph_file(tmp_path):
    g = csr.from_edges([0, 0, 1, 2, 2], [0, 1, 1, 1, 2])
    path = tmp_path / "g.csr"
    csr.write_csr(g, path)
    return g, path


def _run(path, engine, timeout=60, repeats=1, params=None, env=None):
    return runner.run(
        dataset="toy",
        run_id="x",
        engine=engine,
        graph=path,
        params=params or {},
        repeats=repeats,
        timeout_s=timeout,
        env={**ENV, **(env or {})},
    )


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent to reap it counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _pids(path: Path, n: int, within_s: float = 60) -> list[int]:
    """The n pids fake_engines wrote to $MBEBENCH_TEST_PIDS (only the processes this test
    started)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        pids = [int(x) for x in path.read_text().split()] if path.exists() else []
        if len(pids) >= n:
            return pids
        time.sleep(0.1)
    pytest.fail(f"the engine never wrote {n} pid(s) to {path}")


def _gone(pids: list[int], within_s: float = 30) -> list[int]:
    """Those of pids still running after within_s."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline and any(map(_alive, pids)):
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


def test_ok_row_has_count_fingerprint_and_times(graph_file):
    g, path = graph_file
    row = _run(path, "fake_engines:oracle", repeats=3)
    count, fp = oracle.count_and_fingerprint(g)
    assert row["status"] == "ok"
    assert row["count"] == count and row["fingerprint"] == to_hex(fp)
    assert len(row["algo_s"]) == 3 and row["algo_s_median"] == pytest.approx(0.001)
    assert row["graph"] == {"n_left": 3, "n_right": 3, "n_edges": 5}
    assert row["peak_rss_bytes"] > 0
    # beside the algorithm: each call's own setup, and the child's start before the first
    assert row["setup_s"] == pytest.approx([max(0.0, w - a) for w, a in zip(row["wall_s"],
                                                                          row["algo_s"])])
    assert row["startup_s"] > 0 and all(x >= 0 for x in row["setup_s"])


def test_timeout_kills_the_whole_process_group(graph_file, tmp_path):
    _, path = graph_file
    pid_file = tmp_path / "pids"
    # the engine and its grandchild sleep 60 s: only the kill can end the run sooner.  10 s,
    # not 2: the engine must have started its grandchild before the kill, and on a 2-core
    # machine ~8x slower than usual (2026-11-28) its imports alone took longer than 2 s
    t0 = time.monotonic()
    row = _run(path, "fake_engines:sleepy", timeout=10, env={"MBEBENCH_TEST_PIDS": str(pid_file)})
    assert time.monotonic() - t0 < 55
    assert row["status"] == "timeout" and row["count"] is None
    assert "10 s" in row["message"]
    engine, grandchild = _pids(pid_file, 2)
    assert _gone([engine, grandchild]) == []


@pytest.mark.parametrize(
    "engine, status, text",
    [
        ("fake_engines:crash", "error", "RuntimeError: boom: engine failed"),
        ("fake_engines:segfault", "error", "exited with code -11"),
        ("fake_engines:skip", "skipped", "no CUDA device"),
        ("fake_engines:flaky", "error", "repeats disagree"),
        ("fake_engines:fp_flaky", "error", "repeats disagree"),
        ("no_such_engine", "error", "unknown engine"),
    ],
)
def test_failures_become_rows_without_counts(graph_file, engine, status, text):
    _, path = graph_file
    row = _run(path, engine, repeats=2)
    assert row["status"] == status
    assert text in row["message"] and "\n" not in row["message"]
    assert row["count"] is None and row["fingerprint"] is None


def test_bad_graph_file_is_not_a_result(tmp_path):
    bad = tmp_path / "bad.csr"
    bad.write_bytes(b"not a csr file at all" * 10)
    with pytest.raises(runner.RunNotFinal, match=r"dataset 'toy': .*bad\.csr: not an mbe-bench"):
        _run(bad, "fake_engines:oracle")
    with pytest.raises(runner.RunNotFinal, match="cannot open CSR file"):
        _run(tmp_path / "missing.csr", "fake_engines:oracle")


def test_a_run_killed_from_outside_is_not_a_result(graph_file):
    _, path = graph_file
    with pytest.raises(runner.RunNotFinal, match="killed by SIGKILL from outside"):
        _run(path, "fake_engines:oom_killed")


def _cli_run(graph, out, engine="fake_engines:oracle", *extra):
    return subprocess.run(
        ["python", "-m", "mbebench", "run", "--dataset", "toy", "--run-id", "x",
         "--engine", engine, "--graph", str(graph), "--out", str(out), *extra],
        capture_output=True, text=True, env={**os.environ, **ENV})


def test_cli_corrupt_csr_fails_the_job_and_is_moved_aside_to_be_rebuilt(graph_file, tmp_path):
    _, path = graph_file
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # one bit flip in the payload: the checksum catches it
    path.write_bytes(bytes(data))
    out = tmp_path / "row.json"
    res = _cli_run(path, out)
    assert res.returncode != 0 and not out.exists()  # Snakemake sees a failed job, no row
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("error: dataset 'toy': ") and "checksum mismatch" in last
    assert f"moved it to {path}.bad" in last and "converts the dataset again" in last
    assert not path.exists() and path.with_name("g.csr.bad").read_bytes() == bytes(data)


def test_cli_oom_killed_run_fails_the_job_without_a_row(graph_file, tmp_path):
    _, path = graph_file
    out = tmp_path / "row.json"
    res = _cli_run(path, out, "fake_engines:oom_killed")
    assert res.returncode != 0 and not out.exists()
    assert "killed by SIGKILL" in res.stderr.strip().splitlines()[-1]
    assert path.exists()  # the input was fine: left alone


def test_cli_unavailable_dataset_gets_a_row_and_runs_nothing(tmp_path):
    meta = tmp_path / "gone.json"
    meta.write_text(json.dumps({"dataset": "toy", "status": "unavailable", "step": "download",
                                "reason": "dataset 'toy': HTTP 404", "retry": "0"}))
    out = tmp_path / "row.json"
    res = _cli_run(tmp_path / "no.csr", out, "fake_engines:crash", "--meta", str(meta))
    assert res.returncode == 0, res.stderr
    row = json.loads(out.read_text())
    assert (row["status"], row["message"], row["count"]) == (
        "unavailable", "dataset 'toy': HTTP 404", None)
    assert row["schema_version"] == runner.SCHEMA_VERSION
    assert res.stderr.strip() == "toy x: unavailable (dataset 'toy': HTTP 404)"


def test_every_row_records_the_environment(graph_file):
    _, path = graph_file
    row = _run(path, "fake_engines:oracle")
    env = row["env"]
    assert env["cpu_count"] == os.cpu_count() and env["cpu_model"]
    assert env["numba"] and env["numba_cuda"] and env["numpy"]
    assert env["python"]
    assert set(env) >= {"gpu", "gpu_driver", "cuda_driver", "cpus_allowed"}


def test_cli_writes_row_atomically_and_reports(graph_file, tmp_path):
    _, path = graph_file
    out = tmp_path / "rows" / "x.json"
    res = subprocess.run(
        ["python", "-m", "mbebench", "run", "--dataset", "toy", "--run-id", "x",
         "--engine", "fake_engines:skip", "--graph", str(path), "--out", str(out)],
        capture_output=True, text=True, env={**os.environ, **ENV},
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(out.read_text())["status"] == "skipped"
    assert list(out.parent.iterdir()) == [out]  # no temp files left


def test_cli_require_gpu_turns_skip_into_failure(graph_file, tmp_path):
    _, path = graph_file
    out = tmp_path / "x.json"
    res = subprocess.run(
        ["python", "-m", "mbebench", "run", "--dataset", "toy", "--run-id", "x",
         "--engine", "fake_engines:skip", "--graph", str(path), "--out", str(out),
         "--require-gpu"],
        capture_output=True, text=True, env={**os.environ, **ENV},
    )
    assert res.returncode != 0
    assert "require_gpu" in res.stderr and "toy" in res.stderr
    assert not out.exists()


def test_child_dies_with_the_runner(graph_file, tmp_path):
    """A killed runner (e.g. kill -9 of snakemake) takes its engine process with it."""
    _, path = graph_file
    script = (
        "from mbebench import runner\n"
        f"runner.run(dataset='toy', run_id='x', engine='fake_engines:sleepy_alone', graph={str(path)!r},"
        " params={'seconds': 120}, timeout_s=300)\n"
    )
    pid_file = tmp_path / "pids"
    parent = subprocess.Popen([sys.executable, "-c", script],
                              env={**os.environ, **ENV, "MBEBENCH_TEST_PIDS": str(pid_file)})
    try:
        (engine,) = _pids(pid_file, 1)
    finally:
        parent.kill()
        parent.wait()
    assert _gone([engine]) == [], "engine child outlived its runner"


def test_the_log_keeps_the_whole_traceback(graph_file, capfd):
    _, path = graph_file
    row = _run(path, "fake_engines:crash")
    assert row["message"] == "RuntimeError: boom: engine failed"  # the table's one line
    err = capfd.readouterr().err  # what the rule's log gets
    assert "Traceback (most recent call last)" in err
    assert 'in crash\n    raise RuntimeError("boom: engine failed\\nsecond line")' in err
    assert "second line" in err


def test_cli_by_hand_fills_and_checks_a_registered_engines_parameters(graph_file, tmp_path):
    _, path = graph_file
    out = tmp_path / "x.json"
    base = ["python", "-m", "mbebench", "run", "--dataset", "toy", "--run-id", "x",
            "--graph", str(path), "--out", str(out), "--engine", "imbea"]
    res = subprocess.run([*base, "--params", '{"sidee": "left"}'], capture_output=True,
                         text=True, env={**os.environ, **ENV})
    assert res.returncode != 0 and not out.exists()
    assert res.stderr.strip().splitlines() == [
        "error: engine imbea: unknown parameter 'sidee' (known: shard, side)"]
    res = subprocess.run([*base, "--params", '{"side": "left"}'], capture_output=True,
                         text=True, env={**os.environ, **ENV})
    assert res.returncode == 0, res.stderr
    row = json.loads(out.read_text())
    assert row["status"] == "ok" and row["params"] == {"shard": "0/1", "side": "left"}
    assert (row["engine"], row["label"], row["timed"]) == ("imbea", "iMBEA", True)


def test_cli_by_hand_writes_its_row_anywhere(graph_file, tmp_path):
    """A row path outside results/runs/<dataset>/ (here one folder deep, relative): the
    resume logic, which keeps rows of a stopped Snakemake run, has nothing to do with it (it
    raised IndexError on such a path)."""
    _, path = graph_file
    res = subprocess.run(["python", "-m", "mbebench", "run", "--dataset", "toy", "--run-id", "x",
                          "--graph", str(path), "--out", "x.json", "--engine", "imbea"],
                         capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(
                             filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")]))})
    assert res.returncode == 0, res.stderr
    assert json.loads((tmp_path / "x.json").read_text())["status"] == "ok"


def test_cli_unexpected_error_prints_its_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"dataset": "A"}')
    res = subprocess.run(
        ["python", "-m", "mbebench", "tables", "--rows", str(bad), "--datasets", "A",
         "--out-dir", str(tmp_path / "o")],
        capture_output=True, text=True,
    )
    lines = res.stderr.splitlines()
    assert res.returncode == 1
    assert lines[0].startswith("error: ") and str(bad) in lines[0]
    assert "Traceback (most recent call last)" in res.stderr
