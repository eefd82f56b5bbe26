"""Progress lines of a long engine run, written to the run's log.

A run of an hour that prints nothing looks hung, and a killed one leaves no hint of how
far it got.  So an engine run lasting more than :func:`interval` seconds (10 by
default) writes one line to stderr (the rule's log) at least that often:

    imbea progress: hubs imbea shard 1/3: tasks 120/480 (cost 31.0%), 5321 bicliques,
        4.1e+03/s, ETA 29 s                                              (one line)

``tasks D/T`` counts first-level tasks done of the run's (the shard's) total, ``cost P%``
is the share of their estimated cost done (the costs :mod:`mbebench.shard` balances
shards by), ``R/s`` is bicliques per second so far and the ETA extrapolates the time so
far by the cost still to do.  ``python -m mbebench status`` shows a running run's last
line.

The line's format is :func:`format_line`, shared by every engine (iMBEA and ParMBE here;
cuMBE's launch prints it from the kernel's counters, :mod:`cumbe.progress`).  :class:`Reporter` decides
when a line is due; an engine calls :meth:`Reporter.update` between tasks.  The interval
is ``MBEBENCH_PROGRESS_S`` (seconds; ``0`` turns progress off); the label names the run
(the runner sets ``MBEBENCH_PROGRESS_LABEL`` to ``<dataset> <run id>[ shard i/n]``).
"""

from __future__ import annotations

import math
import os
import re
import sys
import time
from collections.abc import Callable
from typing import TextIO

INTERVAL_ENV = "MBEBENCH_PROGRESS_S"
LABEL_ENV = "MBEBENCH_PROGRESS_LABEL"
DEFAULT_INTERVAL_S = 10.0
# A line is printed once this share of the interval has passed since the last one, so
# that a line still comes within the interval when the next chance (the end of the next
# task or chunk of tasks) is a little late.
DUE_SHARE = 0.8
MARK = " progress: "


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


def _num(x: float) -> str:
    return f"{x:.3g}" if x < 1e4 else f"{x:.2e}"


def format_line(engine: str, label: str, done: int, total: int, cost_done: float,
                cost_total: float, count: int, elapsed_s: float, *,
                eta: str | None = None) -> str:
    """``<engine> progress: <label>: tasks D/T (cost P%), C bicliques, R/s, ETA S s``.

    The ETA is ``?`` until some cost is done (or when the total cost is unknown); ``eta``
    replaces it (cuMBE: ``"? s (stolen work left)"`` once every first-level task is done:
    what is left then is stolen work of unknown size)."""
    share = cost_done / cost_total if cost_total > 0 else (done / total if total else 1.0)
    share = min(max(share, 0.0), 1.0)
    rate = count / elapsed_s if elapsed_s > 0 else 0.0
    if eta is None:
        eta = (f"{elapsed_s * (1 - share) / share:.0f}" if share > 0 else "?") + " s"
    return (f"{engine}{MARK}{label}: tasks {done}/{total} (cost {100 * share:.1f}%), "
            f"{count} bicliques, {_num(rate)}/s, ETA {eta}")


_LINE = re.compile(r"^[\w.+-]+ progress: .*: tasks \d+/\d+ ")


def is_progress(line: str) -> bool:
    """Whether a log line is a progress line (``python -m mbebench status``)."""
    return bool(_LINE.match(line.strip()))


class Reporter:
    """Prints a progress line when one is due.

    ``update`` is cheap when no line is due (one clock read), so an engine may call it
    after every task.  ``enabled`` is False when the interval is 0."""

    def __init__(self, engine: str, total: int, cost_total: float, *,
                 label_: str | None = None, every_s: float | None = None,
                 stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic):
        self.engine = engine
        self.total = int(total)
        self.cost_total = float(cost_total)
        self.label = label() if label_ is None else label_
        self.every_s = interval() if every_s is None else float(every_s)
        self.stream = stream
        self.clock = clock
        self.start = clock()
        self.last = self.start
        self.lines = 0

    @property
    def enabled(self) -> bool:
        return self.every_s > 0

    def due(self) -> bool:
        return self.enabled and self.clock() - self.last >= DUE_SHARE * self.every_s

    def line(self, done: int, cost_done: float, count: int) -> str:
        return format_line(self.engine, self.label, int(done), self.total, float(cost_done),
                           self.cost_total, int(count), self.clock() - self.start)

    def update(self, done: int, cost_done: float, count: int) -> bool:
        """Print a line if one is due; True if it did."""
        if not self.due():
            return False
        stream = self.stream or sys.stderr
        print(self.line(done, cost_done, count), file=stream, flush=True)
        self.last = self.clock()
        self.lines += 1
        return True
