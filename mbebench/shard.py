"""Shards of one run: which first-level tasks shard ``i`` of ``n`` enumerates.

Every engine splits its search into independent first-level tasks, and every
maximal biclique is found by exactly one of them; the fingerprint is a sum
mod 2**64 (:mod:`mbebench.fingerprint`).  So any partition of the tasks gives
shard counts and fingerprints that add up to the whole run's.  The partition
is computed here, once for all engines, so that ``n`` processes (or machines)
given the same costs agree on it without talking to each other.

Balance is by estimated cost, not by task count: task costs of real graphs
span orders of magnitude, so equal counts would leave one shard with nearly
all the work.  :func:`assign` is LPT (largest cost first, each to the least
loaded shard), which is within 4/3 of the best makespan.
"""

from __future__ import annotations

import re

import numpy as np
from numba import njit

WHOLE = "0/1"
# the config schema's pattern (mbebench.spec.SHARD) cannot say i < n: parse does
_FORM = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse(shard: str) -> tuple[int, int]:
    """``"i/n"`` -> ``(i, n)``; a ValueError naming the string otherwise."""
    m = _FORM.match(shard) if isinstance(shard, str) else None
    if m:
        i, n = int(m.group(1)), int(m.group(2))
        if 0 <= i < n:
            return i, n
    raise ValueError(f"shard must be 'i/n' with 0 <= i < n (e.g. '0/4'), not {shard!r}")


@njit(cache=True)
def _lpt(order, costs, n):
    # Binary min-heap of shards keyed by (load, tasks, shard id): the tie-breaks
    # make the result a function of the costs alone, and the task count spreads
    # tasks of equal (e.g. zero) cost round-robin instead of onto shard 0.
    load = np.zeros(n, np.float64)
    ntask = np.zeros(n, np.int64)
    heap = np.arange(n)
    out = np.empty(order.size, np.int64)
    for t in range(order.size):
        s = heap[0]
        out[order[t]] = s
        load[s] += costs[order[t]]
        ntask[s] += 1
        # sift the root down
        j = 0
        while True:
            a = 2 * j + 1
            if a >= n:
                break
            b = a + 1
            c = a
            if b < n:
                sa, sb = heap[a], heap[b]
                if (load[sb] < load[sa]
                        or (load[sb] == load[sa]
                            and (ntask[sb] < ntask[sa]
                                 or (ntask[sb] == ntask[sa] and sb < sa)))):
                    c = b
            sc, sj = heap[c], heap[j]
            if (load[sc] < load[sj]
                    or (load[sc] == load[sj]
                        and (ntask[sc] < ntask[sj] or (ntask[sc] == ntask[sj] and sc < sj)))):
                heap[c], heap[j] = sj, sc
                j = c
            else:
                break
    return out


def assign(costs, n: int) -> np.ndarray:
    """The shard (0..n-1) of every task, by LPT over ``costs`` (non-negative;
    equal costs are taken in index order)."""
    c = np.ascontiguousarray(costs, dtype=np.float64)
    if c.ndim != 1:
        raise ValueError("costs must be one-dimensional")
    if not np.all(np.isfinite(c)) or (c.size and c.min() < 0):
        raise ValueError("costs must be finite and non-negative")
    if n < 1:
        raise ValueError(f"shard count must be at least 1, not {n}")
    if n == 1:
        return np.zeros(c.size, np.int64)
    order = np.argsort(-c, kind="stable")  # stable: ties keep task order
    return _lpt(order, c, int(n))


def select(costs, i: int, n: int) -> np.ndarray:
    """Indices (ascending) of the tasks shard ``i`` of ``n`` runs."""
    if not 0 <= i < n:
        raise ValueError(f"shard index {i} not in 0..{n - 1}")
    if n == 1:
        return np.arange(len(costs), dtype=np.int64)
    return np.flatnonzero(assign(costs, n) == i)


def stats(shard: str, costs, picked: np.ndarray) -> dict:
    """What a row records about its shard: which one, its tasks and its share of
    the estimated cost (the cost of all the run's tasks beside it)."""
    c = np.asarray(costs, dtype=np.float64)
    return {
        "shard": shard,
        "shard_tasks": int(len(picked)),
        "shard_cost": float(c[picked].sum()),
        "total_tasks": int(c.size),
        "total_cost": float(c.sum()),
    }
