"""Choose the grid and the arena size so that a launch fits the device memory.

A worker's arena must hold its largest task (:mod:`cumbe.layout`).  Warps get
arenas of ``arena_words``; a task that needs more runs on a whole block, whose
warps' arenas are contiguous and join into one.  In order of preference:

1. every task fits a warp arena, with the largest grid: ``arena_words`` = the
   largest need (no memory wasted beyond it);
2. the largest grid with the largest warp arena that memory allows; tasks above
   it run block-wide (each block's arena is ``warps x arena_words``);
3. fewer blocks, so that a block's arena holds the largest task.

If not even one block can hold the largest task, the run cannot fit:
:class:`cumbe.launch.DeviceMemoryError`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from cumbe import buffers as B

MARGIN_BYTES = 64 << 20  # left free for the context's own allocations (streams, events)
MARGIN_FRACTION = 0.03


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


def _max_arena(plan: B.Plan, budget_bytes: int) -> int:
    """Largest even arena_words with nbytes(plan) <= budget (nbytes is linear in it)."""
    fixed = B.nbytes(replace(plan, arena_words=0))
    per = B.bytes_per_arena_word(plan)
    aw = (budget_bytes - fixed) // per
    return int(aw - (aw & 1))


def choose(needs: np.ndarray, base: B.Plan, max_blocks: int, budget_bytes: int) -> GridChoice:
    """``needs``: arena words per task."""
    maxneed = int(needs.max()) if needs.size else 2
    maxneed += maxneed & 1
    warps = base.warps
    plan = replace(base, blocks=max_blocks, arena_words=maxneed)
    if B.nbytes(plan) <= budget_bytes:
        return GridChoice(plan, 0, "", budget_bytes, B.nbytes(plan))
    aw = _max_arena(replace(base, blocks=max_blocks), budget_bytes)
    if aw >= 2 and aw * warps >= maxneed:
        plan = replace(base, blocks=max_blocks, arena_words=aw)
        nblock = int(np.count_nonzero(needs > aw))
        return GridChoice(plan, nblock,
                          f"{nblock} tasks need more than a warp's {aw} arena words: they run "
                          f"block-wide", budget_bytes, B.nbytes(plan))
    aw = -(-maxneed // warps)
    aw += aw & 1
    nb = max_blocks
    while nb >= 1 and B.nbytes(replace(base, blocks=nb, arena_words=aw)) > budget_bytes:
        # nbytes is linear in blocks: jump close, then step
        per_block = B.nbytes(replace(base, blocks=2, arena_words=aw)) - B.nbytes(
            replace(base, blocks=1, arena_words=aw))
        over = B.nbytes(replace(base, blocks=nb, arena_words=aw)) - budget_bytes
        nb -= max(1, -(-over // max(per_block, 1)))
    if nb < 1:
        need = B.nbytes(replace(base, blocks=1, arena_words=aw))
        raise DoesNotFit(f"one block of {warps} warps (the largest task needs {maxneed} arena "
                         f"words, twice over)", need)
    plan = replace(base, blocks=nb, arena_words=aw)
    nblock = int(np.count_nonzero(needs > aw))
    return GridChoice(plan, nblock,
                      f"device memory: {nb} of {max_blocks} blocks, so that a block's arena "
                      f"holds the largest task ({maxneed} words)", budget_bytes, B.nbytes(plan))
