"""Choose the grid and the arena size so that a launch fits the device memory.

A worker's arena must hold its largest task (:mod:`cumbe.layout`).  Warps get
arenas of ``arena_words``; a task that needs more runs on a whole block, whose
warps' arenas are contiguous and join into one.

1. If every warp of the largest grid can hold the largest task, that is the plan
   (``arena_words`` = the largest need: no memory wasted beyond it), in the plain layout.
2. Otherwise :func:`choose` (*the rule*) takes the faster, by its model, of: every task on a
   warp with fewer blocks; or block-wide tasks, on the largest grid with the largest warp
   arena that fits (or on fewer blocks, so that a block's arena holds the largest task).
   Its model, with s the block-wide tasks' share of the arena words: for s >= 0.15 a
   block-wide task's work counts 7 times (warps win iff ``blocks(wide) <= blocks(warp-only)
   x (1 + 6 s)``); below, the block-wide phase (a phase of its own, whose few tasks have
   only each other to steal from) costs more than the larger grid gains: warps win iff they
   are at least as many as the wide plan's blocks.
3. :func:`choose_layout` keeps the rule's plan unless the block-wide tasks of its wide plan
   hold a larger share of the *butterflies* (:func:`cumbe.prepare.task_butterflies`, which
   follow the search under a task) than of the wedges.  Such tasks (planted dense blocks)
   search deep, and block-wide that costs far more than the rule's 7 times, so fewer blocks
   with fewer block-wide tasks can be faster.  Then every grid from the largest down (5 %
   fewer blocks at a time, each with the largest warp arena that fits), in both the plain and
   the compact layout (its build counted ``COMPACT_COST`` slower), is rated by
   :func:`model_time`, and the fastest runs.  A grid that would run block-wide a task holding
   more than ``CRITICAL_SHARE`` warps' fair share of the wedges is out: the block-wide phase
   would wait for it alone.  If the plain layout does not fit at all, the compact one may (it
   needs less): the rule then plans it.

:func:`model_time`, time over the uncapped run's, for B of B_max blocks:

    A + (B_max / B) * (B0 + max(0, C_BUTTERFLY * s_b - C_WEDGE * s_w))

with s_b and s_w the block-wide tasks' shares of the butterflies and of the wedges plus
degrees: a hub's task (many wedges, little search) runs block-wide at little cost.  The
constants are a least-squares fit to measured grids of paper-sized stand-ins under caps (the
memory-caps benchmark).  The model misjudges small graphs and graphs whose block-wide tasks
search little, where the rule is better: hence the rule first, the model only where the rule
is known to fail.

If not even one block can hold the largest task, the run cannot fit:
:class:`cumbe.launch.DeviceMemoryError`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from cumbe import buffers

MARGIN_BYTES = 64 << 20  # left free for the context's own allocations (streams, events)
MARGIN_FRACTION = 0.03
# the grid model (module docstring)
A, B0, C_BUTTERFLY, C_WEDGE = 0.739, 0.267, 2.361, 0.711
BLOCK_WIDE_COST = 7  # the rule before: a block-wide task's work, in warp work
BLOCK_WIDE_MIN_SHARE = 0.15  # the rule before: below this share block-wide, warps if as many
COMPACT_COST = 1.03  # the compact build's time over the plain one's, uncapped (measured)
CRITICAL_SHARE = 4.0  # the most warps' fair share of the wedges a block-wide task may hold
GRID_STEP = 0.95  # candidate grids: the largest, then 5 % fewer blocks at a time


@dataclass(frozen=True)
class Work:
    """What the grid model weighs per task: wedges plus degree, and butterflies."""

    wedges: np.ndarray
    butterflies: np.ndarray


@dataclass(frozen=True)
class GridChoice:
    plan: buffers.Plan
    block_tasks: int  # tasks (the first ones, largest need) that run block-wide
    reason: str  # why the grid or the arena is smaller than asked; "" if not
    budget_bytes: int
    bytes: int


class DoesNotFit(MemoryError):
    """Not even one block holds the largest task; ``need`` is what one block takes."""

    def __init__(self, msg: str, need: int):
        super().__init__(msg)
        self.need = need


def budget(free_bytes: int, cap_bytes: int | None) -> int:
    avail = free_bytes if cap_bytes is None else min(free_bytes, cap_bytes)
    return int(avail * (1 - MARGIN_FRACTION)) - MARGIN_BYTES


def cap_for(need_bytes: int) -> int:
    """The smallest device memory (bytes free, or a cap) whose budget holds ``need_bytes``:
    :func:`budget` inverted, rounded up."""
    return int(-(-(int(need_bytes) + MARGIN_BYTES) // (1 - MARGIN_FRACTION))) + 1


def _largest_need(needs: np.ndarray) -> int:
    """Arena words of the largest task, even (level sums are 8-byte aligned)."""
    maxneed = int(needs.max()) if needs.size else 2
    return maxneed + (maxneed & 1)


def _block_arena(maxneed: int, warps: int) -> int:
    """The even warp arena whose ``warps`` copies, joined, hold ``maxneed`` words."""
    aw = -(-maxneed // warps)
    return aw + (aw & 1)


def smallest_bytes(needs: np.ndarray, base: buffers.Plan) -> int:
    """Device bytes of the smallest launch that runs every task: one block whose warps'
    arenas together hold the largest task (it runs block-wide)."""
    aw = _block_arena(_largest_need(needs), base.warps)
    return buffers.nbytes(replace(base, blocks=1, arena_words=aw))


def _max_arena(plan: buffers.Plan, budget_bytes: int) -> int:
    """Largest even arena_words with nbytes(plan) <= budget (nbytes is linear in it)."""
    fixed = buffers.nbytes(replace(plan, arena_words=0))
    per = buffers.bytes_per_arena_word(plan)
    aw = (budget_bytes - fixed) // per
    return int(aw - (aw & 1))


def choose(needs: np.ndarray, base: buffers.Plan, max_blocks: int, budget_bytes: int) -> GridChoice:
    """``needs``: arena words per task."""
    maxneed = _largest_need(needs)
    plan = replace(base, blocks=max_blocks, arena_words=maxneed)
    if buffers.nbytes(plan) <= budget_bytes:
        return GridChoice(plan, 0, "", budget_bytes, buffers.nbytes(plan))
    warp_only = _most_blocks(base, maxneed, max_blocks, budget_bytes)
    try:
        wide = _block_wide(needs, base, max_blocks, budget_bytes, maxneed)
    except DoesNotFit:
        if warp_only < 1:
            raise
        wide = None
    if warp_only >= 1 and (wide is None or _warps_win(needs, warp_only, wide)):
        plan = replace(base, blocks=warp_only, arena_words=maxneed)
        return GridChoice(plan, 0,
                          f"device memory: {warp_only} of {max_blocks} blocks, so that every "
                          f"warp's arena holds the largest task ({maxneed} words)", budget_bytes,
                          buffers.nbytes(plan))
    return wide


def choose_layout(needs: np.ndarray, compact_needs, base: buffers.Plan, max_blocks: int,
                  budget_bytes: int, work=None) -> tuple[GridChoice, bool]:
    """The grid, and whether the compact task layout (:mod:`cumbe.layout`) runs it (module
    docstring).  ``compact_needs()``: the tasks' needs in the compact layout; ``work``: a
    :class:`Work` or a function that makes one; both are asked for only when memory is
    short."""
    maxneed = _largest_need(needs)
    plan = replace(base, blocks=max_blocks, arena_words=maxneed)
    if buffers.nbytes(plan) <= budget_bytes:
        return GridChoice(plan, 0, "", budget_bytes, buffers.nbytes(plan)), False
    try:
        before = choose(needs, base, max_blocks, budget_bytes)
    except DoesNotFit as plain:  # the compact layout (nearly always) needs less
        try:
            return choose(compact_needs(), base, max_blocks, budget_bytes), True
        except DoesNotFit as comp:
            raise (comp if comp.need <= plain.need else plain) from None
    try:
        wide = _block_wide(needs, base, max_blocks, budget_bytes, maxneed)
    except DoesNotFit:
        return before, False
    w = work() if callable(work) else work
    if w is None:
        return before, False
    plain_shares = _Shares(needs, w)
    n, sb, sw = plain_shares.above(wide.plan.arena_words)
    if n == 0 or sb < sw:  # the block-wide tasks search no deeper than their wedges say
        return before, False
    best = None
    for compact, nd in ((False, needs), (True, compact_needs())):
        shares = plain_shares if not compact else _Shares(nd, w)
        mx = _largest_need(nd)
        cands = [(nb, aw) for nb, aw in _candidates(nd, base, max_blocks, budget_bytes, mx)
                 if not shares.critical(aw, max_blocks * base.warps)]
        if not cands:
            continue
        choice, t = _best(cands, shares, base, max_blocks, budget_bytes, mx)
        t *= COMPACT_COST if compact else 1.0
        if best is None or t < best[1]:
            best = (choice, t, compact)
    return (before, False) if best is None else (best[0], best[2])


def model_time(blocks: int, max_blocks: int, s_butterflies: float, s_wedges: float) -> float:
    """The model's time of a grid over the uncapped run's (module docstring)."""
    penalty = max(0.0, C_BUTTERFLY * s_butterflies - C_WEDGE * s_wedges)
    return A + max_blocks / blocks * (B0 + penalty)


class _Shares:
    """What the tasks that need more than a given arena hold: their count, their shares of
    the butterflies and of the wedges, their largest task's wedges (sorted by need once;
    each query is a binary search)."""

    def __init__(self, needs: np.ndarray, work: Work):
        order = np.argsort(-needs, kind="stable")
        self.needs = needs[order]
        wd = np.asarray(work.wedges, np.float64)[order]
        self.wedges = np.concatenate([[0], np.cumsum(wd)])
        self.top_wedges = np.maximum.accumulate(wd) if wd.size else wd
        self.butterflies = np.concatenate(
            [[0], np.cumsum(np.asarray(work.butterflies, np.float64)[order])])

    def _count(self, aw: int) -> int:
        return int(np.searchsorted(-self.needs, -aw, side="left"))  # needs > aw come first

    def above(self, aw: int) -> tuple[int, float, float]:
        n = self._count(aw)
        sw = self.wedges[n] / self.wedges[-1] if self.wedges[-1] > 0 else 0.0
        sb = self.butterflies[n] / self.butterflies[-1] if self.butterflies[-1] > 0 else 0.0
        return n, float(sb), float(sw)

    def critical(self, aw: int, workers: int) -> bool:
        """Would a task with more than CRITICAL_SHARE warps' fair share of the wedges run
        block-wide (the whole block-wide phase waits for it)?"""
        n = self._count(aw)
        return n > 0 and self.top_wedges[n - 1] * workers > CRITICAL_SHARE * self.wedges[-1]


def _candidates(needs: np.ndarray, base: buffers.Plan, max_blocks: int, budget_bytes: int,
                maxneed: int) -> list[tuple[int, int]]:
    """(blocks, warp arena words) of every candidate grid: the largest and 5 % fewer blocks
    at a time, each with the largest arena that fits (at most the largest need), plus the
    most blocks whose warps all hold the largest task; a grid whose block cannot hold the
    largest task is out."""
    out = {}
    nb = max_blocks
    while nb >= 1:
        aw = min(_max_arena(replace(base, blocks=nb), budget_bytes), maxneed)
        if aw >= 2 and aw * base.warps >= maxneed:
            out[nb] = aw
        nb = min(nb - 1, int(nb * GRID_STEP))
    warp_only = _most_blocks(base, maxneed, max_blocks, budget_bytes)
    if warp_only >= 1:
        out[warp_only] = maxneed
    return sorted(out.items(), reverse=True)


def _best(cands: list, shares: _Shares, base: buffers.Plan, max_blocks: int, budget_bytes: int,
          maxneed: int) -> tuple[GridChoice, float]:
    """The candidate (at least one) the model rates fastest, and its model time."""
    best = None
    for nb, aw in cands:
        n, sb, sw = shares.above(aw)
        t = model_time(nb, max_blocks, sb, sw)
        if best is None or t < best[0]:
            best = (t, nb, aw, n)
    t, nb, aw, n = best
    plan = replace(base, blocks=nb, arena_words=aw)
    if n == 0:
        reason = (f"device memory: {nb} of {max_blocks} blocks, so that every warp's arena "
                  f"holds the largest task ({maxneed} words)")
    else:
        reason = (f"device memory: {nb} of {max_blocks} blocks; {n} tasks need more than a "
                  f"warp's {aw} arena words: they run block-wide")
    return GridChoice(plan, n, reason, budget_bytes, buffers.nbytes(plan)), t


def _warps_win(needs: np.ndarray, warp_only: int, wide: GridChoice) -> bool:
    """Is every task on a warp of ``warp_only`` blocks faster than ``wide`` (the model of
    the module docstring)?"""
    total = float(needs.sum())
    share = float(needs[needs > wide.plan.arena_words].sum()) / total if total > 0 else 0.0
    if share < BLOCK_WIDE_MIN_SHARE:
        return warp_only * wide.plan.warps >= wide.plan.blocks
    return wide.plan.blocks <= warp_only * (1.0 + (BLOCK_WIDE_COST - 1) * share)


def _block_wide(needs: np.ndarray, base: buffers.Plan, max_blocks: int, budget_bytes: int,
                maxneed: int) -> GridChoice:
    warps = base.warps
    aw = _max_arena(replace(base, blocks=max_blocks), budget_bytes)
    if aw >= 2 and aw * warps >= maxneed:
        plan = replace(base, blocks=max_blocks, arena_words=aw)
        nblock = int(np.count_nonzero(needs > aw))
        return GridChoice(plan, nblock,
                          f"{nblock} tasks need more than a warp's {aw} arena words: they run "
                          f"block-wide", budget_bytes, buffers.nbytes(plan))
    aw = _block_arena(maxneed, warps)
    nb = _most_blocks(base, aw, max_blocks, budget_bytes)
    if nb < 1:
        need = buffers.nbytes(replace(base, blocks=1, arena_words=aw))
        raise DoesNotFit(f"one block of {warps} warps (the largest task needs {maxneed} arena "
                         f"words, twice over)", need)
    plan = replace(base, blocks=nb, arena_words=aw)
    nblock = int(np.count_nonzero(needs > aw))
    return GridChoice(plan, nblock,
                      f"device memory: {nb} of {max_blocks} blocks, so that a block's arena "
                      f"holds the largest task ({maxneed} words)", budget_bytes,
                      buffers.nbytes(plan))


def _most_blocks(base: buffers.Plan, aw: int, max_blocks: int, budget_bytes: int) -> int:
    """The most blocks (<= max_blocks) whose arenas of ``aw`` words fit; 0 if not even one."""
    nb = max_blocks
    while nb >= 1 and buffers.nbytes(replace(base, blocks=nb, arena_words=aw)) > budget_bytes:
        # nbytes is linear in blocks: jump close, then step
        per_block = buffers.nbytes(replace(base, blocks=2, arena_words=aw)) - buffers.nbytes(
            replace(base, blocks=1, arena_words=aw))
        over = buffers.nbytes(replace(base, blocks=nb, arena_words=aw)) - budget_bytes
        nb -= max(1, -(-over // max(per_block, 1)))
    return max(nb, 0)
