"""Choose the grid and the arena size so that a launch fits the device memory.

A worker's arena must hold its largest task (:mod:`cumbe.layout`).  Warps get
arenas of ``arena_words``; a task that needs more runs on a whole block, whose
warps' arenas are contiguous and join into one.  In order of preference:

1. every task fits a warp arena, with the largest grid: ``arena_words`` = the
   largest need (no memory wasted beyond it);
2. otherwise the faster, by the model below, of: every task on a warp with fewer
   blocks; or block-wide tasks with more blocks (3. or 4.);
3. the largest grid with the largest warp arena that memory allows; tasks above
   it run block-wide (each block's arena is ``warps x arena_words``);
4. fewer blocks, so that a block's arena holds the largest task.

The model (:func:`_warps_win`), with s the block-wide tasks' share of the work (their
share of the arena words, which follows the estimated cost within 1 %):

* s >= ``BLOCK_WIDE_MIN_SHARE`` (0.15): the work is spread over the workers and a
  block-wide task's work counts ``BLOCK_WIDE_COST`` (7) times, its block barriers and idle
  lanes; warps win iff ``blocks(wide) <= blocks(warp-only) x (1 + 6 s)``;
* below it, the block-wide phase (a phase of its own, whose few tasks have only each other
  to steal from) costs more than the larger grid gains: warps win iff they are at least as
  many as the wide plan's blocks (the rule before the model).

Measured on one H100 (2026-11-26, ``benchmarks/memory-caps/results/2026-11-26-grid-model/``,
``gridab.jsonl``: both plans, runs alternated, one call) on the 13 (graph, cap) pairs where
the rule before and the bare model (no share threshold) differ: with s >= 0.2 the wide plan
took 9-31 % less time in all 3 (IMDB-actor-blocks at 0.5 GiB 9.6 s against 13.9 s); with
s <= 0.09 it was slower in 9 of 10 (by 2-53 %; 0.5 % faster in the tenth).  And where both
keep warps, YouTube-blocks at 0.5 GiB (s = 0.27), the wide plan was 14 % slower
(``wide.jsonl``).  Block-wide tasks steal from each other since the block barrier's fix
(docs/gpu.md, "The block-wide fault").

If not even one block can hold the largest task, the run cannot fit:
:class:`cumbe.launch.DeviceMemoryError`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from cumbe import buffers as B

MARGIN_BYTES = 64 << 20  # left free for the context's own allocations (streams, events)
MARGIN_FRACTION = 0.03
BLOCK_WIDE_COST = 7  # a block-wide task's work, in warp work (module docstring)
BLOCK_WIDE_MIN_SHARE = 0.15  # below this share of the work block-wide: the rule before


@dataclass(frozen=True)
class GridChoice:
    plan: B.Plan
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


def smallest_bytes(needs: np.ndarray, base: B.Plan) -> int:
    """Device bytes of the smallest launch that runs every task: one block whose warps'
    arenas together hold the largest task (it runs block-wide)."""
    aw = _block_arena(_largest_need(needs), base.warps)
    return B.nbytes(replace(base, blocks=1, arena_words=aw))


def _max_arena(plan: B.Plan, budget_bytes: int) -> int:
    """Largest even arena_words with nbytes(plan) <= budget (nbytes is linear in it)."""
    fixed = B.nbytes(replace(plan, arena_words=0))
    per = B.bytes_per_arena_word(plan)
    aw = (budget_bytes - fixed) // per
    return int(aw - (aw & 1))


def choose(needs: np.ndarray, base: B.Plan, max_blocks: int, budget_bytes: int) -> GridChoice:
    """``needs``: arena words per task."""
    maxneed = _largest_need(needs)
    warps = base.warps
    plan = replace(base, blocks=max_blocks, arena_words=maxneed)
    if B.nbytes(plan) <= budget_bytes:
        return GridChoice(plan, 0, "", budget_bytes, B.nbytes(plan))
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
                          B.nbytes(plan))
    return wide


def _warps_win(needs: np.ndarray, warp_only: int, wide: GridChoice) -> bool:
    """Is every task on a warp of ``warp_only`` blocks faster than ``wide`` (the model of
    the module docstring)?"""
    total = float(needs.sum())
    share = float(needs[needs > wide.plan.arena_words].sum()) / total if total > 0 else 0.0
    if share < BLOCK_WIDE_MIN_SHARE:
        return warp_only * wide.plan.warps >= wide.plan.blocks
    return wide.plan.blocks <= warp_only * (1.0 + (BLOCK_WIDE_COST - 1) * share)


def _block_wide(needs: np.ndarray, base: B.Plan, max_blocks: int, budget_bytes: int,
                maxneed: int) -> GridChoice:
    warps = base.warps
    aw = _max_arena(replace(base, blocks=max_blocks), budget_bytes)
    if aw >= 2 and aw * warps >= maxneed:
        plan = replace(base, blocks=max_blocks, arena_words=aw)
        nblock = int(np.count_nonzero(needs > aw))
        return GridChoice(plan, nblock,
                          f"{nblock} tasks need more than a warp's {aw} arena words: they run "
                          f"block-wide", budget_bytes, B.nbytes(plan))
    aw = _block_arena(maxneed, warps)
    nb = _most_blocks(base, aw, max_blocks, budget_bytes)
    if nb < 1:
        need = B.nbytes(replace(base, blocks=1, arena_words=aw))
        raise DoesNotFit(f"one block of {warps} warps (the largest task needs {maxneed} arena "
                         f"words, twice over)", need)
    plan = replace(base, blocks=nb, arena_words=aw)
    nblock = int(np.count_nonzero(needs > aw))
    return GridChoice(plan, nblock,
                      f"device memory: {nb} of {max_blocks} blocks, so that a block's arena "
                      f"holds the largest task ({maxneed} words)", budget_bytes, B.nbytes(plan))


def _most_blocks(base: B.Plan, aw: int, max_blocks: int, budget_bytes: int) -> int:
    """The most blocks (<= max_blocks) whose arenas of ``aw`` words fit; 0 if not even one."""
    nb = max_blocks
    while nb >= 1 and B.nbytes(replace(base, blocks=nb, arena_words=aw)) > budget_bytes:
        # nbytes is linear in blocks: jump close, then step
        per_block = B.nbytes(replace(base, blocks=2, arena_words=aw)) - B.nbytes(
            replace(base, blocks=1, arena_words=aw))
        over = B.nbytes(replace(base, blocks=nb, arena_words=aw)) - budget_bytes
        nb -= max(1, -(-over // max(per_block, 1)))
    return max(nb, 0)
