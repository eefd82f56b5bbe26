"""A warp's slice of the bit-words buffer (the rounds build's check below a small L,
:mod:`cumbe.kernel.words`): sized in the memory the grid and the hub rows leave of the run's
budget, so that the words never take a block or arena words from the grid (a tight cap gets
smaller slices or none; a root whose words do not fit its slice stays on the lists)."""

from __future__ import annotations

from dataclasses import replace

from cumbe import buffers
from mbebench import envvars

# a slice smaller than this holds too few roots to pay for its build (int32 words: 16 KiB)
LEAST_WORDS = 4096
# A root needs this many candidates left at its level: a build reads every list of L once,
# and a subtree of a few nodes has too few checks to pay that back.  1 (no gate): no gate
# tried on an H100 (32, 256) made the words pay either (docs/dense-cores.md).
MIN_CANDIDATES = 1
MIN_CANDIDATES_ENV = "MBEBENCH_WORDS_MIN_CANDIDATES"


def min_candidates() -> int:
    """The fewest candidates a level needs to be a root of bit words (the kernel's
    parameter; :data:`MIN_CANDIDATES` unless the environment sets it, for tuning)."""
    v = envvars.get(MIN_CANDIDATES_ENV)
    if v is None or v == "":
        return MIN_CANDIDATES
    try:
        n = int(v)
    except ValueError:
        raise ValueError(f"{MIN_CANDIDATES_ENV}={v!r}: not an integer") from None
    return max(1, n)


def wanted(opts) -> bool:
    """Does this run's build read bit words: the check in rounds (a reverse-scan variant)
    and a slice asked for?"""
    return bool(opts.rounds and opts.switches[0] and opts.word_kib > 0)


def for_grid(opts, choice):
    """``choice`` (:class:`cumbe.grid.GridChoice`) with each warp's slice: ``word_kib`` KiB,
    or what the budget leaves it, or none."""
    plan = choice.plan
    if not wanted(opts) or plan.workers < 1:
        return choice
    room = max(0, int(choice.budget_bytes) - int(choice.bytes))
    per = min(int(opts.word_kib) * 256, room // (4 * plan.workers))
    if per < LEAST_WORDS:
        return choice
    plan = replace(plan, word_area=int(per))
    return replace(choice, plan=plan, bytes=buffers.nbytes(plan))
