"""Progress lines of a running engine, written to the run's log (stderr).

A run of an hour that prints nothing looks hung, and a killed one leaves no hint of how
far it got.  So every run writes a line at least every :func:`interval` seconds (10 by
default, ``MBEBENCH_PROGRESS_S``; ``0`` turns lines off), from its first seconds on:

    imbea progress: hubs imbea-0 | repeat 1/3 | shard 1/3 | 15:04:05Z +31.0 s | tasks 120/480
        (cost 31.0%), 5321 bicliques, 4.1e+03/s, ETA 52 s (40-68 s)            (one line)

* the header: the run's label (the runner sets ``MBEBENCH_PROGRESS_LABEL`` to
  ``<dataset> <run id>``), the repeat, the shard, the wall-clock time (UTC) and the
  seconds since the repeat started;
* the body: what the engine is doing (``setting up``, ``planning``...) until its search
  runs, then first-level tasks done of the run's (the shard's) total, the share of their
  estimated cost done (the costs :mod:`mbebench.shard` balances shards by), bicliques so
  far and per second, and an ETA (:class:`Eta`) or ``ETA ? s`` when the estimate is not
  steady enough to be trusted.

A timer thread prints the lines (:class:`Run`), from the counters the engine last
published (:meth:`Run.update`) or reads through a function it gave (``Run.sampler``):
the cadence does not depend on how long the engine's units of work take, as long as the
engine does not hold the GIL (the Numba searches release it).  ``python -m mbebench
status`` shows a running run's last line (:func:`is_progress`).

Engines call :func:`work` around their search; the runner wraps each repeat in
:func:`repeat`, so that setup is covered too and the lines carry the repeat number.  An
engine called on its own (a test, a script) gets a :class:`Run` of its own.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

import numpy as np

INTERVAL_ENV = "MBEBENCH_PROGRESS_S"
LABEL_ENV = "MBEBENCH_PROGRESS_LABEL"
# the repeat running now ("2/3"), for the lines of processes an engine starts (cuMBE's
# device workers)
REPEAT_ENV = "MBEBENCH_PROGRESS_REPEAT"
DEFAULT_INTERVAL_S = 10.0
MARK = " progress: "
# The timer samples the counters this many times per line, so that the ETA's recent rate
# is measured over several samples even when lines are far apart.
SAMPLES_PER_LINE = 5
MIN_SAMPLE_S = 0.05
STOP_WAIT_S = 5.0


def interval() -> float:
    """Seconds between progress lines (``MBEBENCH_PROGRESS_S``); 0: no progress lines."""
    text = os.environ.get(INTERVAL_ENV, "").strip()
    if not text:
        return DEFAULT_INTERVAL_S
    try:
        value = float(text)
    except ValueError:
        return DEFAULT_INTERVAL_S
    return value if math.isfinite(value) and value > 0 else 0.0


def label() -> str:
    """What the line names the run by (``MBEBENCH_PROGRESS_LABEL``; the runner sets it)."""
    return " ".join(os.environ.get(LABEL_ENV, "").split()) or "run"


def repeat_now() -> tuple[int, int]:
    """The repeat running now: the runner's (``MBEBENCH_PROGRESS_REPEAT``), else 1 of 1."""
    m = re.fullmatch(r"(\d+)/(\d+)", os.environ.get(REPEAT_ENV, "").strip())
    return (int(m.group(1)), int(m.group(2))) if m else (1, 1)


_SHARD_IN_LABEL = re.compile(r"^(.*?)\s*\bshard (\d+/\d+)$")


def split_label(text: str) -> tuple[str, str | None]:
    """(label, shard): the runner names a shard at the label's end ("hubs imbea shard 1/3");
    the line carries the shard in a field of its own."""
    m = _SHARD_IN_LABEL.match(text)
    return (m.group(1) or "run", m.group(2)) if m else (text, None)


def _num(x: float) -> str:
    return f"{x:.3g}" if x < 1e4 else f"{x:.2e}"


def _secs(x: float) -> str:
    return f"{x:.0f}" if x >= 10 else f"{x:.1f}"


class Eta:
    """Seconds left, from the share of the estimated cost done, or None when that
    cannot be trusted.

    The engines know each task's estimated cost (wedges + degree), not its time, and
    the time per unit of cost varies between tasks (8x between ParMBE's tasks on
    YouTube) and drifts through a run (iMBEA takes its tasks cheapest first).  So the
    estimator measures the rate (cost per second) over each quarter of the time so far
    and extrapolates the cost left at the fastest and at the slowest of them, counting
    the share done two ways: tasks finished (``lo``) and tasks started (``hi``; ParMBE's
    workers are inside their tasks, iMBEA is inside a chunk), the truth being between.

    A third extrapolation follows the trend of the quarter rates (a straight line
    through them): a rate that keeps rising or falling widens the range.

    The ETA is the geometric middle of that range, shown with it; when the range is
    wider than :attr:`SPREAD` times (and more than :attr:`SLACK_S` apart), a quarter
    did no work, or less than :attr:`MIN_SHARE` of the cost is done, there is none
    (``ETA ? s``): better no ETA than a wrong one said with confidence.  So an ETA is
    within ``sqrt(SPREAD)`` of the truth whenever the rate ahead stays within the rates
    seen; benchmarks/progress measures its error against the true time left."""

    MIN_SHARE = 0.25
    SPREAD = 2.0
    SLACK_S = 1.0
    MIN_ELAPSED_S = 1.0
    WINDOWS = 4
    COVER = 0.8
    COVER_FACTOR = 2.0

    def __init__(self, costs=None) -> None:
        self.samples: list[tuple[float, float, float]] = [(0.0, 0.0, 0.0)]
        self.done: list[int] = [0]
        self.costs = None if costs is None else np.asarray(costs, dtype=np.float64)

    def add(self, t: float, lo: float, hi: float | None = None, done: int | None = None) -> None:
        """The share of the cost done ``t`` seconds into the search: ``lo`` finished,
        ``hi`` started (default ``lo``); ``done``: tasks finished (with ``costs``, the
        tasks' costs in the order they run)."""
        lo = min(max(float(lo), 0.0), 1.0)
        hi = lo if hi is None else min(max(float(hi), lo), 1.0)
        last = self.samples[-1]
        lo, hi = max(lo, last[1]), max(hi, last[2])
        done = max(int(done or 0), self.done[-1])
        if t <= last[0]:
            self.samples[-1] = (last[0], lo, hi)
            self.done[-1] = done
        else:
            self.samples.append((float(t), lo, hi))
            self.done.append(done)

    def covered(self) -> bool:
        """Whether the tasks left are like those done lately: most of the cost left is in
        tasks within :attr:`COVER_FACTOR` of the costs of the tasks finished in the last
        half of the time.  The time per unit of cost is not the same for light and heavy
        tasks: a rate measured on the heavy tasks says little about the light ones
        (ParMBE runs heaviest first, iMBEA cheapest first)."""
        if self.costs is None:
            return True
        t = self.samples[-1][0]
        i = next(j for j, s in enumerate(self.samples) if s[0] >= t / 2)
        first = self.done[max(i - 1, 0)]
        done = min(self.done[-1], self.costs.size)
        recent, left = self.costs[first:done], self.costs[done:]
        if recent.size == 0:
            return False
        if left.size == 0 or left.sum() <= 0:
            return True
        factor = self.COVER_FACTOR
        near = (left >= recent.min() / factor) & (left <= recent.max() * factor)
        return float(left[near].sum()) >= self.COVER * float(left.sum())

    def _at(self, t: float) -> tuple[float, float, float]:
        """The last sample at or before ``t``."""
        best = self.samples[0]
        for s in self.samples:
            if s[0] > t:
                break
            best = s
        return best

    def rates(self) -> list[float]:
        """The rate (share of the cost per second) of each quarter of the time so far:
        the shares done at the quarters' ends (finished tasks), over their lengths."""
        t = self.samples[-1][0]
        edges = [self._at(t * i / self.WINDOWS) for i in range(self.WINDOWS)]
        edges.append(self.samples[-1])
        out = []
        for a, b in zip(edges, edges[1:]):
            dt = b[0] - a[0]
            out.append((b[1] - a[1]) / dt if dt > 0 else 0.0)
        return out

    def _trend(self, t: float, left: float, rates: list[float]) -> float | None:
        """Seconds to do ``left`` if the rate keeps changing as it did over the quarters (a
        straight line through their rates): ParMBE's tasks get faster per unit of cost as
        it goes, iMBEA's slower.  None if that rate reaches nothing first."""
        n = len(rates)
        mids = [t * (i + 0.5) / n for i in range(n)]
        mt, mr = sum(mids) / n, sum(rates) / n
        var = sum((m - mt) ** 2 for m in mids)
        slope = sum((m - mt) * (r - mr) for m, r in zip(mids, rates)) / var if var else 0.0
        now = mr + slope * (t - mt)
        if now <= 0:
            return None
        if abs(slope) < 1e-12:
            return left / now
        disc = now * now + 2 * slope * left
        if disc < 0:
            return None
        return (math.sqrt(disc) - now) / slope

    def estimate(self) -> tuple[float, float, float] | None:
        """(seconds left, low, high), or None."""
        t, lo, hi = self.samples[-1]
        if lo >= 1.0:
            return (0.0, 0.0, 0.0)
        if lo < self.MIN_SHARE or t < self.MIN_ELAPSED_S:
            return None
        rates = self.rates()
        if min(rates) <= 0:
            return None  # a quarter that did no work: the rate is not steady
        if not self.covered():
            return None
        trend = self._trend(t, 1 - lo, rates)
        if trend is None:
            return None  # the rate falls to nothing before the end
        low = min((1 - hi) / max(rates), trend)
        high = max((1 - lo) / min(rates), trend)
        if high > self.SPREAD * low and high - low > self.SLACK_S:
            return None
        return math.sqrt(max(low, 1e-3) * max(high, 1e-3)), low, high


def eta_text(est: tuple[float, float, float] | None) -> str:
    if est is None:
        return "ETA ? s"
    mid, low, high = est
    if high - low < 1.0 or _secs(low) == _secs(high):
        return f"ETA {_secs(mid)} s"
    return f"ETA {_secs(mid)} s ({_secs(low)}-{_secs(high)} s)"


def work_text(done: int, total: int, cost_done: float, cost_total: float, bicliques: int,
              rate: float, eta: str) -> str:
    """``tasks D/T (cost P%), C bicliques, R/s, ETA ...``: the body of a line while the
    search runs."""
    share = cost_done / cost_total if cost_total > 0 else (done / total if total else 1.0)
    share = min(max(share, 0.0), 1.0)
    return (f"tasks {done}/{total} (cost {100 * share:.1f}%), {bicliques} bicliques, "
            f"{_num(rate)}/s, {eta}")


def header(engine: str, label_: str, repeat: tuple[int, int], shard: str | None,
           wall: float, elapsed: float) -> str:
    """``<engine> progress: <label> | repeat r/R | shard i/n | HH:MM:SSZ +S s``."""
    name, in_label = split_label(label_)
    stamp = time.strftime("%H:%M:%SZ", time.gmtime(wall))
    return (f"{engine}{MARK}{name} | repeat {repeat[0]}/{repeat[1]} | "
            f"shard {shard or in_label or '0/1'} | {stamp} +{elapsed:.1f} s")


_LINE = re.compile(r"^[\w.+-]+ progress: (.*: tasks \d+/\d+ |.* \| repeat \d+/\d+ \| )")


def is_progress(line: str) -> bool:
    """Whether a log line is a progress line (``python -m mbebench status``)."""
    return bool(_LINE.match(line.strip()))


_FOUND = re.compile(r"(?:^|[,;] )([0-9.e+]+) bicliques, ([0-9.e+]+)/s")


def found_so_far(lines: str) -> tuple[int, float] | None:
    """(bicliques found, their rate per second) as the last progress line in ``lines`` says,
    or None: what a run stopped at its time limit had done."""
    for line in reversed(lines.splitlines()):
        if is_progress(line) and (m := _FOUND.search(line)):
            return int(float(m[1])), float(m[2])
    return None


class Run:
    """One repeat of one engine run: what its lines say, and the thread that prints them.

    The engine publishes its counters with :meth:`update` (cheap: a lock and a few
    stores) or gives ``sampler``, a function the timer thread calls for
    (done, cost_done, bicliques[, cost_started]).  The thread prints a line every
    ``every_s`` seconds from :meth:`start` on, whatever the engine is doing."""

    def __init__(self, engine: str = "run", *, label_: str | None = None,
                 repeat: tuple[int, int] | None = None, shard: str | None = None,
                 every_s: float | None = None, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time):
        self.engine = engine
        self.label = label() if label_ is None else label_
        self.repeat = repeat_now() if repeat is None else repeat
        self.shard = shard
        self.every_s = interval() if every_s is None else float(every_s)
        self.stream = stream
        self.clock, self.wall = clock, wall
        self.phase = "setting up"
        self.total = 0
        self.cost_total = 0.0
        self.counters = (0, 0.0, 0, None)  # done, cost done, bicliques, cost started
        self.sampler: Callable[[], tuple] | None = None
        self.eta = Eta()
        self.searching = False
        self.t0 = self.t_work = clock()
        self.t_work_end: float | None = None
        self.lines = 0
        self.held = 0
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._due: float | None = None  # the next line's time, kept across a pause

    @property
    def enabled(self) -> bool:
        return self.every_s > 0

    # -- the engine's side --
    def begin_work(self, total: int, cost_total: float, engine: str | None = None,
                   shard: str | None = None, costs=None) -> None:
        """The search starts: ``total`` tasks of ``cost_total`` estimated cost (``costs``:
        each task's, in the order they run, if known: :meth:`Eta.covered`)."""
        with self._lock:
            if engine:
                self.engine = engine
            if shard:
                self.shard = shard
            self.total, self.cost_total = int(total), float(cost_total)
            self.counters = (0, 0.0, 0, None)
            self.eta = Eta(costs)
            self.searching = True
            self.t_work = self.clock()

    def end_work(self) -> None:
        with self._lock:
            self.sample()
            self.t_work_end = self.clock()
            self.searching = False
            self.sampler = None
            self.phase = "finishing"

    def update(self, done: int, cost_done: float, bicliques: int,
               cost_started: float | None = None) -> None:
        with self._lock:
            self.counters = (int(done), float(cost_done), int(bicliques), cost_started)

    # -- the timer's side --
    def sample(self) -> None:
        """Read the sampler (if any) and give the ETA a point."""
        with self._lock:
            if not self.searching:
                return
            if self.sampler is not None:
                got = tuple(self.sampler())
                self.counters = (int(got[0]), float(got[1]), int(got[2]),
                                 got[3] if len(got) > 3 else None)
            done, cost, _, started = self.counters
            if self.cost_total > 0:
                self.eta.add(self.clock() - self.t_work, cost / self.cost_total,
                             None if started is None else started / self.cost_total, done)

    def line(self) -> str:
        with self._lock:
            now = self.clock()
            head = header(self.engine, self.label, self.repeat, self.shard, self.wall(),
                          now - self.t0)
            if not self.searching:
                return f"{head} | {self.phase}"
            done, cost, bicliques, _ = self.counters
            dt = now - self.t_work
            return f"{head} | " + work_text(done, self.total, cost, self.cost_total,
                                            bicliques, bicliques / dt if dt > 0 else 0.0,
                                            eta_text(self.eta.estimate()))

    def emit(self) -> None:
        with self._lock:
            print(self.line(), file=self.stream or sys.stderr, flush=True)
            self.lines += 1

    def _tick(self) -> None:
        step = max(self.every_s / SAMPLES_PER_LINE, MIN_SAMPLE_S)
        due = self._due if self._due is not None else self.t0 + self.every_s
        stop = self._stop
        while not stop.wait(max(min(step, due - self.clock()), 0.0)):
            try:
                self.sample()
                now = self.clock()
                if now >= due:
                    if not self.held:
                        self.emit()
                    due += self.every_s * (1 + (now - due) // self.every_s)
                self._due = due
            except Exception as e:  # noqa: BLE001 - a progress line must never end a run
                # said once; the lines go on with the counters the engine last published
                print(f"{self.engine}{MARK}(counters unreadable: {type(e).__name__}: {e})",
                      file=self.stream or sys.stderr, flush=True)
                with self._lock:
                    self.sampler = None

    def start(self) -> Run:
        if self.enabled and self._thread is None:
            self.t0 = self.t_work = self.clock()
            self._thread = threading.Thread(target=self._tick, name="mbebench-progress",
                                            daemon=True)
            self._thread.start()
        return self

    def pause(self) -> bool:
        """Stop the line thread for a while (:func:`paused`); whether it stopped."""
        if self._thread is None:
            return True
        self._stop.set()
        self._thread.join(timeout=STOP_WAIT_S)
        if self._thread.is_alive():  # stuck in a sampler: it stays, and so does its stop
            return False
        self._thread = None
        self._stop = threading.Event()
        return True

    def resume(self) -> None:
        """Start the line thread again after :meth:`pause`, on the same schedule (a line
        due meanwhile comes at once)."""
        if self.enabled and self._thread is None:
            self._thread = threading.Thread(target=self._tick, name="mbebench-progress",
                                            daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            # a daemon: one stuck in an engine's sampler must not hold up the run's end
            self._thread.join(timeout=STOP_WAIT_S)
        self._thread = None


_CURRENT: list[Run] = []


def current() -> Run | None:
    """The runner's :class:`Run` of the repeat running now, if any."""
    return _CURRENT[-1] if _CURRENT else None


@contextlib.contextmanager
def repeat(engine: str, number: int, of: int, shard: str | None = None) -> Iterator[Run]:
    """The runner: repeat ``number`` of ``of`` of ``engine`` (on ``shard``) runs inside;
    lines from now on."""
    run = Run(engine, repeat=(int(number), int(of)), shard=shard).start()
    _CURRENT.append(run)
    before = os.environ.get(REPEAT_ENV)
    os.environ[REPEAT_ENV] = f"{int(number)}/{int(of)}"
    try:
        yield run
    finally:
        _CURRENT.remove(run)
        run.stop()
        if before is None:
            os.environ.pop(REPEAT_ENV, None)
        else:
            os.environ[REPEAT_ENV] = before


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No line thread of the runner's run while inside, so that a fork of this process
    copies its only thread (ParMBE forks its workers: a thread's held lock would stay held
    in every child); lines go on after, on the same schedule."""
    run = current()
    stopped = run is not None and run.pause()
    try:
        yield
    finally:
        if stopped:
            run.resume()


@contextlib.contextmanager
def phase(text: str) -> Iterator[Run | None]:
    """An engine's setup step (``planning``...), named in the lines while it lasts."""
    run = current()
    if run is None:
        yield None
        return
    before = run.phase
    run.phase = text
    try:
        yield run
    finally:
        run.phase = before


@contextlib.contextmanager
def work(engine: str, total: int, cost_total: float, *, shard: str | None = None,
         costs=None, every_s: float | None = None,
         stream: TextIO | None = None) -> Iterator[Run]:
    """An engine's search: ``total`` first-level tasks (or items) of ``cost_total``
    estimated cost (``costs``: each one's, in the order they run).  Inside the runner's
    repeat it joins that :class:`Run`; otherwise it starts one of its own for the search's
    time."""
    run = current()
    own = run is None
    if own:
        run = Run(engine, shard=shard, every_s=every_s, stream=stream).start()
    run.begin_work(total, cost_total, engine, shard, costs)
    try:
        yield run
    finally:
        if own:  # its thread first: a line between the two would say "finishing"
            run.stop()
        run.end_work()
