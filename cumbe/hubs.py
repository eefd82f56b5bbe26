"""Bit rows for the longest lists of the other side (the rounds build's maximality check).

The check asks, vertex after vertex, whether a candidate lies in the list of a vertex of L'
(:mod:`cumbe.kernel.maximality`): a binary search, a chain of dependent loads as long as
the list's log.  On graphs with hubs (Chung-Lu cores, large tiles) those lists run to
thousands and the check is most of the kernel's time.  A vertex whose list is long enough
gets a row of one bit per candidate instead: the question becomes one load.

The table is one int32 array: ``table[y]`` for every vertex ``y`` of the other side is
where y's row starts in the same array, or -1; the rows follow (candidate u is bit
``u & 31`` of word ``u >> 5``).  A table of one word means no rows (the kernel then never
reads it)."""

from __future__ import annotations

import numpy as np

from cumbe.spec import HUB_DIVISOR

DIVISOR = HUB_DIVISOR  # the engine's default (its parameter hub_divisor)
# the least share of the lookups the rows must take for a run to launch the build with them:
# its binary searches in the lists without rows ran slower than the rounds build's (1.2x on
# movielens-10m_ui x20 with rows for 1.8 % of the lookups, 0.97x on marvel x12 at 11.6 %,
# 0.60-0.93x at 57-100 %; H200, 2026-12-02,
# `git show 1607ede:benchmarks/gpu/results/2026-12-02-hubs/README.md`)
LEAST_SHARE = 0.1
# the rows' bytes at most: the larger of these (and half what the grid leaves free)
BUDGET_MIN = 64 * 2**20
NONE = np.full(1, -1, np.int32)


def row_words(n_u: int) -> int:
    """Words of one row: a bit per candidate."""
    return (int(n_u) + 31) >> 5


def chosen(offV: np.ndarray, n_u: int, budget_bytes: int, divisor: int = DIVISOR) -> np.ndarray:
    """The vertices that get a row (:func:`table`), longest list first."""
    n_v = int(offV.shape[0]) - 1
    words = row_words(n_u)
    if divisor <= 0 or n_v <= 0 or words == 0:
        return np.zeros(0, np.int64)
    deg = np.diff(offV)
    least = max(1, -(-words // int(divisor)))
    hubs = np.flatnonzero(deg >= least)
    hubs = hubs[np.argsort(-deg[hubs], kind="stable")]
    # int32 offsets into the table itself
    fit = min((int(budget_bytes) // 4 - n_v) // words, (2**31 - 1 - n_v) // words)
    return hubs[:max(0, fit)]


def table(offV: np.ndarray, adjV: np.ndarray, n_u: int, budget_bytes: int,
          divisor: int = DIVISOR) -> np.ndarray:
    """The rows for the vertices whose list has at least ``row_words / divisor`` entries
    (their row costs at most ``divisor`` times their list), longest first, as many
    as ``budget_bytes`` holds with the map; ``divisor`` 0: none.  Returns the table
    (:data:`NONE` when no vertex gets a row)."""
    hubs = chosen(offV, n_u, budget_bytes, divisor)
    if hubs.size == 0:
        return NONE
    n_v = int(offV.shape[0]) - 1
    words = row_words(n_u)
    deg = np.diff(offV)
    out = np.zeros(n_v + hubs.size * words, np.int32)
    out[:n_v] = -1
    out[hubs] = n_v + np.arange(hubs.size, dtype=np.int64) * words
    lens = deg[hubs]
    starts = offV[hubs]
    # every entry of the rows' lists, and the row it goes to
    pos = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
    pos += np.arange(pos.size, dtype=np.int64)
    u = adjV[pos].astype(np.int64)
    bit = np.repeat(np.arange(hubs.size, dtype=np.int64) * words * 32, lens) + u
    # the lists hold each vertex once: a sum of distinct powers of two is their OR (exact in
    # float64 below 2**53)
    w = np.bincount(bit >> 5, weights=np.ldexp(1.0, (bit & 31).astype(np.int32)),
                    minlength=hubs.size * words)
    out[n_v:] = w.astype(np.uint32).view(np.int32)
    return out


def for_grid(prep, choice, divisor: int = DIVISOR):
    """(table, grid choice with it) for a run whose grid is ``choice``
    (:class:`cumbe.grid.GridChoice`): the rows in the memory the grid leaves of its budget, at
    most the larger of the graph's lists' bytes and BUDGET_MIN, so that they never take a
    block or arena words from the grid (a tight cap gets none); none (NONE, ``choice``) when
    they would take under LEAST_SHARE of the lookups."""
    from dataclasses import replace

    from cumbe import buffers

    room = min(max(4 * int(prep.adjV.size), BUDGET_MIN), choice.budget_bytes - choice.bytes)
    tab = table(prep.offV, prep.adjV, prep.n_u, room, divisor)
    if share(tab, prep.offV) < LEAST_SHARE:
        return NONE, choice  # too few lookups in rows to pay for the build with them
    plan = replace(choice.plan, hub_words=tab.size)
    return tab, replace(choice, plan=plan, bytes=buffers.nbytes(plan))


def share(tab: np.ndarray, offV: np.ndarray) -> float:
    """The share of the check's lookups that fall in rows, modelled: a vertex is in L' about
    as often as its degree, and a list is as long (so its degree squared)."""
    if tab.size <= 1:
        return 0.0
    return _share_of(np.flatnonzero(tab[:offV.shape[0] - 1] >= 0), offV)


def _share_of(rows: np.ndarray, offV: np.ndarray) -> float:
    d2 = np.diff(offV).astype(np.float64) ** 2
    total = float(d2.sum())
    return float(d2[rows].sum()) / total if total and rows.size else 0.0


def wanted(opts) -> bool:
    """Does a run with these options (:class:`cumbe.spec.RunOptions`) ask for rows: the check
    in rounds (a reverse-scan variant) and a divisor?"""
    return bool(opts.rounds and opts.switches[0] and opts.hub_divisor > 0)


def may_have_rows(prep, grid_least_bytes: int, budget_bytes: int,
                  divisor: int = DIVISOR) -> bool:
    """Could a run get rows enough (LEAST_SHARE), with a grid of at least
    ``grid_least_bytes`` in ``budget_bytes``?  Asked before any build is compiled, so that a
    run which cannot have them (a tight cap) never compiles the build that reads them."""
    room = min(max(4 * int(prep.adjV.size), BUDGET_MIN), int(budget_bytes) - int(grid_least_bytes))
    if room <= 0:
        return False
    return _share_of(chosen(prep.offV, prep.n_u, room, divisor), prep.offV) >= LEAST_SHARE


def rows(tab: np.ndarray, n_v: int) -> int:
    """How many rows a table holds."""
    return int(np.count_nonzero(tab[:n_v] >= 0)) if tab.size > 1 else 0


def contains(tab: np.ndarray, y: int, u: int) -> bool:
    """Is u in y's row (the kernel's lookup, for tests)?"""
    h = int(tab[y])
    return bool((int(tab[h + (u >> 5)]) >> (u & 31)) & 1)
