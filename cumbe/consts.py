"""The kernel's numbering: phases, scalar parameters, control words, pool header, error
codes and the per-worker shared-memory slots; and what ``build`` hands every factory.

Host code (:mod:`cumbe.engine`, :mod:`cumbe.buffers`) sizes buffers and reads results by
these numbers, so they live apart from the device code, outside the kernel's package
(whose ``__init__`` imports numba.cuda): the launch from a cached cubin
(:mod:`cumbe.cubin`) reads them without importing numba.  The kernel's modules import them
as :mod:`cumbe.kernel.consts` (re-exported by :mod:`cumbe.kernel`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from cumbe import layout as _lay

# the device code's number types and constants
I32, I64, U64 = np.int32, np.int64, np.uint64
ZERO64 = np.uint64(0)
BIG = np.int64(0x7FFFFFFFFFFFFFFF)
MASK32 = np.int64(0xFFFFFFFF)
SHIFT = np.int64(1 << 32)
NID_MAX = np.int64(0x7FFFFFFF)

# Switches that change the compiled code but not what it counts (debugging, register bounds,
# experiments).  numba's disk cache keys on neither jit options nor the environment, so
# cumbe.kernel.build adds the switches set, with their values, to the cache key (without that
# a lineinfo run was served the plain build compiled before it); the cubin cache
# (cumbe.cubin) is not used under any of them.
BUILD_ENV = ("CUMBE_LINEINFO", "CUMBE_NOINLINE", "CUMBE_DEBUGINFO", "CUMBE_MIN_BLOCKS",
             "CUMBE_WRAPAROUND")

# phases (index into a worker's phase table)
PH_SEL, PH_LPRIME, PH_CHECK, PH_EXPAND, PH_FETCH, PH_STEAL, PH_OTHER = range(7)
PHASES = (
    "candidate_selection",
    "lprime_construction",
    "maximality_checking",
    "maximal_expansion",
    "subtree_fetching",
    "work_stealing",
    "other",
)
PH_IDLE = 7  # grid-sync wait
NPH = 8

# params (int64 array)
P_NU, P_K, P_AW, P_HALF, P_NT0, P_NT1, P_CANDLEFT, P_EAGER, P_NWK, P_IDLE = range(10)
NPARAMS = 10
# progress (int64 [blocks, NPROG], which the host copies on a stream of its own while the
# kernel runs and sums over the blocks): first-level tasks done, their summed cost estimate
# (wedges + degree, as the host orders them), bicliques.  Every piece adds to its block's
# row with reductions whose result it does not wait for; rows per block, because one row
# for the grid made the reductions queue on its line (+5 % on 5 ms graphs).  Host-mapped
# counters cost more: atomics on them added 14-50 ms to every launch, and periodic plain
# stores into them (the clock read and the store in the worker loop) 5 % to a 23 s run
# (H100, 2026-11-26, docs/gpu.md).
PR_TASKS, PR_COST, PR_BICLIQUES = range(3)
NPROG = 3
NRES = 4
# control (int32 [2 phases, CTL_FIXED + 3 * (k + 2)]): task counter, then per stage the
# stop flag, the publisher count and the count of workers out of work
C_TASK = 0
CTL_FIXED = 2
# pool header (int32 [2, workers, NH]) and the task's base offset (int64 [2, workers])
# and, last, the victim's piece of its first-level task (H_PK of H_PN; 1: the whole task)
H_NLEV, H_D, H_NB, H_TB, H_DEPTH, H_CAPH, H_QCAP, H_CB, H_PK, H_PN = range(10)
NH = 10
# error codes (err[0])
ERR_QCAP, ERR_NID, ERR_ARENA, ERR_ROUNDS = 1, 2, 3, 4
ERRORS = {ERR_QCAP: "the explicit Q stack (noRS) overflowed",
          ERR_NID: "a task visited more than 2**31 nodes",
          ERR_ARENA: "a task did not fit its worker's arena",
          ERR_ROUNDS: "the maximality check in rounds lost count of R' (a kernel bug)"}

WARP = 32
MAX_THREADS = 512

# per-group shared int32 slots
(S_LVL, S_STOP, S_GOT, S_NONMAX, S_NP, S_NTW, S_NABS, S_NQ, S_SURV, S_TOT, S_N,
 S_D, S_NB, S_TB, S_DEPTH, S_CAPH, S_QCAP, S_PUB, S_CUR, S_FOUND, S_VIC,
 S_IDX, S_DONE, S_C0, S_C1, S_C2, S_CBW, S_R0, S_R1, S_R2, S_PK, S_PN) = range(32)
S_OFF = 32  # + layout field index
NS = S_OFF + _lay.NFIELDS + 1
# per-group shared int64 slots; then the running first-level task's cost (progress)
X_R, X_BASE, X_MIN, X_NID, X_COST = range(5)
NS64 = 5
# per-group shared uint64 slots
U_SUML, U_SUMA, U_SUMX = range(3)
NSU = 4


class Build(NamedTuple):
    """A build's compile-time switches.  Factories copy them into locals before defining
    device functions: numba freezes a closure's plain values as constants, so a switched
    off branch is compiled out (a tuple in a closure would not be)."""

    rs: bool  # reverse scanning (noRS: an explicit Q)
    es: bool  # early-stop selection on cached keys
    ws: bool  # k-level work stealing
    instr: bool  # clock64 phase timers
    threads: int  # per block
    dev: Callable  # the device-function decorator (inlined unless debugging)
    # tasks in pieces (cumbe.prepare.split; RS only): a build of its own, so that the
    # plain kernel's search loop carries none of it (in the same build it was 4-16 % slower
    # on every graph, H100, 2026-11-26)
    pieces: bool = False
    # the compact task layout (cumbe.layout), launched only when memory is short: a build
    # of its own, so that the plain kernel's code stays as it is
    compact: bool = False
    # the maximality check in rounds (RS only, engine parameter rounds): R' out of
    # the running intersection, several lists a round (cumbe.kernel.maximality)
    rounds: bool = False
    # with rounds: the check looks candidates up in the hub bit rows (cumbe.hubs); a build
    # of its own, launched only when the run has rows, so that a run without them (a tight
    # memory cap, no list long enough) runs the rounds build's code as it was (in one build,
    # its lists' binary searches were 1.2-2.4x slower without rows, H200, 2026-12-02)
    hubs: bool = False


class Group(NamedTuple):
    """One kind of worker: a warp, or a whole block (tasks too big for a warp's arena)."""

    size: int  # lanes
    sync: Callable  # its barrier (a device function)
