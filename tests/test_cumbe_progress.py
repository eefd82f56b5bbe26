"""Progress lines while a cuMBE kernel runs (cumbe.progress, polled by
cumbe.launch.checked_launch): fakes stand in for the device, as in test_cumbe_faults.py.
That the kernel's counters end at every task and every biclique is checked in the
simulator (test_cumbe_paths.py, and every selfcheck run)."""

from __future__ import annotations

import os
import re
import time

import pytest

from cumbe import launch as cumbe_launch
from cumbe import progress as cumbe_progress
from cumbe.progress import Progress, Stealing
from mbebench import progress as mbe_progress
from mbebench.progress import INTERVAL_ENV, LABEL_ENV, is_progress
from slowness import bound

HEAD = r"cumbe progress: G \| repeat 1/1 \| shard 0/1 \| \d\d:\d\d:\d\dZ \+[\d.]+ s \| "
LINE = re.compile(HEAD + r"(tasks \d+/10 \(cost [\d.]+%\), \d+ bicliques, \S+/s, "
                  r"ETA ([\d.]+ s|[\d.]+ s \([\d.]+-[\d.]+ s\)|\? s)|"
                  r"tasks 10/10 \(cost 100.0%\), stolen work; \d+ bicliques, \S+/s "
                  r"\(last \d+ s: \S+/s\), ETA \? s \(stolen work left\))$")
WALL = 1795014245.0  # 15:04:05 UTC


class FakeCuda:
    """A kernel that runs ``run_s`` seconds of ``clock`` after its launch."""

    def __init__(self, clock, run_s, fail_query=None):
        self.clock, self.run_s, self.end, self.fail_query = clock, run_s, None, fail_query
        self.queries = self.syncs = 0

    def synchronize(self):
        pass

    def stream(self):
        return "kernel stream"

    def event(self):
        cuda = self

        class Event:
            def record(self, stream=0):
                assert stream == "kernel stream"  # the progress reader copies on another

            def query(self):
                cuda.queries += 1
                if cuda.fail_query:
                    raise cuda.fail_query
                return cuda.clock() >= cuda.end

            def synchronize(self):
                cuda.syncs += 1
                while cuda.clock() < cuda.end:
                    time.sleep(0.0002)
                if cuda.fail_query:
                    raise cuda.fail_query

        return Event()

    def event_elapsed_time(self, e0, e1):
        return self.run_s * 1e3


class FakeKernel:
    def __init__(self, cuda):
        self.cuda = cuda

    def __getitem__(self, config):
        assert config[2] == "kernel stream", config

        def launch(*args):
            self.cuda.end = self.cuda.clock() + self.cuda.run_s

        return launch


def _launch(cuda, progress):
    return cumbe_launch.checked_launch(FakeKernel(cuda), 4, 128, (), cuda=cuda, what="G",
                                       device="H100", progress=progress)


def test_a_device_workers_launches_reuse_their_stream_and_events():
    """cumbe.kept: a worker's second shard creates no stream or event (each is a driver
    call, and four workers' calls at once made every shard's set-up 3-5x slower)."""
    from cumbe.kept import Kept

    made = []
    cuda = FakeCuda(time.monotonic, 0.001)
    stream, event = cuda.stream, cuda.event
    cuda.stream = lambda: made.append("stream") or stream()
    cuda.event = lambda: made.append("event") or event()
    kept = Kept()
    for _ in range(3):
        assert cumbe_launch.checked_launch(FakeKernel(cuda), 4, 128, (), cuda=cuda, what="G",
                                           device="H100", kept=kept) == pytest.approx(0.001)
    assert sorted(made) == ["event", "event", "stream"]


def test_a_line_says_tasks_cost_bicliques_rate_and_eta():
    # every engine's line (mbebench.progress), so `mbebench status` reads it
    p = Progress([3, 30, 12345], 10, 100, "G", interval=10, wall=lambda: WALL)
    assert p.line(10.0) == ("cumbe progress: G | repeat 1/1 | shard 0/1 | 15:04:05Z +10.0 s | "
                            "tasks 3/10 (cost 30.0%), 12345 bicliques, 1.23e+03/s, ETA ? s")
    assert is_progress(p.line(10.0)) and LINE.match(p.line(11.0))
    assert Progress([0, 0, 0], 10, 100, "G", interval=10).line(1.0).endswith("ETA ? s")
    done = Progress([10, 100, 810000000], 10, 100, "G", interval=10, wall=lambda: WALL)
    done.last = (3.0, 10000000)  # the line before, 10 s earlier
    assert done.line(13.0) == (
        "cumbe progress: G | repeat 1/1 | shard 0/1 | 15:04:05Z +13.0 s | tasks 10/10 "
        "(cost 100.0%), stolen work; 810000000 bicliques, 6.23e+07/s (last 10 s: 8.00e+07/s), "
        "ETA ? s (stolen work left)")
    assert done.end() == {"tasks": 10, "of_tasks": 10, "cost": 100, "of_cost": 100,
                          "bicliques": 810000000}


def test_a_steady_kernel_gets_an_eta_from_its_cost():
    # 10 % of the cost a second, tasks started 1 s ahead of those done
    now = [0.0]
    state = {"ctl": [[0] * (cumbe_progress.CTL_FIXED + 3 * 4) for _ in range(2)]}
    costs = [10] * 10
    st = Stealing(lambda: (state["ctl"], [[0] * 4] * 2, [[0] * 4] * 2), 2, (1, 4), (0, 10),
                     costs)
    p = Progress(lambda: [int(now[0]), 10 * int(now[0]), 0], 10, 100, "G", interval=1,
                    stealing=st)
    for t in range(1, 6):
        now[0] = t
        state["ctl"][1][cumbe_progress.C_TASK] = t + 1
        line = p.line(float(t))
    # 50 % done and 60 % started at 10 % a second: 4-5 s left
    assert line.endswith("tasks 5/10 (cost 50.0%), 0 bicliques, 0/s, ETA 4.5 s (4.0-5.0 s)"), line


def test_skewed_stealing_shows_what_moves_and_a_lower_bound():
    """Every first-level task done, the kernel in its stealing stages: the line names the
    stage, the subtrees still queued for thieves and the busy workers, from the kernel's
    ``ctl`` and pools (copied as the counters are)."""
    k = 3
    width = cumbe_progress.CTL_FIXED + 3 * (k + 2)
    ctl = [[0] * width, [0] * width]
    ctl[1][cumbe_progress.C_TASK] = 12  # phase 1 (warp tasks): every task taken
    ctl[1][cumbe_progress.CTL_FIXED + (k + 2) + 1] = 3  # stage 1: three publishers
    ctl[1][cumbe_progress.CTL_FIXED + 2 * (k + 2) + 2] = 5  # stage 2: five workers out of work
    pool_n = [[0] * 8, [4, 0, 7, -2, 0, 0, 0, 0]]  # stage 1 published into pool 1
    pool_list = [[0] * 8, [0, 2, 3, 0, 0, 0, 0, 0]]  # ... by workers 0, 2 and 3
    st = Stealing(lambda: (ctl, pool_n, pool_list), k, (2, 8), (0, 10))
    assert st.read() == {"phase": 1, "stage": 2, "stages": 3, "queued": 11, "busy": 3,
                         "workers": 8, "started": 10}
    p = Progress([10, 100, 5000], 10, 100, "G", interval=10, stealing=st,
                    wall=lambda: WALL)
    assert p.line(20.0) == (
        "cumbe progress: G | repeat 1/1 | shard 0/1 | 15:04:05Z +20.0 s | tasks 10/10 (cost "
        "100.0%), stolen work: stage 2/3, 11 subtrees queued, 3/8 workers busy; 5000 bicliques, "
        "250/s (last 20 s: 250/s), ETA ? s (left: >= 11 queued subtrees + 3 running)")
    pool_n[1][2] = 1  # thieves took six pieces
    assert "5 subtrees queued" in p.line(30.0)


def test_inside_the_runner_the_line_has_its_repeat_and_the_runner_thread_waits():
    with mbe_progress.repeat("cumbe", 2, 3, shard="1/4") as run:
        run.label = "YouTube cumbe-0 shard 1/4"
        p = Progress([0, 0, 0], 10, 100, "g.csr", interval=10)
        line = p.line(1.0)
        assert line.startswith("cumbe progress: YouTube cumbe-0 | repeat 2/3 | shard 1/4 | ")
        cuda = FakeCuda(time.monotonic, run_s=0.5)
        seen = []
        orig = p.read

        def read():
            seen.append(run.held)
            return orig()

        p.read = read
        p.interval = 0.05
        _launch(cuda, p)
        assert seen and set(seen) == {1} and run.held == 0
        # a process started meanwhile (cuMBE's device workers) learns the repeat too
        assert os.environ[mbe_progress.REPEAT_ENV] == "2/3"
        worker = Progress([0, 0, 0], 10, 100, "g.csr", interval=10, shard="1/4")
        mbe_progress._CURRENT.remove(run)
        try:
            assert "| repeat 2/3 | shard 1/4 |" in worker.line(1.0)
        finally:
            mbe_progress._CURRENT.append(run)
    assert mbe_progress.REPEAT_ENV not in os.environ


def test_counters_may_be_a_reader_and_each_is_the_largest_seen():
    values = iter([[1, 10, 100], [3, 30, 50], [2, 40, 300]])  # copies can see old values
    p = Progress(lambda: next(values), 10, 100, "G", interval=10)
    assert [p.read() for _ in range(3)] == [(1, 10, 100), (3, 30, 100), (3, 40, 300)]
    assert p.end([10, 100, 400])["bicliques"] == 400


def test_lines_come_every_interval_while_the_kernel_runs(capsys):
    now = [1000.0]
    counters = [0, 0, 0]
    sleeps = []

    def sleep(dt):  # the kernel's counters advance with the (fake) time the host waits
        assert 0 <= dt <= cumbe_progress.POLL_S
        sleeps.append(dt)
        now[0] += dt
        el = now[0] - p.t0
        counters[:] = [min(10, int(el * 3)), min(100, int(el * 30)), int(el * 1000)]
        if now[0] >= cuda.end:
            time.sleep(0.05)  # (real time) for the thread in synchronize to see the end

    p = Progress(counters, 10, 100, "G", interval=1.0, clock=lambda: now[0], sleep=sleep)
    cuda = FakeCuda(lambda: now[0], run_s=4.5)
    assert _launch(cuda, p) == pytest.approx(4.5)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == p.lines == 4  # at 1, 2, 3 and 4 s of a 4.5 s kernel
    assert all(LINE.match(ln) for ln in lines), lines
    assert lines[0].endswith(" +1.0 s | tasks 3/10 (cost 30.0%), 1000 bicliques, 1e+03/s, "
                             "ETA ? s")
    assert lines[-1].endswith("(stolen work left)")  # every first-level task done by 4 s
    # polled to the end, no longer
    assert sum(sleeps) == pytest.approx(4.5, abs=cumbe_progress.POLL_S * 1.001)
    assert sleeps[0] == cumbe_progress.FIRST_POLL_S  # a short kernel is not kept waiting


def test_a_short_kernel_is_not_kept_waiting():
    cuda = FakeCuda(time.monotonic, run_s=0.01)
    p = Progress([0, 0, 0], 10, 100, "G", interval=10)
    t = time.monotonic()
    _launch(cuda, p)
    # (the fault: waiting a poll step of the interval's order, 1 s or more)
    assert time.monotonic() - t < bound(0.1, below=0.9) and p.lines == 0


def test_the_interval_comes_from_the_environment(monkeypatch, capsys):
    monkeypatch.setenv(cumbe_progress.ENV, "0.02")
    p = Progress([1, 5, 7], 10, 100, "G")
    assert p.interval == 0.02
    cuda = FakeCuda(time.monotonic, run_s=0.25)
    _launch(cuda, p)  # real time: the polling path of a real launch
    lines = capsys.readouterr().err.splitlines()
    assert 3 <= len(lines) == p.lines <= 13, lines
    assert all(LINE.match(ln) for ln in lines), lines
    # a thread waits in the end event's synchronize: no polls of the device while it runs
    # (they cost kernel time), and the end is seen at once
    assert cuda.queries == 0 and cuda.syncs >= 2


@pytest.mark.parametrize("value", ["0", "-1", "ten", "nan"])
def test_a_bad_interval_is_refused(monkeypatch, value):
    monkeypatch.setenv(cumbe_progress.ENV, value)
    with pytest.raises(ValueError, match=cumbe_progress.ENV):
        cumbe_progress.interval_s()


def test_the_default_interval_is_ten_seconds(monkeypatch):
    monkeypatch.delenv(cumbe_progress.ENV, raising=False)
    monkeypatch.delenv(INTERVAL_ENV, raising=False)
    assert cumbe_progress.interval_s() == 10.0


def test_every_engines_interval_and_label_hold_for_cumbe(monkeypatch, capsys):
    # MBEBENCH_PROGRESS_S=0 turns every engine's lines off, cuMBE's too
    monkeypatch.delenv(cumbe_progress.ENV, raising=False)
    monkeypatch.setenv(INTERVAL_ENV, "0")
    assert cumbe_progress.interval_s() == 0
    p = Progress([1, 5, 7], 10, 100, "G")
    _launch(FakeCuda(time.monotonic, run_s=0.1), p)
    assert p.lines == 0 and capsys.readouterr().err == ""
    monkeypatch.setenv(INTERVAL_ENV, "3")
    assert cumbe_progress.interval_s() == 3.0
    monkeypatch.setenv(cumbe_progress.ENV, "2")  # cuMBE's own, where set
    assert cumbe_progress.interval_s() == 2.0
    # the runner's label names the run; without it, the graph
    assert Progress([0, 0, 0], 10, 100, "g.csr").label == "g.csr"
    monkeypatch.setenv(LABEL_ENV, "YouTube cumbe-0 shard 1/3")
    assert Progress([0, 0, 0], 10, 100, "g.csr").line(1.0).startswith(
        "cumbe progress: YouTube cumbe-0 | repeat 1/1 | shard 1/3 | ")


def test_a_fault_seen_while_waiting_is_a_launch_error():
    now = [0.0]
    cuda = FakeCuda(lambda: now[0], run_s=1.0,
                    fail_query=RuntimeError("cuEventSynchronize results in "
                                            "CUDA_ERROR_ILLEGAL_ADDRESS"))

    def sleep(dt):
        now[0] += dt
        time.sleep(0.0005)

    p = Progress([0, 0, 0], 10, 100, "G", interval=0.1, clock=lambda: now[0], sleep=sleep)
    until_exit = "failed while running.*until the process exits"
    with pytest.raises(cumbe_launch.LaunchError, match=until_exit):
        _launch(cuda, p)


class FakeDeviceArray:
    def __init__(self, values):
        import numpy as np

        self.values = np.asarray(values)
        self.shape, self.dtype = self.values.shape, self.values.dtype
        self.streams = []

    def copy_to_host(self, out=None, stream=0):
        self.streams.append(stream)
        if out is None:
            return self.values.copy()
        out[...] = self.values
        return out


class FakeReaderCuda:
    def __init__(self):
        import numpy as np

        self.np = np
        self.synced = 0

    def pinned_array(self, shape, dtype):
        return self.np.zeros(shape, dtype)

    def stream(self):
        cuda = self

        class Stream:
            def synchronize(self):
                cuda.synced += 1

        return Stream()


def test_the_stealing_state_is_copied_on_a_stream_of_its_own():
    """The host copies ctl and the pools as it copies the counters: on a stream other than
    the kernel's (the default one would wait for the kernel), into memory it reuses."""
    k = 2
    ctl = FakeDeviceArray([[0] * (cumbe_progress.CTL_FIXED + 3 * (k + 2)) for _ in range(2)])
    pool_n = FakeDeviceArray([[0, 0], [3, 0]])
    pool_list = FakeDeviceArray([[0, 0], [0, 0]])
    cuda = FakeReaderCuda()
    read = cumbe_progress.stealing_reader(ctl, pool_n, pool_list, cuda)
    ctl.values[1][cumbe_progress.C_TASK] = 4
    # stage 1 published: worker 0, 3 pieces
    ctl.values[1][cumbe_progress.CTL_FIXED + (k + 2) + 1] = 1
    st = Stealing(read, k, (1, 2), (0, 4))
    assert st.read()["queued"] == 3 and cuda.synced == 1
    pool_n.values[1][0] = 1
    assert st.read()["queued"] == 1 and cuda.synced == 2
    assert all(s not in (0, None, "kernel stream") for a in (ctl, pool_n, pool_list)
               for s in a.streams)
    counters = FakeDeviceArray([[1, 10, 100], [2, 20, 200]])
    assert list(cumbe_progress.device_reader(counters, cuda)()) == [3, 30, 300]
    # a device worker's shards (cumbe.kept): the pinned buffers and streams of the first
    from cumbe.kept import Kept

    kept, made = Kept(), []
    pinned, stream = cuda.pinned_array, cuda.stream
    cuda.pinned_array = lambda *a, **k: made.append("pinned") or pinned(*a, **k)
    cuda.stream = lambda: made.append("stream") or stream()
    for _ in range(2):
        assert list(cumbe_progress.device_reader(counters, cuda, kept=kept)()) == [3, 30, 300]
        assert cumbe_progress.stealing_reader(ctl, pool_n, pool_list, cuda,
                                              kept=kept)()[1][1][0] == 1
    assert sorted(made) == ["pinned"] * 4 + ["stream"] * 2
    # the simulator: plain copies
    assert cumbe_progress.stealing_reader(ctl, pool_n, pool_list, cuda, sim=True)()[1][1][0] == 1
