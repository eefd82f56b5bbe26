"""Progress lines (issue 31 item 3): every run writes a line at least every
MBEBENCH_PROGRESS_S seconds from its start, whatever its engine's units of work, each naming
the repeat, the shard, the wall-clock time and the seconds since the repeat started; the ETA
is given only when the rates seen agree; the lines reach the rule's log while the run goes
on, and they change no count."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from baselines import imbea, parmbe
from mbebench import csr, progress, runner
from mbebench.csr import from_edges

HERE = Path(__file__).resolve().parent
HEAD = (r"^(?P<engine>[\w.+-]+) progress: (?P<label>.+) \| repeat (?P<repeat>\d+/\d+) \| "
        r"shard (?P<shard>\d+/\d+) \| (?P<clock>\d\d:\d\d:\d\dZ) \+(?P<elapsed>[\d.]+) s \| "
        r"(?P<body>.+)$")
WORK = re.compile(r"^tasks (\d+)/(\d+) \(cost ([\d.]+)%\), (\d+) bicliques, (\S+)/s, "
                  r"ETA (\? s|[\d.]+ s|[\d.]+ s \([\d.]+-[\d.]+ s\))$")
LINE = re.compile(HEAD)
# a line at least every interval: none later than 1.2 intervals after the one before (the
# issue's 12 s for 10 s), the first by one interval (plus what a busy machine adds)
LATE = 1.2
# what a machine busy with other work may add to a thread's wake-up (seen: 0.1 s at load 20
# on 2 cores); far less than a line missed (a whole interval)
SLACK_S = 0.15


class Lateness:
    """How late a thread of this process wakes from a sleep while a run goes on (the most
    seen): on a machine that starves threads (CI's 2 cores, about eight times slower than
    usual one day, the other test worker busy) the progress thread is as late through no
    fault of its own, so the timed checks below add it to their slack.  On a machine that
    is not starved it is milliseconds, and a missed line (a whole interval late) fails."""

    def __init__(self, step_s: float = 0.05):
        self.step_s, self.most, self._stop = step_s, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self):
        while not self._stop.is_set():
            t = time.monotonic()
            time.sleep(self.step_s)
            self.most = max(self.most, time.monotonic() - t - self.step_s)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    @property
    def slack_s(self) -> float:
        return SLACK_S + self.most


def _lines(text: str, engine: str | None = None) -> list[re.Match]:
    found = [LINE.match(ln) for ln in text.splitlines() if progress.MARK in ln
             and (engine is None or ln.startswith(f"{engine} progress:"))]
    assert all(found), text
    return found


class Clock:
    def __init__(self, t=100.0):
        self.t = t

    def __call__(self):
        return self.t


class Sink:
    def __init__(self):
        self.lines = []

    def write(self, s):
        if s.strip():
            self.lines.append(s.strip())

    def flush(self):
        pass


def test_a_line_names_engine_label_repeat_shard_time_and_work():
    clock, sink = Clock(), Sink()
    run = progress.Run("imbea", label_="hubs imbea-0 shard 1/3", repeat=(2, 3), every_s=10,
                       stream=sink, clock=clock, wall=lambda: 1795014245.0)
    assert run.line() == ("imbea progress: hubs imbea-0 | repeat 2/3 | shard 1/3 | "
                          "15:04:05Z +0.0 s | setting up")
    clock.t += 2.5
    run.begin_work(480, 100.0)
    clock.t += 4.0
    run.update(120, 31.0, 5321)
    line = run.line()
    assert line == ("imbea progress: hubs imbea-0 | repeat 2/3 | shard 1/3 | 15:04:05Z +6.5 s"
                    " | tasks 120/480 (cost 31.0%), 5321 bicliques, 1.33e+03/s, ETA ? s")
    m = LINE.match(line)
    assert m and WORK.match(m["body"])
    assert progress.is_progress(line) and not progress.is_progress("error: progress: x")
    # lines of the previous format (logs of older runs) still count for `mbebench status`
    assert progress.is_progress("parmbe progress: A p2: tasks 3/40 (cost 12.0%), 812 "
                                "bicliques, 270/s, ETA 88 s")
    # an engine's own shard wins over the label's; without either, the whole run
    assert "| shard 2/5 |" in progress.Run("e", label_="x", shard="2/5", every_s=1).line()
    assert "x | repeat 1/1 | shard 0/1 |" in progress.Run("e", label_="x", every_s=1).line()


def test_the_timer_prints_on_time_whatever_the_engine_does():
    """A fake clock: lines at 1, 2, 3 ... intervals from the start, while the engine
    publishes nothing, and the ETA's samples come between lines."""
    sink = Sink()
    run = progress.Run("e", label_="L", every_s=0.2, stream=sink)
    with Lateness() as late:
        t0 = time.monotonic()
        run.start()
        try:
            time.sleep(0.9)
        finally:
            run.stop()
        ran = time.monotonic() - t0  # 0.9 s, or more where this thread woke late
    assert 3 <= len(sink.lines) <= ran / 0.2 + 1, (sink.lines, ran)
    stamps = [float(LINE.match(ln)["elapsed"]) for ln in sink.lines]
    assert stamps[0] == pytest.approx(0.2, abs=0.1 + late.most), (stamps, late.most)
    assert all(b - a <= LATE * 0.2 + late.slack_s for a, b in zip(stamps, stamps[1:])), (
        stamps, late.most)


def test_no_thread_and_no_line_with_progress_off():
    sink = Sink()
    run = progress.Run("e", label_="L", every_s=0, stream=sink).start()
    assert run._thread is None and not run.enabled
    run.stop()
    assert sink.lines == []


@pytest.mark.parametrize("value,want", [("", 10.0), ("0.5", 0.5), ("0", 0.0), ("-1", 0.0),
                                        ("x", 10.0), ("inf", 0.0)])
def test_interval_from_the_environment(monkeypatch, value, want):
    monkeypatch.setenv(progress.INTERVAL_ENV, value)
    assert progress.interval() == want


def _feed(eta, shares, dt=1.0, done=None):
    for i, s in enumerate(shares):
        eta.add(dt * (i + 1), s, None, None if done is None else done[i])


def test_eta_on_a_steady_rate_is_close_and_has_a_range():
    eta = progress.Eta()
    _feed(eta, [0.05 * (i + 1) for i in range(8)])  # 5 % a second: 40 % after 8 s
    mid, low, high = eta.estimate()
    assert low <= 12.0 <= high and mid == pytest.approx(12.0, rel=0.05)
    assert progress.eta_text((12.0, 12.0, 12.2)) == "ETA 12 s"
    assert progress.eta_text((12.0, 8.0, 18.0)) == "ETA 12 s (8.0-18 s)"
    assert progress.eta_text(None) == "ETA ? s"


def test_no_eta_before_a_quarter_of_the_cost_or_on_an_unsteady_rate():
    eta = progress.Eta()
    _feed(eta, [0.02 * (i + 1) for i in range(8)])  # 16 %: too little done to trust
    assert eta.estimate() is None
    slowing = progress.Eta()  # 20 % in the first two seconds, then 1 % a second
    _feed(slowing, [0.1, 0.2, 0.21, 0.22, 0.23, 0.24, 0.25, 0.26])
    assert slowing.estimate() is None
    stalled = progress.Eta()  # a quarter of the time without progress: no steady rate
    _feed(stalled, [0.15, 0.3, 0.3, 0.3, 0.3, 0.3, 0.45, 0.6])
    assert stalled.estimate() is None
    # tasks started (ParMBE's workers inside their tasks) widen the range: 30-90 % of the
    # cost is behind or under way
    wide = progress.Eta()
    for i in range(8):
        wide.add(i + 1.0, 0.0375 * (i + 1), min(0.1125 * (i + 1), 1.0))
    assert wide.estimate() is None


def test_no_eta_when_the_tasks_left_are_unlike_those_done():
    """A rate measured on heavy tasks says little about light ones (ParMBE runs heaviest
    first): the same steady shares, with tasks of other costs ahead, give no ETA."""
    alike = np.full(100, 1.0)
    mixed = np.concatenate([np.full(40, 2.0), np.full(60, 0.1)])  # 40 heavy, then light
    done = [5 * (i + 1) for i in range(8)]
    a, b = progress.Eta(alike), progress.Eta(mixed)
    _feed(a, [0.05 * (i + 1) for i in range(8)], done=done)
    _feed(b, [0.05 * (i + 1) for i in range(8)], done=done)
    assert a.estimate() is not None and b.estimate() is None


def test_runs_of_a_slow_engine_print_on_time_with_every_field(tmp_path):
    """Through the runner, two repeats of an engine whose units of work (0.9 s) are longer
    than the interval (0.3 s), after 0.5 s of setup: a line by the first interval, none
    more than 1.2 intervals after the one before, each with the repeat, the shard, the
    time; the work's counters in the lines once the work started."""
    g = csr.from_edges([0, 0, 1], [0, 1, 1], 2, 2)
    csr.write_csr(g, tmp_path / "g.csr")
    every = 0.3
    script = (
        "from mbebench import runner\n"
        f"row = runner.run(dataset='toy', run_id='slow-0', engine='fake_engines:slow_units', "
        f"graph={str(tmp_path / 'g.csr')!r}, params={{'units': 3, 'unit_s': 0.9, "
        "'setup_s': 0.5, 'shard': '1/2'}, repeats=2, timeout_s=120)\n"
        "assert row['status'] == 'ok', row\n"
    )
    env = {**os.environ, progress.INTERVAL_ENV: str(every),
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    t_start = time.time()
    with Lateness() as late:
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             env=env, timeout=300)
    t_end = time.time()
    assert out.returncode == 0, out.stderr
    lines = _lines(out.stderr)
    by_repeat = {r: [m for m in lines if m["repeat"] == r] for r in ("1/2", "2/2")}
    for r, ms in by_repeat.items():
        assert len(ms) >= 8, (r, out.stderr)  # 3.2 s of run: 10 intervals
        assert {m["label"] for m in ms} == {"toy slow-0"} and {m["shard"] for m in ms} == {"1/2"}
        stamps = [float(m["elapsed"]) for m in ms]
        assert stamps[0] <= every + late.slack_s, (r, stamps, late.most)
        gaps = [b - a for a, b in zip(stamps, stamps[1:])]
        assert max(gaps) <= LATE * every + late.slack_s, (r, stamps, late.most)
        assert stamps == sorted(stamps) and stamps[-1] >= 2.9
        for m in ms:  # the wall clock (UTC) of each line is within the run
            h, mi, sec = (int(x) for x in m["clock"][:-1].split(":"))
            day = h * 3600 + mi * 60 + sec
            lo, hi = (t % 86400 for t in (int(t_start), int(t_end)))
            assert lo - 1 <= day <= hi + 1 or hi < lo, m["clock"]  # (or over midnight)
        # setting up first (the runner's lines), then the work's counters, which move
        bodies = [m["body"] for m in ms]
        assert bodies[0] == "setting up"
        work = [WORK.match(b) for b in bodies if b.startswith("tasks ")]
        assert all(work) and len(work) >= 5
        done = [int(w[1]) for w in work]
        assert done == sorted(done) and done[0] < done[-1] and {w[2] for w in work} == {"3"}
        assert {m["engine"] for m in ms} == {"slow_units", "slow"}
    # repeats do not interleave: every line of the first comes before the second's
    assert lines.index(by_repeat["1/2"][-1]) < lines.index(by_repeat["2/2"][0])


def _graph(nl=150, nr=160, p=0.22, seed=1):
    rng = np.random.default_rng(seed)
    m = rng.random((nl, nr)) < p
    left, right = np.nonzero(m)
    return from_edges(left, right, nl, nr)


@pytest.mark.parametrize("engine", ["imbea", "parmbe"])
def test_real_engines_print_on_time_and_counts_are_unchanged(engine, monkeypatch, capsys):
    """The real searches on a graph of a few seconds, with lines every 0.5 s: on time from
    the search's start (the Numba kernels release the GIL to the timer thread), counters
    that move, and the same count and fingerprint as without lines."""
    g = _graph(260, 280, 0.2)
    run = imbea.run if engine == "imbea" else (lambda g: parmbe.run(g, processes=2))
    monkeypatch.setenv(progress.INTERVAL_ENV, "0")
    quiet = run(g)
    assert capsys.readouterr().err.count("progress:") == 0
    every = 0.5
    monkeypatch.setenv(progress.INTERVAL_ENV, str(every))
    monkeypatch.setenv(progress.LABEL_ENV, "g test shard 0/1")
    with Lateness() as late:
        loud = run(g)
    assert (loud.count, loud.fingerprint) == (quiet.count, quiet.fingerprint)
    lines = _lines(capsys.readouterr().err, engine)
    assert len(lines) >= 3, "too few progress lines in a run of many intervals"
    stamps = [float(m["elapsed"]) for m in lines]
    assert stamps[0] <= every + late.slack_s, (stamps, late.most)
    assert max(b - a for a, b in zip(stamps, stamps[1:])) <= LATE * every + late.slack_s, (
        stamps, late.most)
    assert {(m["label"], m["repeat"], m["shard"]) for m in lines} == {("g test", "1/1", "0/1")}
    work = [WORK.match(m["body"]) for m in lines]
    assert all(work), [m["body"] for m in lines]
    done = [int(w[1]) for w in work]
    counts = [int(w[4]) for w in work]
    assert done == sorted(done) and counts == sorted(counts) and done[0] < done[-1]
    assert len({w[2] for w in work}) == 1  # one total
    assert counts[-1] <= loud.count and float(work[-1][3]) <= 100.0


def test_imbea_chunks_cover_every_task_once():
    """The chunked search (counters published between chunks) gives the whole run's count,
    fingerprint and node count, for any interval, on shards too."""
    g = _graph(60, 70, 0.3, seed=4)
    prep, tasks = imbea.prepare(g, "left")
    for shard in ("0/1", "1/3"):
        t, _, costs = imbea.shard_tasks(prep, tasks, shard, with_costs=True)
        c, f, n, *_ = imbea.enumerate_tasks(prep, t)
        for every in (1e-6, 1e-3, 0.0):
            run = progress.Run("imbea", label_="x", every_s=every,
                               stream=open(os.devnull, "w"))
            run.begin_work(t[0].size, float(costs.sum()))
            assert imbea.enumerate_with_progress(prep, t, costs, run) == (int(c), int(f), int(n))


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
        while "chatty progress: toy x |" not in log.read_text():
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


def test_a_failing_sampler_is_said_once_and_the_lines_go_on():
    sink = Sink()
    run = progress.Run("e", label_="L", every_s=0.1, stream=sink)
    run.begin_work(10, 10.0)

    def broken():
        raise OSError("gone")

    run.sampler = broken
    run.start()
    try:
        time.sleep(0.55)
    finally:
        run.stop()
    notes = [ln for ln in sink.lines if "counters unreadable: OSError: gone" in ln]
    assert len(notes) == 1 and sum(bool(LINE.match(ln)) for ln in sink.lines) >= 3, sink.lines


_FORK_PROBE = """
import json, os, threading, time
import numpy as np
from baselines import parmbe
from mbebench import progress
from mbebench.csr import from_edges
def main():
    left, right = np.nonzero(np.random.default_rng(3).random((120, 130)) < 0.15)
    g = from_edges(left, right, 120, 130)
    quiet = parmbe.run(g, processes=2)
    os.environ[progress.INTERVAL_ENV] = "0.2"
    with progress.repeat("parmbe", 1, 1) as run:
        before, t0 = threading.active_count(), run.t0
        r = parmbe.run(g, processes=2)
        after, same = threading.active_count(), run.t0 == t0
        time.sleep(0.5)
    print(json.dumps({"threads": [before, after], "same_start": same,
                      "method": r.stats["start_method"],
                      "equal": [r.count, r.fingerprint] == [quiet.count, quiet.fingerprint]}))
if __name__ == "__main__":
    main()
"""


def test_parmbe_under_the_runner_forks_its_workers_and_the_lines_go_on(tmp_path):
    """The runner's line thread pauses while ParMBE's pool starts, so the workers are forks
    of the warmed parent (not a forkserver's), and the lines keep their schedule after.  In
    a process of its own: a test before it may have started numba's threading layer, after
    which no fork is sound."""
    script = tmp_path / "probe.py"  # a file: the pool's workers import the main module
    script.write_text(_FORK_PROBE)
    repo = HERE.parent
    out = subprocess.run([sys.executable, str(script)], cwd=repo, capture_output=True,
                         text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(repo)})
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res == {"threads": [2, 2], "same_start": True, "method": "fork", "equal": True}
    stamps = [float(m["elapsed"]) for m in _lines(out.stderr, "parmbe")]
    assert stamps and stamps == sorted(stamps) and stamps[-1] >= 0.4, stamps


def _wait_for(cond, limit_s: float = 5.0) -> bool:
    end = time.monotonic() + limit_s
    while not cond() and time.monotonic() < end:
        time.sleep(0.01)
    return cond()


def test_a_paused_run_keeps_its_schedule():
    """After a pause the next line comes when it was due, not at once (a restarted
    schedule would print again right away)."""
    run = progress.Run("x", every_s=1.0, stream=open(os.devnull, "w")).start()
    try:
        assert _wait_for(lambda: run.lines == 1)
        with progress.paused():  # not the runner's run: nothing to pause
            assert run._thread is not None
        assert run.pause() and run._thread is None
        run.resume()
        time.sleep(0.1)
        assert run.lines == 1 and run._thread is not None  # the next line is due at 2 s
        assert _wait_for(lambda: run.lines == 2)
    finally:
        run.stop()


def test_an_engines_own_run_prints_no_line_after_its_search(monkeypatch):
    """Outside the runner an engine's run ends with its search: its line thread stops
    before the search's end is recorded, so no "finishing" line slips in between (it did
    when the engine's process was descheduled there)."""
    real = progress.Run.end_work

    def descheduled(self):
        real(self)
        time.sleep(0.35)  # longer than an interval: the window a late stop left open

    monkeypatch.setattr(progress.Run, "end_work", descheduled)
    out = io.StringIO()
    with progress.work("x", 4, 4.0, every_s=0.1, stream=out) as run:
        run.update(1, 1.0, 5)
        time.sleep(0.25)
    bodies = [m["body"] for m in _lines(out.getvalue(), "x")]
    assert bodies and all(WORK.match(b) for b in bodies), bodies


def test_what_a_run_had_found_is_read_from_its_last_progress_line():
    head = "cumbe progress: g.csr | repeat 1/1 | shard 0/1 | 08:30:05Z"
    lines = (f"{head} +50.0 s | tasks 24609/148591 (cost 49.2%), 3849314 bicliques, "
             "7.70e+04/s, ETA ? s\n"
             f"{head} +60.0 s | tasks 26109/148591 (cost 51.4%), 4914738 bicliques, "
             "8.19e+04/s, ETA ? s\n"
             "Traceback: not a progress line, 7 bicliques, 1/s\n")
    assert progress.found_so_far(lines) == (4914738, 8.19e4)
    assert progress.found_so_far("no progress here") is None
