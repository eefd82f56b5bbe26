"""Progress lines (issue 18 item 4, CPU engines): a long run writes a line to its log at
least every MBEBENCH_PROGRESS_S seconds (tasks done, cost share, bicliques, rate, ETA),
the lines reach the rule's log while the run goes on, and they change no count."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from baselines import imbea, parmbe
from mbebench import csr, progress, runner
from mbebench.csr import from_edges

HERE = Path(__file__).resolve().parent
LINE = re.compile(r"^(\w+) progress: (.+): tasks (\d+)/(\d+) \(cost ([\d.]+)%\), (\d+) bicliques, "
                  r"(\S+)/s, ETA (\S+) s$")


def test_line_format():
    line = progress.format_line("imbea", "hubs imbea shard 1/3", 120, 480, 31.0, 100.0, 5321,
                                1.3)
    assert line == ("imbea progress: hubs imbea shard 1/3: tasks 120/480 (cost 31.0%), "
                    "5321 bicliques, 4.09e+03/s, ETA 3 s")
    assert progress.is_progress(line) and not progress.is_progress("error: progress: x")
    # nothing done yet: no rate, no ETA
    assert progress.format_line("e", "l", 0, 5, 0, 10, 0, 0.0).endswith("0 bicliques, 0/s, ETA ? s")


def test_reporter_prints_only_when_due(monkeypatch):
    now = [100.0]
    out = []

    class Sink:
        def write(self, s):
            out.append(s)

        def flush(self):
            pass

    rep = progress.Reporter("e", 10, 10.0, label_="L", every_s=10, stream=Sink(),
                            clock=lambda: now[0])
    assert not rep.update(1, 1.0, 5)  # at once: not due
    now[0] += 0.8 * 10
    assert rep.update(2, 2.0, 9) and rep.lines == 1
    assert not rep.update(3, 3.0, 9)
    now[0] += 9
    assert rep.update(4, 4.0, 11)
    assert [s for s in out if s.strip()][0].startswith("e progress: L: tasks 2/10 (cost 20.0%)")


@pytest.mark.parametrize("value,want", [("", 10.0), ("0.5", 0.5), ("0", 0.0), ("-1", 0.0),
                                        ("x", 10.0), ("inf", 0.0)])
def test_interval_from_the_environment(monkeypatch, value, want):
    monkeypatch.setenv(progress.INTERVAL_ENV, value)
    assert progress.interval() == want


def _graph(nl=150, nr=160, p=0.22, seed=1):
    rng = np.random.default_rng(seed)
    m = rng.random((nl, nr)) < p
    left, right = np.nonzero(m)
    return from_edges(left, right, nl, nr)


def _lines(text: str, engine: str) -> list[re.Match]:
    found = [LINE.match(ln) for ln in text.splitlines() if f"{engine} progress:" in ln]
    assert all(found), text
    return found


@pytest.mark.parametrize("engine", ["imbea", "parmbe"])
def test_lines_appear_with_a_tiny_interval_and_counts_are_unchanged(engine, monkeypatch, capsys):
    g = _graph()
    run = imbea.run if engine == "imbea" else (lambda g: parmbe.run(g, processes=2))
    monkeypatch.setenv(progress.INTERVAL_ENV, "0")
    quiet = run(g)
    assert capsys.readouterr().err.count("progress:") == 0
    monkeypatch.setenv(progress.INTERVAL_ENV, "0.02")
    monkeypatch.setenv(progress.LABEL_ENV, "g test shard 0/1")
    loud = run(g)
    assert (loud.count, loud.fingerprint) == (quiet.count, quiet.fingerprint)
    lines = _lines(capsys.readouterr().err, engine)
    assert len(lines) >= 2, "no progress line in a run of many intervals"
    done = [int(m.group(3)) for m in lines]
    counts = [int(m.group(6)) for m in lines]
    assert {m.group(2) for m in lines} == {"g test shard 0/1"}
    assert done == sorted(done) and counts == sorted(counts)
    assert len({m.group(4) for m in lines}) == 1  # one total
    assert all(d <= int(m.group(4)) for d, m in zip(done, lines))
    assert counts[-1] <= loud.count and float(lines[-1].group(5)) <= 100.0


def test_imbea_chunks_cover_every_task_once():
    """The chunked search (a line between chunks) gives the whole run's count, fingerprint
    and node count, for any interval, on shards too."""
    g = _graph(60, 70, 0.3, seed=4)
    prep, tasks = imbea.prepare(g, "left")
    for shard in ("0/1", "1/3"):
        t, _, costs = imbea.shard_tasks(prep, tasks, shard, with_costs=True)
        c, f, n, *_ = imbea.enumerate_tasks(prep, t)
        for every in (1e-6, 1e-3, 0.0):
            rep = progress.Reporter("imbea", t[0].size, float(costs.sum()), label_="x",
                                    every_s=every, stream=open(os.devnull, "w"))
            assert imbea.enumerate_with_progress(prep, t, costs, rep) == (int(c), int(f), int(n))


def test_a_runs_lines_reach_its_log_while_it_runs(tmp_path):
    """The runner copies its child's stderr into its own (the rule's log) as it comes,
    and touches the log while it waits (mbebench.status tells running from stopped)."""
    g = csr.from_edges([0, 0, 1], [0, 1, 1], 2, 2)
    csr.write_csr(g, tmp_path / "g.csr")
    log = tmp_path / "run.log"
    script = (
        "from mbebench import runner\n"
        f"row = runner.run(dataset='toy', run_id='x', engine='fake_engines:chatty', "
        f"graph={str(tmp_path / 'g.csr')!r}, params={{'seconds': 8}}, timeout_s=120)\n"
        "assert row['status'] == 'ok', row\n"
    )
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    with open(log, "wb") as f:
        proc = subprocess.Popen([sys.executable, "-c", script], stderr=f, env=env)
    try:
        deadline = time.monotonic() + 60
        while "chatty progress: toy x:" not in log.read_text():
            assert proc.poll() is None, f"the run ended before its line came:\n{log.read_text()}"
            assert time.monotonic() < deadline, "no progress line in the log"
            time.sleep(0.1)
        assert proc.poll() is None  # still running: the line came while it ran
        before = log.stat().st_mtime
        time.sleep(runner.HEARTBEAT_S + 1.5)
        if proc.poll() is None:
            assert log.stat().st_mtime > before, "the runner did not touch its log"
        assert proc.wait(timeout=60) == 0, log.read_text()
    finally:
        proc.kill()
        proc.wait()
