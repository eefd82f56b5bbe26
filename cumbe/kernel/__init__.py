"""The cuMBE kernel (Numba CUDA): one cooperative kernel, one source for every variant.

Notation (paper §II): candidates P, R and the processed set Q are vertices of the
*candidate side* U; L is a subset of the other side V.  The host renumbers U by rank =
(degree, id) (:mod:`cumbe.prepare`).  A first-level task is the subtree of one candidate
``v``; its *worker* is a warp (most tasks are small) or, for the few tasks whose data does
not fit a warp's arena, the whole thread block (run first).  Memory and time follow the
task, never |U| or |V| (:mod:`cumbe.layout`).

One module per step of the paper, each a ``make_*`` factory of device functions:

==================  ==============================================================
:mod:`.fetch`       subtree fetching: a task's local subgraph in its worker's arena
:mod:`.lists`       compact arrays and the lookup table: nested list prefixes, L'
:mod:`.search`      the search: candidate selection, L', maximal expansion, push
:mod:`.maximality`  the maximality check (reverse scan; noRS: the explicit Q)
:mod:`.stealing`    k-level work stealing: publish and steal
:mod:`.stages`      the grid stages, the kernel itself, its progress reports
:mod:`.sync`        barriers, clock, relaxed load; :mod:`.consts` the numbering
:mod:`.arena`       a worker's words at 32-bit offsets from its own base
==================  ==============================================================

Variants are compile-time switches (:func:`build`): RS (closure check; noRS scans Q), ES
(early-stop selection with cached keys; noES recounts every candidate from its full list
at every selection), WS (stealing), INSTR (clock64 timers).  Factories take them as
closure constants, so numba compiles a switched-off branch out; every group step is made
twice, for a warp and for a block.

Loops are ``while`` loops with int32 counters (``i = I32(gl)`` ... ``i = I32(i + G)``), not
``for i in range(gl, n, G)``: numba lowers a range to a 64-bit trip count with a sign test
of the step, and int32 + int32 to int64, so each loop carried 64-bit arithmetic and selects
the warp never needed.  The while form took the cuMBE build's code from 419 to 248 KB and
its kernel time down 15-40 % on every graph we time (docs/gpu-performance.md);
tests/test_cumbe_loops.py keeps range loops over a worker's lanes out.  For the same reason
the steps reach the worker's arena (and N(v) in the graph) through :mod:`.arena`: a 32-bit
offset from a base computed once, not ``A[R + j]`` with the 64-bit ``R`` added and scaled at
every access (230 KB, 4-19 % faster on every graph over 5 ms we time:
docs/gpu-performance.md, "32-bit arena offsets").
"""

from __future__ import annotations

import os

from numba import cuda

from cumbe.kernel import fetch, indexing, lists, maximality, search, stages, stealing
from cumbe.kernel.consts import *
from cumbe.kernel.consts import MAX_THREADS, WARP, Build, Group
from cumbe.kernel.sync import SIM, SIM_WARPS, _block_sync_impl, block_sync, wsync  # noqa: F401  (tests and tools reach them here)
from mbebench import envvars
from mbebench.jitcache import keyed

_CACHE: dict = {}
THREADS_PER_SM = 768  # the launch bound's target (see _jit_options)

KERNEL_ARGS = ("offU", "adjU", "offV", "adjV", "orig", "tasks", "task_piece", "prm", "arena",
               "arena64", "ctl", "pool_hdr", "pool_base", "pool_n", "pool_list", "res", "res_fp",
               "err", "ph_out", "tasks_out", "prog", "hubs")


def non_negative_indexing() -> bool:
    """Whether the kernel compiles its array indices without wraparound
    (:mod:`cumbe.kernel.indexing`): on every GPU build but under ``CUMBE_WRAPAROUND=1``, which
    keeps numba's Python indexing to rule the code generation out."""
    return not SIM and not envvars.flag("CUMBE_WRAPAROUND")


def blocks_per_sm(threads: int, asked: int = 0) -> int:
    """The blocks an SM the kernel is compiled for (its launch bound): ``CUMBE_MIN_BLOCKS``
    (a developers' switch), else ``asked`` (the engine's ``blocks_per_sm``), else 768 threads
    an SM."""
    return (int(os.environ.get("CUMBE_MIN_BLOCKS", "0")) or int(asked)
            or max(1, THREADS_PER_SM // threads))


def _jit_options(threads: int, cache: bool, per_sm: int = 0) -> dict:
    if SIM:
        return {}
    # 768 threads an SM (6 blocks of 128, 80 registers a thread): against 1,024 (64 registers,
    # more spills) 5-29 % faster on the tiles and mirror graphs, within 1.6 % on crowns
    # (one H100 call, docs/gpu-performance.md); on the 230 KB build 8 blocks an SM is 5-10 %
    # faster on graphs over 0.1 s and 4-20 % slower on most under 10 ms (H200), hence a
    # parameter
    kw = {"cache": bool(cache), "launch_bounds": (threads, blocks_per_sm(threads, per_sm))}
    if envvars.flag("CUMBE_LINEINFO"):
        kw["lineinfo"] = True
    if envvars.flag("CUMBE_DEBUGINFO"):
        # full debug info, unoptimised: compute-sanitizer then names the source line of
        # an inlined device function, which lineinfo attributes to the kernel's call
        kw.update(debug=True, opt=False)
    return kw


def _run_stage(cfg: Build, grp: Group, progress):
    """The steps of one kind of worker, composed in the paper's order."""
    ls = lists.make_lists(cfg, grp)
    mx = maximality.make_maximality(cfg, grp)
    fe = fetch.make_fetch(cfg, grp, ls, mx)
    st = stealing.make_stealing(cfg, grp, ls, fe, mx)
    se = search.make_search(cfg, grp, ls, st, mx)
    return stages.make_run_stage(cfg, grp, fe, st, se, progress)


def build(rs=True, es=True, ws=True, instr=False, threads=128, cache=True, pieces=False,
          compact=False, blocks_per_sm=0, rounds=False, hubs=False):
    """The kernel for one variant and block size (memoised); ``pieces``: it runs tasks in
    pieces (:func:`cumbe.prepare.split`, RS only; without it every task runs whole);
    ``compact``: the compact task layout (:mod:`cumbe.layout`); ``blocks_per_sm``: the launch
    bound (0: 768 threads an SM); ``rounds``: the maximality check in rounds (RS only);
    ``hubs``: with rounds, its lookups in hub bit rows (:mod:`cumbe.hubs`)."""
    # the build switches set, with their values: part of the memo's and the disk cache's
    # keys (numba's own key has neither jit options nor what a factory reads from the
    # environment)
    switches = tuple((n, os.environ[n]) for n in BUILD_ENV if envvars.flag(n))
    # ``cache`` is part of the key: a build without the disk cache must not be served to a
    # caller that asked for one (or the other way round)
    key = (bool(rs), bool(es), bool(ws), bool(instr), int(threads), switches, bool(cache),
           bool(pieces) and bool(rs), bool(compact), int(blocks_per_sm),
           bool(rounds) and bool(rs), bool(hubs) and bool(rounds) and bool(rs))
    if key in _CACHE:
        return _CACHE[key]
    RS, ES, WS, INSTR, THREADS, _, _, PIECES, COMPACT, PER_SM, ROUNDS, HUBS = key
    if THREADS % WARP or not WARP <= THREADS <= MAX_THREADS:
        raise ValueError(f"threads must be a multiple of {WARP} in {WARP}..{MAX_THREADS}")
    # (CUMBE_NOINLINE=1: debugging only, so that compute-sanitizer names device functions)
    inline = not SIM and not envvars.flag("CUMBE_NOINLINE")
    dev = cuda.jit(device=True, **({"forceinline": True} if inline else {}))
    cfg = Build(RS, ES, WS, INSTR, THREADS, dev, PIECES, COMPACT, ROUNDS, HUBS)
    progress = stages.make_progress(cfg)
    kernel = stages.make_kernel(cfg, _run_stage(cfg, Group(WARP, wsync), progress),
                                _run_stage(cfg, Group(THREADS, block_sync), progress), progress)
    # keyed on the package: its modules are what the kernel's closures compile in, and
    # this file holds the jit options numba's cache does not key on
    # (a launch bound asked for is a jit option: part of the disk cache's key)
    kern = keyed(cuda.jit(**_jit_options(THREADS, cache, PER_SM))(kernel), module=__name__,
                 extra=switches + ((("blocks_per_sm", PER_SM),) if PER_SM else ())
                 + ((("rounds", True),) if ROUNDS else ())
                 + ((("hubs", True),) if HUBS else ()))
    if non_negative_indexing():
        kern = indexing.compiling_non_negative(kern)
    _CACHE[key] = kern
    return kern
