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

import functools
import re

import numpy as np

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


def _before(a, b, load, targets, ntask):
    # shard a is less loaded than b: by load as a share of its target, then fewer tasks,
    # then the lower id (the result is a function of the costs alone)
    ra = load[a] / targets[a]
    rb = load[b] / targets[b]
    return ra < rb or (ra == rb and (ntask[a] < ntask[b] or (ntask[a] == ntask[b] and a < b)))


def _sift(heap, j, load, targets, ntask):
    n = heap.size
    while True:
        c = 2 * j + 1
        if c >= n:
            break
        if c + 1 < n and _before(heap[c + 1], heap[c], load, targets, ntask):
            c += 1
        if not _before(heap[c], heap[j], load, targets, ntask):
            break
        heap[c], heap[j] = heap[j], heap[c]
        j = c


def _lpt(order, costs, targets, load, ntask, out):
    # Each task, largest first, to the least loaded shard (_before), kept in a binary
    # min-heap; the task count spreads tasks of equal (e.g. zero) cost round-robin instead
    # of onto shard 0.  ``load``/``ntask``: what the shards hold already.
    n = targets.size
    heap = np.arange(n)
    for j in range(n // 2 - 1, -1, -1):
        _sift(heap, j, load, targets, ntask)
    for t in range(order.size):
        s = heap[0]
        out[order[t]] = s
        load[s] += costs[order[t]]
        ntask[s] += 1
        _sift(heap, 0, load, targets, ntask)
    return out


@functools.cache
def _lpt_jit():
    """:func:`_lpt` compiled (or loaded from numba's cache) on first use: importing this
    module does not import numba (cuMBE's launch from a cached cubin parses its shard
    without it).  Its callees are bound to their compiled selves first: numba reads them
    from the globals when it compiles."""
    from numba import njit

    globals()["_before"] = njit(cache=True)(_before)
    globals()["_sift"] = njit(cache=True)(_sift)
    return njit(cache=True)(_lpt)


def _spread_lpt(c, targets, first, weights) -> np.ndarray:
    """LPT after dealing the items ``first`` out by LPT over their own ``weights`` (a model
    of their work, not ``c``): items whose cost the estimate may miss by far (the pieces of
    the costliest tasks, cumbe.prepare.spread) are balanced among themselves, the heaviest
    to the largest shards (which the multi-GPU queue runs first), whatever their estimated
    cost; the rest is balanced by ``c`` around them."""
    n = targets.size
    out = np.full(c.size, -1, np.int64)
    load = np.zeros(n, np.float64)
    ntask = np.zeros(n, np.int64)
    if first is not None and len(first):
        f = np.asarray(first, dtype=np.int64)
        w = np.zeros(c.size)
        w[f] = np.asarray(weights, dtype=np.float64) if weights is not None else c[f]
        # shards by share, largest first, so that equal weights fill those first
        byshare = np.argsort(-targets, kind="stable")
        got = _lpt_jit()(f[np.argsort(-w[f], kind="stable")], w, targets[byshare],
                   np.zeros(n), np.zeros(n, np.int64), np.full(c.size, -1, np.int64))
        out[f] = byshare[got[f]]
        np.add.at(load, out[f], c[f])
        np.add.at(ntask, out[f], 1)
    rest = np.argsort(-c, kind="stable")
    rest = rest[out[rest] < 0]  # stable: ties keep task order
    return _lpt_jit()(rest, c, targets, load, ntask, out)


def assign(costs, n: int, first=None, weights=None) -> np.ndarray:
    """The shard (0..n-1) of every task, by LPT over ``costs`` (non-negative;
    equal costs are taken in index order); ``first``: items dealt out before it by their
    ``weights`` (:func:`_spread_lpt`)."""
    c = np.ascontiguousarray(costs, dtype=np.float64)
    if c.ndim != 1:
        raise ValueError("costs must be one-dimensional")
    if not np.all(np.isfinite(c)) or (c.size and c.min() < 0):
        raise ValueError("costs must be finite and non-negative")
    if n < 1:
        raise ValueError(f"shard count must be at least 1, not {n}")
    if n == 1:
        return np.zeros(c.size, np.int64)
    return _spread_lpt(c, np.ones(int(n)), first, weights)


def assign_weighted(costs, targets, first=None, weights=None) -> np.ndarray:
    """The shard (0..len(targets)-1) of every task, by LPT towards unequal shares:
    shard ``s`` gets about ``targets[s] / sum(targets)`` of the cost (the multi-GPU
    queue's shards of decreasing size, :func:`guided_targets`)."""
    c = np.ascontiguousarray(costs, dtype=np.float64)
    t = np.ascontiguousarray(targets, dtype=np.float64)
    if c.ndim != 1 or t.ndim != 1:
        raise ValueError("costs and targets must be one-dimensional")
    if not np.all(np.isfinite(c)) or (c.size and c.min() < 0):
        raise ValueError("costs must be finite and non-negative")
    if t.size < 1 or not np.all(np.isfinite(t)) or t.min() <= 0:
        raise ValueError("targets must be positive and finite, at least one")
    if t.size == 1:
        return np.zeros(c.size, np.int64)
    return _spread_lpt(c, t, first, weights)


def guided_targets(n_devices: int, per_device: int) -> np.ndarray:
    """Shares of ``per_device`` x ``n_devices`` shards that halve round by round: each
    device's first shard is half its work, the next a quarter, ..., the last two equal
    (4 per device: 1/2, 1/4, 1/8, 1/8).  Every shard is a kernel launch with a cost of its
    own (its stealing tail), so large shards go first and only the last ones are small
    enough to even out the devices' ends."""
    d, m = int(n_devices), int(per_device)
    if d < 1 or m < 1:
        raise ValueError(f"need at least one device and one shard per device, not {d}, {m}")
    rounds = [0.5 ** (r + 1) if r < m - 1 else 0.5 ** (m - 1) for r in range(m)]
    return np.repeat(np.array(rounds) / d, d)


def piece_counts(costs, share: float, most: int) -> np.ndarray:
    """How many pieces each task goes into so that a piece costs about ``share`` or less:
    ceil(cost / share), from 1 to ``most``.  A piece of a task runs the task's level-0
    nodes but reports and descends into only its own share of their branches (each
    engine's rule), so that one heavy task spreads over several shards."""
    c = np.asarray(costs, dtype=np.float64)
    if most <= 1 or c.size == 0:
        return np.ones(c.size, np.int64)
    return np.clip(np.ceil(c / max(float(share), 1.0)), 1, int(most)).astype(np.int64)


def deep_pieces(n: int) -> int:
    """Into how many pieces the costliest tasks of a run over ``n`` shards or devices go at
    level 0 and again at level 1 (cumbe.prepare.split): on a crown, piece (k0, k1) holding
    the first branches keeps about (1/2 / (1 - 2**-K))**2 of its task (K = 4: 28 %, K = 2:
    44 %), the limit being a quarter; 1: none (one shard).  4 on 2 devices too: with 2 the
    crown union of tests/test_cumbe_deep_pieces.py reached 1.86x of 2, with 4 1.98x."""
    return 1 if n <= 1 else 4


def top(costs, m: int) -> np.ndarray:
    """Indices of the ``m`` costliest tasks with a positive cost (ties: the lower index)."""
    c = np.asarray(costs, dtype=np.float64)
    order = np.argsort(-c, kind="stable")[:max(int(m), 0)]
    return order[c[order] > 0]


def split_pieces(ks, nks, counts):
    """Item j (piece ``ks[j]`` of ``nks[j]``) in ``counts[j]`` pieces: piece ks + nks * i of
    nks * counts, for i < counts[j].  A piece takes the level-0 branches b with
    b = k (mod nk), so the new pieces of an item partition its branches (and pieces of a
    whole task, k = 0 of 1, partition the task).  Returns (the item each new piece comes
    from, its k, its nk)."""
    m = np.asarray(counts, dtype=np.int64)
    src = np.repeat(np.arange(m.size), m)
    i = np.arange(src.size) - np.repeat(np.cumsum(m) - m, m)
    ks = np.asarray(ks, dtype=np.int64)[src]
    nks = np.asarray(nks, dtype=np.int64)[src]
    return src, (ks + nks * i).astype(np.int32), (nks * m[src]).astype(np.int32)


def select(costs, i: int, n: int, first=None, weights=None) -> np.ndarray:
    """Indices (ascending) of the tasks shard ``i`` of ``n`` runs."""
    if not 0 <= i < n:
        raise ValueError(f"shard index {i} not in 0..{n - 1}")
    if n == 1:
        return np.arange(len(costs), dtype=np.int64)
    return np.flatnonzero(assign(costs, n, first, weights) == i)


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
