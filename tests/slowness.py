"""How much slower than on a usual day this machine runs now, for the few tests that bound a
wall time.  CI's 2-core machine was once about eight times slower than usual (docs/testing.md):
a bound of 0.1 s for something that takes milliseconds then fails though nothing is wrong.
A test scales its bound by :func:`factor`, but never to or past what the fault it looks for
would take (``below``), so that the fault still fails it."""

from __future__ import annotations

import functools
import time

# sum(range(10**7)), the best of three, on a 2-core CI machine on a usual day: 0.10-0.12 s
# (2026-12-02); 1.5 s on the slow day's machine would be factor 10
REFERENCE_S = 0.15


def _once() -> float:
    t = time.perf_counter()
    sum(range(10**7))
    return time.perf_counter() - t


@functools.cache
def factor() -> float:
    """1 on a usual day, else how many times slower (once a process)."""
    return max(1.0, min(_once() for _ in range(3)) / REFERENCE_S)


def bound(seconds: float, below: float) -> float:
    """``seconds`` (a usual day's bound) scaled by :func:`factor`, kept under ``below``."""
    return min(seconds * factor(), below)
