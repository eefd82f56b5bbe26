"""benchmarks/scale/scale.py: the planted grades get their hubs; a run stopped at its time limit
still reports what it had found."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import numpy as np
import pytest


def _load(name: str, file: str):
    """A script of benchmarks/scale as a module."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "scale" / file
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


scale = _load("scale_graphs", "scale.py")


def test_the_hub_grades_exceed_the_small_grades_caps():
    small = scale.planted("l")
    hubs = scale.planted("xl")
    assert small.n_edges == hubs.n_edges == 2_000_000
    # l keeps degrees within its caps (2,000 left, 4,000 right); xl lifts them (20,000 / 40,000)
    assert np.diff(small.left_offsets).max() <= 2000
    assert np.diff(small.right_offsets).max() <= 4000
    assert np.diff(hubs.right_offsets).max() > 4000


def test_a_grade_with_another_exponent_lies_between_grades(tmp_path):
    xl, between = scale.planted("xl"), scale.planted("xl", exponent=2.3)
    assert between.n_edges == xl.n_edges
    # a smaller exponent: heavier hubs within the same caps
    assert np.diff(between.right_offsets).max() > np.diff(xl.right_offsets).max()
    made = scale.make("planted-xl-e2.3", tmp_path, tmp_path)
    assert made.name == "planted-xl-e2.3.csr"
    assert np.array_equal(scale.read_csr(made).right_offsets, between.right_offsets)
    for bad in ("planted-nope", "planted-xl-e9"):
        with pytest.raises(ValueError, match="planted-|grade"):
            scale.make(bad, tmp_path, tmp_path)


def test_every_grade_is_described():
    for grade, spec in scale.PLANTED.items():
        edges, blocks, _ls, _rs, _p, _pools, exponent, (cap_l, cap_r) = spec
        assert edges > 0 and blocks > 0 and exponent > 1 and cap_l > 0 and cap_r > 0, grade
    assert {"planted-xl", "planted-xxl"} <= set(scale.DEFAULT_GRAPHS)


LINE = ("cumbe progress: g.csr | repeat 1/1 | shard 0/1 | 08:28:54Z +60.0 s | tasks 158222/158222 "
        "(cost 100.0%), stolen work: stage 2/24, 793713 subtrees queued, 3168/3168 workers busy; "
        "42432515 bicliques, 7.07e+05/s (last 10 s: 8.38e+05/s), ETA ? s")


def test_a_timed_out_run_keeps_its_last_progress_line(monkeypatch, tmp_path):
    def times_out(cmd, **kw):
        raise subprocess.TimeoutExpired(cmd, kw["timeout"], stderr=("note: x\n" + LINE).encode())

    monkeypatch.setattr(scale.subprocess, "run", times_out)
    r = scale.run_cumbe(tmp_path / "g.csr", "cuMBE", 60.0, [])
    assert r["status"] == "timeout"
    assert (r["found"], r["rate"]) == (42432515, 7.07e5)
    res = {"context": {"commit": "c", "gpu": "g", "date": "d"}, "time_limit": 60.0,
           "graphs": {"planted-xxl": {"edges": 2_000_000, "runs": {"cuMBE": r}, "agree": True}}}
    row = [ln for ln in scale.table(res).splitlines() if ln.startswith("| planted-xxl")][0]
    assert "| >= 42432515 | cuMBE | timeout | 7.07e+05 (at the limit) |" in row


def test_a_launch_bound_reaches_the_run_and_names_its_row(monkeypatch, tmp_path):
    seen = []

    def fails(cmd, **kw):
        seen.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "boom")

    monkeypatch.setattr(scale.subprocess, "run", fails)
    scale.run_cumbe(tmp_path / "g.csr", "cuMBE", 60.0, [], 8)
    scale.run_cumbe(tmp_path / "g.csr", "cuMBE", 60.0, [])
    assert seen[0][-2:] == ["--blocks-per-sm", "8"] and "--blocks-per-sm" not in seen[1]
    assert seen[0][seen[0].index("--json") + 1] != seen[1][seen[1].index("--json") + 1]
    assert scale.run_label("cuMBE", 8) == "cuMBE, 8 blocks/SM"
    assert scale.run_label("cuMBE", 0) == "cuMBE"


def test_a_timed_out_run_without_progress_lines_is_a_plain_timeout(monkeypatch, tmp_path):
    def times_out(cmd, **kw):
        raise subprocess.TimeoutExpired(cmd, kw["timeout"], stderr=None)

    monkeypatch.setattr(scale.subprocess, "run", times_out)
    r = scale.run_cumbe(tmp_path / "g.csr", "cuMBE", 60.0, [])
    assert r["status"] == "timeout" and "found" not in r


def test_the_recorded_commit_says_when_the_code_was_not_committed(tmp_path, monkeypatch):
    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path,
                       check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "f.py").write_text("a = 1\n")
    git("add", "f.py")
    git("commit", "-q", "-m", "one")
    monkeypatch.setattr(scale, "REPO", tmp_path)
    clean = scale.context()["commit"]
    assert clean and not clean.endswith("-dirty")
    (tmp_path / "f.py").write_text("a = 2\n")
    assert scale.context()["commit"] == clean + "-dirty"


def test_every_build_runs_once_untimed_before_the_graphs(tmp_path, monkeypatch):
    calls = []

    def fake_run(csr, variant, limit, extra, blocks_per_sm=0):
        calls.append((csr.name, variant, limit, tuple(extra), blocks_per_sm))
        return {"status": "ok"}

    monkeypatch.setattr(scale, "run_cumbe", fake_run)
    compiled = []
    monkeypatch.setattr(scale.warm, "warm", lambda b, jobs, emit: compiled.extend(b) or True)
    got = scale.warm_up(tmp_path, ["cuMBE", "noRS"], [0, 8], instrument=True)
    assert compiled == ["cuMBE:128", "cuMBE:128:8", "cuMBE-instr:128", "noRS:128",
                        "noRS:128:8", "noRS-instr:128"]
    lim = scale.WARM_UP_LIMIT_S
    p, i = ("--no-rounds",), ("--instrument", "--no-rounds")
    assert calls == [("crown-8.csr", "cuMBE", lim, p, 0), ("crown-8.csr", "cuMBE", lim, p, 8),
                     ("crown-8.csr", "cuMBE", lim, i, 0),
                     ("crown-8.csr", "noRS", lim, p, 0), ("crown-8.csr", "noRS", lim, p, 8),
                     ("crown-8.csr", "noRS", lim, i, 0)]
    assert got == {"cuMBE": "ok", "cuMBE, 8 blocks/SM": "ok", "cuMBE (instr)": "ok",
                   "noRS": "ok", "noRS, 8 blocks/SM": "ok", "noRS (instr)": "ok",
                   "kernel builds": "ok"}


def test_the_check_in_rounds_warms_its_build_with_hub_rows_and_without():
    """A graph without hub rows (movielens-10m_ui x200) launches the build without: its cold
    compile once timed the graph's first run out."""
    got = scale.kernel_builds(["cuMBE"], [0], instrument=False, rounds=True)
    assert got == ["cuMBE:128", "cuMBE-rounds:128", "cuMBE-rounds-hubs:128"]


def test_cumbe_with_the_check_in_rounds_runs_after_cumbe():
    got = list(scale.builds(["cuMBE", "noRS"], [0], instrument=False, rounds=True))
    paper = ["--no-rounds"]
    assert got == [("cuMBE", "cuMBE", paper, 0), ("cuMBE rounds", "cuMBE", ["--rounds"], 0),
                   ("noRS", "noRS", paper, 0)]
    assert list(scale.builds(["cuMBE"], [0], instrument=False)) == [("cuMBE", "cuMBE", paper, 0)]


def test_the_check_in_rounds_warms_both_of_its_builds():
    """A run in rounds launches the build with hub rows or the one without, as the graph has
    rows or not: both are warmed."""
    assert scale.kernel_builds(["cuMBE"], [0], instrument=False, rounds=True) == [
        "cuMBE:128", "cuMBE-rounds:128", "cuMBE-rounds-hubs:128"]
    assert scale.kernel_builds(["cuMBE"], [0], instrument=False) == ["cuMBE:128"]


def test_the_hub_core_bound_counts_a_crown_inside_a_larger_graph():
    # a crown S_6 on the six highest-degree vertices of each side, each of them also joined to
    # leaves of its own: the core is the crown (2**6 - 2 maximal bicliques), and the whole
    # graph holds at least that many
    from baselines import imbea
    from mbebench.csr import from_edges

    cb = _load("core_bound", "core_bound.py")
    left, right = [], []
    for i in range(6):
        for j in range(6):
            if i != j:
                left.append(i), right.append(j)
        for t in range(3):  # a hub's leaves on the other side
            left.append(i), right.append(6 + 3 * i + t)
            left.append(6 + 3 * i + t), right.append(i)
    g = from_edges(np.array(left), np.array(right), n_left=24, n_right=24)
    row = cb.bound(g, 6)
    assert row["core_maximal_bicliques"] == 2**6 - 2
    assert row["core_edges"] == 30
    assert imbea.run(g).count >= row["core_maximal_bicliques"]
    # a core larger than the graph's sides is the whole graph
    assert cb.bound(g, 100)["core_maximal_bicliques"] == imbea.run(g).count
