"""First-level order of the candidate side, shared by the engines that use it.

Candidates are ranked by (degree, id), ascending; a candidate whose neighbourhood
equals that of an earlier one (a *twin*) starts no first-level subtree: every
closed set containing it also contains the twin, whose subtree finds it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mbebench.fingerprint import mix_nb
from mbebench.jitcache import keyed


@keyed
@njit(cache=True)
def candidate_order(c_off, c_idx):
    """First-level order and the twin filter.

    Returns ``order`` (candidates by ascending degree, ties by id), ``rank``
    (inverse of ``order``) and ``start`` (True where the candidate starts a
    first-level subtree: degree > 0 and no earlier candidate in ``order`` has
    the same neighbourhood).
    """
    n = c_off.size - 1
    deg = np.empty(n, dtype=np.int64)
    for v in range(n):
        deg[v] = c_off[v + 1] - c_off[v]
    order = np.argsort(deg, kind="mergesort")
    rank = np.empty(n, dtype=np.int64)
    for i in range(n):
        rank[order[i]] = i
    return order, rank, twin_filter(c_off, c_idx, rank)


@keyed
@njit(cache=True)
def twin_filter(c_off, c_idx, rank):
    """True where a candidate starts a first-level subtree: degree > 0 and no
    candidate of lower ``rank`` has the same neighbourhood (for any first-level
    order; :func:`candidate_order` uses it with its own)."""
    n = c_off.size - 1
    # group by (degree, neighbourhood hash); compare lists exactly
    h = np.empty(n, dtype=np.uint64)
    for v in range(n):
        s = np.uint64(c_off[v + 1] - c_off[v])
        for e in range(c_off[v], c_off[v + 1]):
            s += mix_nb(np.uint64(c_idx[e]) + np.uint64(0x632BE59BD9B4E019))
        h[v] = s
    # sort by hash, then by rank
    by_rank = np.argsort(rank)
    by_hash = by_rank[np.argsort(h[by_rank], kind="mergesort")]
    start = np.empty(n, dtype=np.bool_)
    for v in range(n):
        start[v] = c_off[v + 1] > c_off[v]
    i = 0
    while i < n:
        j = i
        while j < n and h[by_hash[j]] == h[by_hash[i]]:
            j += 1
        # by_hash[i:j] share a hash and are in rank order
        for a in range(i + 1, j):
            va = by_hash[a]
            da = c_off[va + 1] - c_off[va]
            for b in range(i, a):
                vb = by_hash[b]
                if c_off[vb + 1] - c_off[vb] != da:
                    continue
                same = True
                oa = c_off[va]
                ob = c_off[vb]
                for t in range(da):
                    if c_idx[oa + t] != c_idx[ob + t]:
                        same = False
                        break
                if same:
                    start[va] = False
                    break
        i = j
    return start
