"""Progress lines of a running cuMBE kernel, from exact counters the kernel keeps in
device memory (``prog``, a row per block: first-level tasks done, their cost estimates,
bicliques; :data:`cumbe.kernel.PR_TASKS` ...).

Every worker adds to the counters as each piece of work ends, with reductions it does not
wait for; the host copies them on a stream of its own while the kernel runs on another
(:func:`device_reader`, :func:`cumbe.launch.checked_launch`).  While the kernel runs,
:func:`cumbe.launch.checked_launch` polls its end event and prints one line to stderr
every :func:`interval_s` seconds, in every engine's format
(:func:`mbebench.progress.format_line`)::

    cumbe progress: YouTube cumbe-0 shard 1/3: tasks 1234/5000 (cost 41.0%), 8.10e+08
    bicliques, 6.20e+07/s, ETA 35 s

The label is the runner's (``MBEBENCH_PROGRESS_LABEL``), else the graph's file.  The ETA
extrapolates the cost done; once every first-level task is done, what is left is stolen
work of unknown size ("ETA ? s (stolen work left)").  The count of a run never comes from
here (the kernel's result buffers), and nothing here imports numba.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from mbebench import progress as MP

ENV = "CUMBE_PROGRESS_S"
# The kernel's end: a thread of its own blocks in the end event's synchronize, so the host
# sees the end at once (the multi-GPU queue pays any delay for every shard).  Polling the
# event from the waiting thread instead (cuEventQuery every 1-2 ms) slowed the short kernels
# (the figures are in the GPU and multi-GPU benchmarks).  The waiting thread only checks
# that thread's flag, from the first wait doubling up to the longest (tests pass a fake
# clock and sleep).
FIRST_POLL_S = 0.001
POLL_S = 0.002
PR_TASKS, PR_COST, PR_BICLIQUES = range(3)  # as cumbe.kernel.consts (no numba import here)
NPROG = 3


def interval_s() -> float:
    """Seconds between two progress lines: ``CUMBE_PROGRESS_S`` (cuMBE's own, > 0) if set,
    else every engine's ``MBEBENCH_PROGRESS_S`` (default 10; 0: no lines)."""
    text = os.environ.get(ENV, "").strip()
    if not text:
        return MP.interval()
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise ValueError(f"{ENV} must be a number of seconds > 0, not {text!r}")
    return value


def run_label(graph_label: str) -> str:
    """The runner's label of the run (``MBEBENCH_PROGRESS_LABEL``), else the graph's."""
    return MP.label() if os.environ.get(MP.LABEL_ENV, "").strip() else graph_label


class Progress:
    """Reads the kernel's progress counters and prints what they say."""

    def __init__(self, counters, n_tasks: int, total_cost: int, label: str, *,
                 interval: float | None = None, out=None, clock=time.monotonic,
                 sleep=None):
        self.counters = counters
        self.n_tasks = int(n_tasks)
        self.total_cost = int(total_cost)
        self.label = run_label(label)
        self.interval = interval_s() if interval is None else float(interval)
        self.out = out
        self.clock = clock
        self.sleep = sleep
        self.lines = 0
        self.seen = (0, 0, 0)
        self.t0 = clock()

    def start(self) -> None:
        """The kernel is being launched: elapsed time and the first line count from here."""
        self.t0 = self.clock()

    def read(self) -> tuple[int, int, int]:
        """(tasks done, their cost, bicliques) as the counters stand now (``counters``: a
        sequence, or a function that returns one, e.g. :func:`device_reader`'s); each is
        the largest seen yet."""
        c = self.counters() if callable(self.counters) else self.counters
        self.seen = tuple(max(int(c[i]), s) for i, s in
                          zip((PR_TASKS, PR_COST, PR_BICLIQUES), self.seen))
        return self.seen

    def line(self, elapsed: float) -> str:
        tasks, cost, bicliques = self.read()
        return MP.format_line("cumbe", self.label, tasks, self.n_tasks, cost, self.total_cost,
                              bicliques, elapsed,
                              eta="? s (stolen work left)" if tasks >= self.n_tasks else None)

    def wait(self, event, context=None) -> None:
        """Until ``event`` (recorded after the launch) has happened, print a line every
        ``interval`` seconds.  A thread blocks in ``event.synchronize()`` (with ``context``,
        the launch's CUDA context, current in it); an error there is raised here, and the
        caller's own synchronize raises it again."""
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
        if failed:
            raise failed[0]

    def end(self, final=None) -> dict:
        """The counters once the kernel has ended: every task, every biclique.  ``final``:
        the kernel's counters as copied with its results, else read now."""
        tasks, cost, bicliques = self.read() if final is None else (int(x) for x in final)
        return {"tasks": tasks, "of_tasks": self.n_tasks, "cost": cost,
                "of_cost": self.total_cost, "bicliques": bicliques}


def device_reader(prog, cuda, sim: bool = False):
    """A function that returns the progress counters, summed over the blocks' rows of the
    device array ``prog``, copied on a stream of its own into pinned memory: the kernel
    runs on another stream (:func:`cumbe.launch.checked_launch`), so the copy does not
    wait for it.  The simulator runs the kernel within its launch call: nothing to
    overlap."""
    if sim:
        return lambda: prog.copy_to_host().sum(axis=0)
    host = cuda.pinned_array(prog.shape, dtype="int64")
    stream = cuda.stream()

    def read():
        prog.copy_to_host(host, stream=stream)
        stream.synchronize()
        return host.sum(axis=0)

    return read
