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
    # shard a has more room left than b (its target minus its load, in cost units), then
    # fewer tasks, then the lower id (the result is a function of the costs alone)
    ra = load[a] - targets[a]
    rb = load[b] - targets[b]
    return ra < rb or (ra == rb and (ntask[a] < ntask[b] or (ntask[a] == ntask[b] and a < b)))


def _lpt(order, costs, targets):
    # Each task, largest first, to the shard with the most room (_before), kept in a binary
    # min-heap; the task count spreads tasks of equal (e.g. zero) cost round-robin instead
    # of onto shard 0.
    n = targets.size
    load = np.zeros(n, np.float64)
    ntask = np.zeros(n, np.int64)
    heap = np.arange(n)
    out = np.empty(order.size, np.int64)
    for t in range(order.size):
        s = heap[0]
        out[order[t]] = s
        load[s] += costs[order[t]]
        ntask[s] += 1
        j = 0  # sift the root down
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
    return out


@functools.cache
def _lpt_jit():
    """:func:`_lpt` compiled (or loaded from numba's cache) on first use: importing this
    module does not import numba (cuMBE's launch from a cached cubin parses its shard
    without it).  ``_before`` is bound to its compiled self first: numba reads the callee
    from the globals when it compiles."""
    from numba import njit

    globals()["_before"] = njit(cache=True)(_before)
    return njit(cache=True)(_lpt)


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
    return _lpt_jit()(order, c, np.zeros(int(n)))


def assign_weighted(costs, targets) -> np.ndarray:
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
    # by the room left in cost units, not by the load as a share of the target: the largest
    # tasks then fill the largest shards, which run first and long enough to hide them. By
    # shares each shard took one of the largest tasks, and a small shard waited on its own
    # (a stealing tail of 0.03-0.08 s a shard on tiled movielens, 4 H100s, 8 shards a device)
    room = (np.zeros(t.size) if (t == t[0]).all()  # equal shares: the plain partition
            else t * (float(c.sum()) / float(t.sum())))
    return _lpt_jit()(np.argsort(-c, kind="stable"), c, room)


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
