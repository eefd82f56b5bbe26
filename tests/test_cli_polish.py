"""The command lines a new user meets (issue 19, item 9, and issue 17): `python -m cumbe`
says what it is and what `graph` is, has --simulate and --version, and a missing or corrupt
graph file is one line naming it; `mbe-bench` / `python -m mbebench` have --version."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mbebench import csr, oracle
from mbebench.fingerprint import to_hex


def _run(*args: str, env=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in (env or os.environ).items() if k != "NUMBA_ENABLE_CUDASIM"}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300,
                          env=env)


def test_cumbe_help_describes_the_tool_and_the_graph_argument():
    top = _run("-m", "cumbe", "--help")
    assert top.returncode == 0
    assert "maximal biclique enumeration on an NVIDIA GPU" in top.stdout
    assert "--simulate runs" in top.stdout
    run = _run("-m", "cumbe", "run", "--help")
    assert "mbe-bench binary CSR file" in run.stdout and "results/csr/<dataset>.csr" in run.stdout
    assert "--simulate" in run.stdout and "NUMBA_ENABLE_CUDASIM=1" in run.stdout


@pytest.mark.parametrize("argv", [["-m", "cumbe"], ["-m", "mbebench"]])
def test_version(argv):
    res = _run(*argv, "--version")
    assert res.returncode == 0 and res.stdout.strip().endswith("0.1.0"), res


def test_the_console_script_is_installed_and_answers():
    script = shutil.which("mbe-bench", path=str(Path(sys.executable).parent))
    assert script, "pip install -e . installs the mbe-bench console script"
    res = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == "mbe-bench 0.1.0"


def test_a_missing_or_corrupt_graph_is_one_line_naming_the_file(tmp_path):
    missing = tmp_path / "missing.csr"
    res = _run("-m", "cumbe", "run", str(missing))
    assert res.returncode == 1
    assert res.stderr.strip().splitlines() == [
        f"error: {missing}: cannot open CSR file (No such file or directory)"]
    g = csr.from_edges([0, 0, 1], [0, 1, 1], 2, 2)
    bad = tmp_path / "bad.csr"
    csr.write_csr(g, bad)
    data = bytearray(bad.read_bytes())
    data[-1] ^= 1
    bad.write_bytes(bytes(data))
    res = _run("-m", "cumbe", "run", str(bad))
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 1 and len(lines) == 1, res.stderr
    assert lines[0].startswith(f"error: {bad}: ") and "Traceback" not in res.stderr
    res = _run("-m", "cumbe", "run", str(tmp_path))  # a directory
    assert res.returncode == 1 and res.stderr.strip().splitlines() == [
        f"error: {tmp_path}: cannot open CSR file (is a directory)"]


@pytest.mark.cudasim
def test_simulate_runs_the_cuda_simulator_without_the_environment_variable(tmp_path):
    g = csr.from_edges([0, 0, 1, 2], [0, 1, 1, 2], 3, 3)
    path = tmp_path / "g.csr"
    csr.write_csr(g, path)
    count, fp = oracle.count_and_fingerprint(g)
    res = _run("-m", "cumbe", "run", str(path), "--simulate", "--threads", "32",
               "--json", str(tmp_path / "out.json"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"count {count}  fingerprint {to_hex(fp)}")
    assert "simulator" in res.stdout


@pytest.mark.cudasim
def test_a_stage_may_end_later_and_a_share_past_one_is_one_line(tmp_path):
    g = csr.from_edges([0, 0, 1, 1, 2, 2, 3], [0, 1, 1, 2, 0, 2, 1], 4, 3)
    path = tmp_path / "g.csr"
    csr.write_csr(g, path)
    count, fp = oracle.count_and_fingerprint(g)
    res = _run("-m", "cumbe", "run", str(path), "--simulate", "--threads", "64",
               "--idle-fraction", "0.5", "--json", str(tmp_path / "out.json"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"count {count}  fingerprint {to_hex(fp)}")
    assert json.loads((tmp_path / "out.json").read_text())["stats"]["idle_fraction"] == 0.5
    bad = _run("-m", "cumbe", "run", str(path), "--simulate", "--idle-fraction", "1.5")
    assert bad.returncode == 1
    assert bad.stderr.strip().splitlines() == ["error: idle_fraction must be in [0, 1)"]


@pytest.mark.cudasim
def test_a_grid_cut_by_the_memory_cap_is_named(tmp_path):
    from cumbe.engine import smallest_memory_gib

    g = csr.from_edges([0, 0, 0, 1, 1, 2, 2, 3], [0, 1, 2, 0, 1, 1, 2, 2], 4, 3)
    path = tmp_path / "g.csr"
    csr.write_csr(g, path)
    count, fp = oracle.count_and_fingerprint(g)
    cap = smallest_memory_gib(g, threads=64)  # one block: its warps' arenas joined
    res = _run("-m", "cumbe", "run", str(path), "--simulate", "--threads", "64",
               "--device-memory-gib", repr(cap))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"count {count}  fingerprint {to_hex(fp)}")
    note = [ln for ln in res.stderr.splitlines() if ln.startswith("note: ")]
    assert len(note) == 1 and "block-wide" in note[0] and "more device memory" in note[0]
    free = _run("-m", "cumbe", "run", str(path), "--simulate", "--threads", "64")
    assert free.returncode == 0 and "note: " not in free.stderr
