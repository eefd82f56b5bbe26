"""Progress lines of a running cuMBE kernel, from counters the kernel keeps in device
memory: ``prog`` (a row per block: first-level tasks done, their cost estimates,
bicliques; :data:`cumbe.consts.PR_TASKS` ...) and the stealing state it keeps anyway
(``ctl``: per phase the task counter and, per stage, publishers and workers out of work;
``pool_n``/``pool_list``: the pieces each publisher still offers).

Every worker adds to ``prog`` as each piece of work ends, with reductions it does not wait
for; the host copies the counters on a stream of its own while the kernel runs on another
(:func:`device_reader`, :func:`stealing_reader`, :func:`cumbe.launch.checked_launch`).
While the kernel runs, :func:`cumbe.launch.checked_launch` waits for its end event and
prints a line every :func:`interval_s` seconds in every engine's format
(:mod:`mbebench.progress`)::

    cumbe progress: YouTube cumbe-0 | repeat 1/3 | shard 1/3 | 15:04:05Z +12.0 s | tasks
        1234/5000 (cost 41.0%), 8.10e+08 bicliques, 6.20e+07/s, ETA 35 s (28-44 s)

Once every first-level task is done, the tasks and their cost stand still for the rest of
a skewed run, so the line says what moves: the stealing stage, the subtrees still queued
for thieves and the workers still busy (a lower bound on what is left: that much work is
certainly not done), and the bicliques per second over the last interval::

    ... | tasks 3087/3087 (cost 100.0%), stolen work: stage 3/8, 41 subtrees queued,
        212/1056 workers busy; 2.10e+09 bicliques, 5.4e+07/s (last 10 s: 5.1e+07/s),
        ETA ? s (left: >= 41 queued subtrees + 212 running)

The label is the runner's (``MBEBENCH_PROGRESS_LABEL``), else the graph's file.  The count
of a run never comes from here (the kernel's result buffers), and nothing here imports
numba.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from cumbe.consts import C_TASK, CTL_FIXED, PR_BICLIQUES, PR_COST, PR_TASKS
from cumbe.kept import Kept
from mbebench import progress as mbe_progress
from mbebench import envvars

ENV = "MBEBENCH_CUMBE_PROGRESS_S"
# The kernel's end: a thread of its own blocks in the end event's synchronize, so the host
# sees the end at once (the multi-GPU queue pays any delay for every shard).  Polling the
# event from the waiting thread instead (cuEventQuery every 1-2 ms) slowed the short kernels
# (the figures are in the GPU and multi-GPU benchmarks).  The waiting thread only checks
# that thread's flag, from the first wait doubling up to the longest (tests pass a fake
# clock and sleep).
FIRST_POLL_S = 0.001
POLL_S = 0.002


def interval_s() -> float:
    """Seconds between two progress lines: ``MBEBENCH_CUMBE_PROGRESS_S`` (cuMBE's own, > 0) if set,
    else every engine's ``MBEBENCH_PROGRESS_S`` (default 10; 0: no lines)."""
    text = (envvars.get(ENV) or "").strip()
    if not text:
        return mbe_progress.interval()
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise ValueError(f"{ENV} must be a number of seconds > 0, not {text!r}")
    return value


def run_label(graph_label: str) -> str:
    """The runner's label of the run (``MBEBENCH_PROGRESS_LABEL``), else the graph's."""
    if os.environ.get(mbe_progress.LABEL_ENV, "").strip():
        return mbe_progress.label()
    return graph_label


class Stealing:
    """Where the kernel's work stealing stands, from copies of ``ctl``, ``pool_n`` and
    ``pool_list`` (:func:`stealing_reader`; racy copies of a running kernel: every number
    is clamped to what it can be).  ``k``: stages; ``workers``: (blocks, warps), the
    workers of phase 0 (block-wide tasks) and phase 1; ``tasks``: (phase 0's, phase 1's)
    first-level task counts; ``costs``: the tasks' cost estimates in launch order."""

    def __init__(self, reader, k: int, workers: tuple[int, int], tasks: tuple[int, int],
                 costs=None):
        self.reader, self.k = reader, int(k)
        self.workers, self.tasks = tuple(int(w) for w in workers), tuple(int(t) for t in tasks)
        self.cum = None
        if costs is not None:
            import numpy as np

            self.cum = np.concatenate(([0], np.cumsum(np.asarray(costs, dtype=np.int64))))

    def read(self) -> dict:
        ctl, pool_n, pool_list = self.reader()
        k = self.k
        phase = 1 if int(ctl[1][C_TASK]) > 0 or self.tasks[0] == 0 else 0
        started = [min(max(int(ctl[p][C_TASK]), 0), self.tasks[p]) for p in (0, 1)]
        row = ctl[phase]
        pubs = [int(row[CTL_FIXED + (k + 2) + s]) for s in range(k + 2)]
        idle = [int(row[CTL_FIXED + 2 * (k + 2) + s]) for s in range(k + 2)]
        stage = max([1] + [s for s in range(2, k + 1) if pubs[s - 1] > 0])
        nw = max(self.workers[phase], 1)
        queued = 0
        if stage > 1:
            par = (stage - 1) % 2
            n = min(max(pubs[stage - 1], 0), len(pool_list[par]))
            for i in range(n):
                w = int(pool_list[par][i])
                if 0 <= w < len(pool_n[par]):
                    queued += max(int(pool_n[par][w]), 0)
        out = {"phase": phase, "stage": stage, "stages": k, "queued": queued,
               "busy": min(max(nw - idle[stage], 0), nw), "workers": nw,
               "started": started[0] + started[1]}
        if self.cum is not None:
            n0 = self.tasks[0]
            out["started_cost"] = int(self.cum[started[0]]
                                      + self.cum[n0 + started[1]] - self.cum[n0])
        return out


class Progress:
    """Reads the kernel's progress counters and prints what they say."""

    def __init__(self, counters, n_tasks: int, total_cost: int, label: str, *,
                 interval: float | None = None, out=None, clock=time.monotonic,
                 sleep=None, stealing: Stealing | None = None, shard: str | None = None,
                 wall=time.time):
        self.counters = counters
        self.n_tasks = int(n_tasks)
        self.total_cost = int(total_cost)
        self.label = run_label(label)
        self.interval = interval_s() if interval is None else float(interval)
        self.out = out
        self.clock, self.wall = clock, wall
        self.sleep = sleep
        self.stealing = stealing
        self.shard = shard
        self.lines = 0
        self.seen = (0, 0, 0)
        self.t0 = clock()
        self.costs = stealing.cum[1:] - stealing.cum[:-1] if (
            stealing is not None and stealing.cum is not None) else None
        self.eta = mbe_progress.Eta(self.costs)
        self.last = (0.0, 0)  # (elapsed, bicliques) at the last line: the recent rate

    def start(self) -> None:
        """The kernel is being launched: elapsed time and the first line count from here."""
        self.t0 = self.clock()
        self.eta = mbe_progress.Eta(self.costs)
        self.last = (0.0, 0)

    def read(self) -> tuple[int, int, int]:
        """(tasks done, their cost, bicliques) as the counters stand now (``counters``: a
        sequence, or a function that returns one, e.g. :func:`device_reader`'s); each is
        the largest seen yet."""
        c = self.counters() if callable(self.counters) else self.counters
        self.seen = tuple(max(int(c[i]), s) for i, s in
                          zip((PR_TASKS, PR_COST, PR_BICLIQUES), self.seen))
        return self.seen

    def body(self, elapsed: float) -> str:
        """What the kernel has done, ``elapsed`` seconds after its launch."""
        tasks, cost, bicliques = self.read()
        steal = self.stealing.read() if self.stealing is not None else None
        started = steal.get("started_cost") if steal else None
        if self.total_cost > 0:
            self.eta.add(elapsed, cost / self.total_cost,
                         None if started is None else started / self.total_cost, tasks)
        rate = bicliques / elapsed if elapsed > 0 else 0.0
        t_last, b_last = self.last
        recent = (bicliques - b_last) / (elapsed - t_last) if elapsed > t_last else 0.0
        self.last = (elapsed, bicliques)
        if tasks < self.n_tasks:
            return mbe_progress.work_text(tasks, self.n_tasks, cost, self.total_cost, bicliques,
                                          rate, mbe_progress.eta_text(self.eta.estimate()))
        # every first-level task is done: stolen work of unknown size is left
        head = f"tasks {tasks}/{self.n_tasks} (cost 100.0%), stolen work"
        left = "ETA ? s"
        if steal is not None:
            head += (f": stage {steal['stage']}/{steal['stages']}, {steal['queued']} subtrees "
                     f"queued, {steal['busy']}/{steal['workers']} workers busy")
            left += f" (left: >= {steal['queued']} queued subtrees + {steal['busy']} running)"
        else:
            left += " (stolen work left)"
        return (f"{head}; {bicliques} bicliques, {mbe_progress._num(rate)}/s "
                f"(last {elapsed - t_last:.0f} s: {mbe_progress._num(recent)}/s), {left}")

    def line(self, elapsed: float) -> str:
        run = mbe_progress.current()
        if run is not None:  # the runner's repeat: its label, repeat and start
            head = mbe_progress.header("cumbe", run.label, run.repeat, self.shard or run.shard,
                             self.wall(), elapsed + (self.t0 - run.t0))
        else:
            # a device worker's process: the runner's repeat comes through the environment
            head = mbe_progress.header("cumbe", self.label, mbe_progress.repeat_now(), self.shard,
                                       self.wall(), elapsed)
        return f"{head} | {self.body(elapsed)}"

    def wait(self, event, context=None) -> None:
        """Until ``event`` (recorded after the launch) has happened, print a line every
        ``interval`` seconds.  A thread blocks in ``event.synchronize()`` (with ``context``,
        the launch's CUDA context, current in it); an error there is raised here, and the
        caller's own synchronize raises it again.  The runner's progress thread is held
        meanwhile: these lines say more than its own would."""
        done = threading.Event()
        failed = []

        def sync():
            try:
                if context is not None:
                    context.push()
                try:
                    event.synchronize()
                finally:
                    if context is not None:
                        context.pop()
            except BaseException as e:  # noqa: BLE001 - raised again in the waiting thread
                failed.append(e)
            finally:
                done.set()

        threading.Thread(target=sync, name="cumbe-kernel-end", daemon=True).start()
        due = self.t0 + self.interval if self.interval > 0 else float("inf")
        nap = FIRST_POLL_S
        run = mbe_progress.current()
        if run is not None:
            run.held += 1
        try:
            while not done.is_set():
                now = self.clock()
                if now >= due:
                    print(self.line(now - self.t0), file=self.out or sys.stderr, flush=True)
                    self.lines += 1
                    due += self.interval * (1 + (now - due) // self.interval)
                dt = min(nap, max(due - now, 0.0))
                if self.sleep is None:
                    done.wait(dt)
                else:
                    self.sleep(dt)
                nap = min(2 * nap, POLL_S)
        finally:
            if run is not None:
                run.held -= 1
        if failed:
            raise failed[0]

    def end(self, final=None) -> dict:
        """The counters once the kernel has ended: every task, every biclique.  ``final``:
        the kernel's counters as copied with its results, else read now."""
        tasks, cost, bicliques = self.read() if final is None else (int(x) for x in final)
        return {"tasks": tasks, "of_tasks": self.n_tasks, "cost": cost,
                "of_cost": self.total_cost, "bicliques": bicliques}


def device_reader(prog, cuda, sim: bool = False, kept=None):
    """A function that returns the progress counters, summed over the blocks' rows of the
    device array ``prog``, copied on a stream of its own into pinned memory: the kernel
    runs on another stream (:func:`cumbe.launch.checked_launch`), so the copy does not
    wait for it.  The simulator runs the kernel within its launch call: nothing to
    overlap.  ``kept`` (:class:`cumbe.kept.Kept`): its pinned buffer and stream."""
    if sim:
        return lambda: prog.copy_to_host().sum(axis=0)
    keep = kept if kept is not None else Kept()  # (a fresh one: this reader's own)
    host = keep.pinned_array(cuda, "prog", prog.shape, "int64")
    stream = keep.stream(cuda, "prog")

    def read():
        prog.copy_to_host(host, stream=stream)
        stream.synchronize()
        return host.sum(axis=0)

    return read


def stealing_reader(ctl, pool_n, pool_list, cuda, sim: bool = False, kept=None):
    """A function that returns host copies of the kernel's stealing state (``ctl``,
    ``pool_n``, ``pool_list``: :class:`Stealing`), copied as :func:`device_reader` copies
    ``prog``: on a stream of its own, so that the copies do not wait for the kernel."""
    arrays = (ctl, pool_n, pool_list)
    if sim:
        return lambda: tuple(a.copy_to_host() for a in arrays)
    keep = kept if kept is not None else Kept()
    hosts = tuple(keep.pinned_array(cuda, f"steal{i}", a.shape, a.dtype)
                  for i, a in enumerate(arrays))
    stream = keep.stream(cuda, "steal")

    def read():
        for a, h in zip(arrays, hosts):
            a.copy_to_host(h, stream=stream)
        stream.synchronize()
        return hosts

    return read
