"""Every device buffer of a cuMBE launch, described once.

:data:`SPEC` is the kernel's argument list, in order: ``cumbe.kernel`` names its
parameters after it (tests/test_cumbe_host.py checks that), the engine
allocates from it (:func:`allocate`), and the memory estimate is its byte sum
(:func:`nbytes`).  Shapes are functions of a :class:`Plan`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from cumbe import consts


@dataclass(frozen=True)
class Plan:
    """What the buffer shapes depend on."""

    n_u: int  # candidates
    n_v: int  # other side
    n_edges: int
    n_tasks: int
    k: int  # stages
    blocks: int
    warps: int  # per block
    arena_words: int  # per warp (a block-wide task uses its warps' arenas joined)
    hub_words: int = 0  # the hub table's words (cumbe.hubs); 0: none

    @property
    def workers(self) -> int:
        return self.blocks * self.warps

    @property
    def half_words(self) -> int:
        """One arena half: every warp's arena; a worker works in half ``stage % 2``."""
        return self.workers * self.arena_words


@dataclass(frozen=True)
class Buffer:
    name: str
    dtype: type
    shape: Callable[[Plan], tuple]
    role: str  # "graph" (copied from the host), "scratch", "result", "view" (of scratch)
    doc: str


SPEC: tuple[Buffer, ...] = (
    Buffer("offU", np.int64, lambda p: (p.n_u + 1,), "graph", "candidate offsets, rank order"),
    Buffer("adjU", np.int32, lambda p: (max(p.n_edges, 1),), "graph", "candidate lists (V ids)"),
    Buffer("offV", np.int64, lambda p: (p.n_v + 1,), "graph", "other-side offsets"),
    Buffer("adjV", np.int32, lambda p: (max(p.n_edges, 1),), "graph", "other-side lists (ranks)"),
    Buffer("orig", np.int32, lambda p: (max(p.n_u, 1),), "graph", "rank -> CSR id (fingerprint)"),
    Buffer("tasks", np.int32, lambda p: (max(p.n_tasks, 1),), "graph",
           "first-level tasks: block-wide ones, then warp ones"),
    Buffer("task_piece", np.int32, lambda p: (max(p.n_tasks, 1), 2), "graph",
           "each task's piece (k, K): the level-0 branches with k (mod K) candidates after "
           "them in the task's fixed order (cumbe.prepare.split); (0, 1): the whole task"),
    Buffer("prm", np.int64, lambda p: (consts.NPARAMS,), "graph", "scalars (consts.P_*)"),
    Buffer("arena", np.int32, lambda p: (2 * p.half_words,), "scratch",
           "the workers' arenas, two halves (cumbe.layout)"),
    Buffer("arena64", np.uint64, lambda p: (p.half_words,), "view",
           "the same memory as 64-bit words (level sums)"),
    Buffer("ctl", np.int32, lambda p: (2, consts.CTL_FIXED + 3 * (p.k + 2)), "scratch",
           "per phase: task counter; per stage the stop flag, publishers, workers out of work"),
    Buffer("pool_hdr", np.int32, lambda p: (2, p.workers, consts.NH), "scratch",
           "published work: the victim's task layout"),
    Buffer("pool_base", np.int64, lambda p: (2, p.workers), "scratch",
           "published work: the victim's neighbour-list base"),
    Buffer("pool_n", np.int32, lambda p: (2, p.workers), "scratch", "pieces left per victim"),
    Buffer("pool_list", np.int32, lambda p: (2, p.workers), "scratch", "who published"),
    Buffer("res", np.int64, lambda p: (consts.NRES,), "result",
           "bicliques, nodes, tasks, tasks of the block-wide phase (stolen pieces included)"),
    Buffer("res_fp", np.uint64, lambda p: (1,), "result", "fingerprint"),
    Buffer("err", np.int32, lambda p: (4,), "result", "error code (consts.ERRORS)"),
    Buffer("ph_out", np.int64, lambda p: (p.workers, consts.NPH + 1), "result",
           "instrumented: cycles per phase and in total, per warp"),
    Buffer("tasks_out", np.int64, lambda p: (p.workers,), "result", "tasks per warp"),
    Buffer("prog", np.int64, lambda p: (p.blocks, consts.NPROG), "result",
           "progress counters (consts.PR_*) per block, copied while the kernel runs "
           "(cumbe.progress); summed over the blocks, exact at the end"),
    Buffer("hubs", np.int32, lambda p: (max(p.hub_words, 1),), "graph",
           "the rounds build's bit rows of the longest other-side lists (cumbe.hubs); one "
           "word: none"),
)

NAMES = tuple(b.name for b in SPEC)
ZEROED = ("ctl", "res", "res_fp", "err", "ph_out", "tasks_out", "prog")


def nbytes(plan: Plan) -> int:
    """Device bytes of one launch (views share their buffer's memory)."""
    return int(sum(int(np.prod(b.shape(plan))) * np.dtype(b.dtype).itemsize
                   for b in SPEC if b.role != "view"))


def bytes_per_arena_word(plan: Plan) -> int:
    """How :func:`nbytes` grows with ``arena_words`` (the grid planner solves for it)."""
    return 2 * plan.workers * np.dtype(np.int32).itemsize


# the graph itself: the same arrays for every shard of one preparation
RESIDENT = ("offU", "adjU", "offV", "adjV", "orig")


def allocate(plan: Plan, host: dict, cuda, kept=None, budget: int | None = None) -> dict:
    """Device arrays for every buffer: ``host`` gives the graph buffers' contents;
    scratch is left uninitialised except ZEROED (the kernel initialises the rest).
    ``kept`` (:class:`cumbe.kept.Kept`, a device worker's shards of one job): the RESIDENT
    copies are reused while ``host`` holds the same host arrays, every other buffer is a view
    of a kept one with the room (within ``budget`` bytes in all)."""
    out = {}
    if kept is not None and budget is not None:
        kept.fit({b.name: int(np.prod(b.shape(plan))) * np.dtype(b.dtype).itemsize
                  for b in SPEC if b.role != "view" and b.name not in RESIDENT}, budget)
    for b in SPEC:
        shape = b.shape(plan)
        if b.role == "view":
            continue
        if kept is not None and b.name in RESIDENT:
            held = kept.graph.get(b.name)
            if held is not None and held[0] is host[b.name]:
                out[b.name] = held[1]
                continue
        if b.role == "graph":
            arr = np.ascontiguousarray(host[b.name], dtype=b.dtype)
            if arr.size == 0:
                arr = np.zeros(shape, b.dtype)
            if arr.shape != shape:
                raise ValueError(f"buffer {b.name}: shape {arr.shape}, the spec says {shape}")
            if kept is None or b.name in RESIDENT:
                out[b.name] = cuda.to_device(arr)
                if kept is not None:
                    kept.graph[b.name] = (host[b.name], out[b.name])
            else:
                out[b.name] = kept.array(cuda, b.name, shape, b.dtype)
                out[b.name].copy_to_device(arr)
        elif kept is not None:
            out[b.name] = kept.array(cuda, b.name, shape, b.dtype)
            if b.name in ZEROED:
                out[b.name].copy_to_device(np.zeros(shape, b.dtype))
        elif b.name in ZEROED:
            out[b.name] = cuda.to_device(np.zeros(shape, b.dtype))
        else:
            out[b.name] = cuda.device_array(shape, dtype=b.dtype)
    out["arena64"] = out["arena"].view(np.uint64)
    return out


def args(arrays: dict) -> tuple:
    return tuple(arrays[n] for n in NAMES)


def typing_dummies(cuda) -> tuple:
    """Tiny arrays with every buffer's dtype and rank: the compile signature."""
    dummy = Plan(1, 1, 1, 1, 1, 1, 1, 2)
    return tuple(cuda.device_array(b.shape(dummy), dtype=b.dtype) for b in SPEC)
