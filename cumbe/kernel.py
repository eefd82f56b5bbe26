"""The cuMBE kernel (Numba CUDA): one cooperative kernel, one source for every variant.

Notation (paper §II): candidates P, R and the processed set Q are vertices of
the *candidate side* U; L is a subset of the other side V.  The host renumbers U
by rank = (degree, id) (:mod:`cumbe.prepare`).

Workers and tasks.  A first-level task is the subtree of one candidate ``v``.
Its *worker* is a warp (most tasks are small) or, for the few tasks whose data
does not fit a warp's arena, the whole thread block (block-wide cooperation,
run first).  A worker builds the task's local subgraph in its own arena
(*subtree fetching*): L = N(v) with local ids 0..d-1, one *slot* per 2-hop
vertex of higher rank with its list N(u) ∩ N(v) in local ids (ParMBE's
subproblem of v).  Memory and time follow the task, never |U| or |V|
(:mod:`cumbe.layout`).

The search (paper Alg. 1, one level per loop turn, no recursion) keeps the
paper's compact arrays, now over the task's local ids:

* P at level l is the prefix ``PARR[0:pc_l]`` (nested prefixes: a child only
  permutes inside its parent's prefix);
* L at level l is the prefix ``LST[x_{l-1}][0:kL_l]`` of the list of the vertex
  chosen one level up; membership is the lookup table ``DL[j] >= l`` (the
  deepest level whose L holds j);
* a slot's list keeps its own nested prefixes too: ``LST[u][0:key_l(u)]`` is
  N(u) ∩ L_l, so counting |N(u) ∩ L'| scans only N(u) ∩ L_l (ParMBE's shrinking
  lists, without copies).  ``KEY/TAG`` cache key_l(u) per level node; a stale
  key is recovered by scanning forward from the deeper key it was overwritten
  with.

Steps of a node, one device function each: *select a candidate* (smallest
|N(u) ∩ L|, early stop at the level's last minimum), *build L'* (stamp x's list
prefix), *expand* (count and partition every candidate's list, absorbed
vertices join R', twins leave P), *check maximality* (reverse scan: the vertices
containing L' are the intersection of the V-side lists of L', started from the
shortest; noRS scans an explicit Q instead) and *push* the child level.

k-level work stealing in stages: stage 1 runs first-level tasks; once they are
gone every busy worker publishes all work left on its path at its next node
and leaves (*publish*); ``grid.sync()``; in stage 2 idle workers *steal* single
candidates of any published level and copy what they need (the candidate's
list prefixes and L); ... up to stage k, which runs to completion.  Workers
work in arena half ``stage % 2``, so published work stays readable for a whole
stage.  Every block executes the same grid syncs.

Variants are compile-time constants (``build``): RS (closure check; noRS scans
Q), ES (early-stop selection with cached keys; noES recounts every candidate
from its full list at every selection), WS (stealing), INSTR (clock64 timers).
"""

from __future__ import annotations

import threading

import numpy as np
from numba import cuda
from numba.cuda import config as _cfg

from cumbe import layout as _lay
from mbebench import fingerprint as _fpmod
from mbebench.jitcache import keyed

SIM = bool(_cfg.ENABLE_CUDASIM)

_fp = _fpmod.compile_with(cuda.jit(device=True))
_ly = _lay.compile_with(cuda.jit(device=True))
left_elem = _fp.left_elem
right_elem = _fp.right_elem
combine_sides = _fp.combine_sides
field_offset = _ly.field_offset
task_bound = _ly.task_bound

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
(P_NU, P_K, P_AW, P_HALF, P_NT0, P_NT1, P_CANDLEFT, P_EAGER, P_NWK, P_IDLE) = range(10)
NPARAMS = 10
# control (int32 [2 phases, CTL_FIXED + 3 * (k + 2)]): task counter, then per stage the
# stop flag, the publisher count and the count of workers out of work
C_TASK = 0
CTL_FIXED = 2
# pool header (int32 [2, workers, NH]) and the task's base offset (int64 [2, workers])
H_NLEV, H_D, H_NB, H_TB, H_DEPTH, H_CAPH, H_QCAP, H_CB = range(8)
NH = 9
# error codes (err[0])
ERR_QCAP, ERR_NID, ERR_ARENA = 1, 2, 3
ERRORS = {ERR_QCAP: "the explicit Q stack (noRS) overflowed",
          ERR_NID: "a task visited more than 2**31 nodes",
          ERR_ARENA: "a task did not fit its worker's arena"}

WARP = 32
MODE_WARP, MODE_BLOCK = 0, 1

# per-group shared int32 slots
(S_LVL, S_STOP, S_GOT, S_NONMAX, S_NP, S_NTW, S_NABS, S_NQ, S_SURV, S_TOT, S_N,
 S_D, S_NB, S_TB, S_DEPTH, S_CAPH, S_QCAP, S_PUB, S_CUR, S_FOUND, S_VIC,
 S_IDX, S_DONE, S_C0, S_C1, S_C2, S_CBW, S_R0, S_R1, S_R2) = range(30)
S_OFF = 32  # + layout field index
NS = S_OFF + _lay.NFIELDS + 1
# per-group shared int64 slots
X_R, X_BASE, X_MIN, X_NID = range(4)
NS64 = 4
# per-group shared uint64 slots
U_SUML, U_SUMA, U_SUMX = range(3)
NSU = 4


class _SimWarps:
    """Warp barriers for the simulator, which has no syncwarp: its threads are real
    Python threads, so 32 of them can meet at a threading.Barrier."""

    def __init__(self):
        self.lock = threading.Lock()
        self.bars = {}

    def reset(self):
        with self.lock:
            self.bars = {}

    def wait(self):
        t = threading.current_thread()
        key = (t.blockIdx.x, t.threadIdx.x // WARP)
        with self.lock:
            bar = self.bars.get(key)
            if bar is None:
                bar = self.bars[key] = threading.Barrier(WARP)
        bar.wait()


SIM_WARPS = _SimWarps()

if SIM:
    import time as _time

    def clock64():  # simulator: wall clock in ns stands in for cycles
        return np.int64(_time.perf_counter_ns())

    def bsync():
        cuda.syncthreads()

    def wsync():
        SIM_WARPS.wait()

    def load_relaxed(arr, i, j):
        return arr[i, j]

else:
    from llvmlite import ir
    from numba.cuda import types as _types
    from numba.cuda.extending import intrinsic
    from numba.cuda.typing import signature as _signature

    @intrinsic
    def clock64(typingctx):
        """The SM's 64-bit cycle counter (PTX %clock64; numba-cuda 0.30.4 has none)."""
        sig = _signature(_types.int64)

        def codegen(context, builder, sig, args):
            fnty = ir.FunctionType(ir.IntType(64), [])
            asm = ir.InlineAsm(fnty, "mov.u64 $0, %clock64;", "=l", side_effect=True)
            return builder.call(asm, [])

        return sig, codegen

    @intrinsic
    def bsync(typingctx):
        """Block barrier that tolerates warps arriving diverged (PTX ``barrier.sync``
        without ``.aligned``): ``cuda.syncthreads()`` is the aligned form, and warps
        that run their own loops reach it at different points (compute-sanitizer
        synccheck, then CUDA_ERROR_ILLEGAL_INSTRUCTION)."""
        sig = _signature(_types.void)

        def codegen(context, builder, sig, args):
            fnty = ir.FunctionType(ir.VoidType(), [])
            asm = ir.InlineAsm(fnty, "barrier.sync 0;", "~{memory}", side_effect=True)
            builder.call(asm, [])
            return context.get_dummy_value()

        return sig, codegen

    @intrinsic
    def load_relaxed(typingctx, arr, i, j):
        """arr[i, j] read from L2 without an atomic (PTX ld.relaxed.gpu): every warp polls
        the stop flag once per node, and thousands of same-address atomics would queue."""
        sig = _signature(_types.int32, arr, i, j)

        def codegen(context, builder, sig, args):
            from numba.cuda import cgutils

            aryty = sig.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            idx = [context.cast(builder, args[1], sig.args[1], _types.intp),
                   context.cast(builder, args[2], sig.args[2], _types.intp)]
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, idx, wraparound=False)
            fnty = ir.FunctionType(ir.IntType(32), [ptr.type])
            asm = ir.InlineAsm(fnty, "ld.relaxed.gpu.s32 $0, [$1];", "=r,l", side_effect=True)
            return builder.call(asm, [ptr])

        return sig, codegen

    def _wsync_impl():
        cuda.syncwarp(0xFFFFFFFF)

    wsync = cuda.jit(device=True, forceinline=True)(_wsync_impl)


def _block_sync_impl():
    # The inline barrier alone did not order memory between the warps of a block: on an
    # H100, block-wide tasks read control words (the next level, the selection minimum)
    # and arena words before lane 0 had written them (compute-sanitizer racecheck and
    # initcheck), then indexed with them.  With CTA fences on both sides (or with
    # cuda.syncthreads) the same runs are clean (docs/gpu.md, "The block-wide fault").
    if not SIM:
        cuda.threadfence_block()
    bsync()
    if not SIM:
        cuda.threadfence_block()


def _relaxed_load_impl(arr, i, j):
    return load_relaxed(arr, i, j)


def _clock_impl():
    return clock64()


# The intrinsics wrapped in module-level device functions, which the kernel's closures
# use instead: numba keys its disk cache by a pickle of the closures, and an intrinsic
# reached from a closure pickles with a fresh uuid in every process, so every run
# compiled the kernel again (~40 s).
_dev = cuda.jit(device=True, **({} if SIM else {"forceinline": True}))
block_sync = _dev(_block_sync_impl)
relaxed_load = _dev(_relaxed_load_impl)
clock = _dev(_clock_impl)


_CACHE: dict = {}
MAX_THREADS = 512


# Switches that change the compiled code but not the algorithm (debugging, register bounds).
# numba's disk cache does not key on jit options, so a build under any of them skips it:
# otherwise a lineinfo or debug run is served the plain build compiled before it.
BUILD_ENV = ("CUMBE_LINEINFO", "CUMBE_NOINLINE", "CUMBE_DEBUGINFO", "CUMBE_MIN_BLOCKS")


def _os_env(name: str) -> bool:
    import os

    return os.environ.get(name, "") not in ("", "0")


def build(rs=True, es=True, ws=True, instr=False, threads=128, cache=True):
    """The kernel for one variant and block size (memoised)."""
    switches = tuple(_os_env(n) for n in BUILD_ENV)
    # ``cache`` is part of the key: a build without the disk cache must not be served to a
    # caller that asked for one (or the other way round)
    key = (bool(rs), bool(es), bool(ws), bool(instr), int(threads), switches, bool(cache))
    if key in _CACHE:
        return _CACHE[key]
    RS, ES, WS, INSTR, THREADS, _, _ = key
    if THREADS % WARP or not WARP <= THREADS <= MAX_THREADS:
        raise ValueError(f"threads must be a multiple of {WARP} in {WARP}..{MAX_THREADS}")
    NW = THREADS // WARP
    NG = NW + 1  # shared-memory slot sets: one per warp, one for the block
    I32 = np.int32
    I64 = np.int64
    U64 = np.uint64
    ZERO64 = np.uint64(0)
    BIG = np.int64(0x7FFFFFFFFFFFFFFF)
    MASK32 = np.int64(0xFFFFFFFF)
    SHIFT = np.int64(1 << 32)
    NID_MAX = np.int64(0x7FFFFFFF)
    NF = _lay.NF
    F_PC, F_KL, F_LSLOT, F_LASTMIN = _lay.F_PC, _lay.F_KL, _lay.F_LSLOT, _lay.F_LASTMIN
    F_NID, F_NX, F_X = _lay.F_NID, _lay.F_NX, _lay.F_X
    F_QS, F_QE, F_SUM = _lay.F_QS, _lay.F_QE, _lay.F_SUM
    K_SG, K_SO, K_SL, K_KEY, K_TAG = _lay.K_SG, _lay.K_SO, _lay.K_SL, _lay.K_KEY, _lay.K_TAG
    K_LST, K_HK, K_HC, K_PRE, K_ST = _lay.K_LST, _lay.K_HK, _lay.K_HC, _lay.K_PRE, _lay.K_ST
    K_CB = _lay.K_CB
    K_PARR, K_AUX, K_AUX2, K_DL, K_LV, K_Q = (_lay.K_PARR, _lay.K_AUX, _lay.K_AUX2, _lay.K_DL,
                                               _lay.K_LV, _lay.K_Q)
    NFIELDS = _lay.NFIELDS
    B_NB, B_TB, B_DEPTH, B_CAPH, B_QCAP, B_CB = (_lay.B_NB, _lay.B_TB, _lay.B_DEPTH,
                                                 _lay.B_CAPH, _lay.B_QCAP, _lay.B_CB)

    jit_kw = {}
    if not SIM:
        import os

        jit_kw["cache"] = bool(cache) and not any(switches)
        jit_kw["launch_bounds"] = (THREADS, int(os.environ.get("CUMBE_MIN_BLOCKS", "0"))
                                   or max(1, 1024 // THREADS))
        if _os_env("CUMBE_LINEINFO"):
            jit_kw["lineinfo"] = True
        if _os_env("CUMBE_DEBUGINFO"):
            # full debug info, unoptimised: compute-sanitizer then names the source line of
            # an inlined device function, which lineinfo attributes to the kernel's call
            jit_kw.update(debug=True, opt=False)
    # (CUMBE_NOINLINE=1: debugging only, so that compute-sanitizer names device functions)
    inline = not SIM and not _os_env("CUMBE_NOINLINE")
    dev = cuda.jit(device=True, **({"forceinline": True} if inline else {}))

    @dev
    def elem_u(u, cand_left):
        if cand_left:
            return left_elem(u)
        return right_elem(u)

    @dev
    def elem_v(y, cand_left):
        if cand_left:
            return right_elem(y)
        return left_elem(y)

    @dev
    def bsearch(adj, lo, hi, key):
        """Is key in the sorted segment adj[lo:hi]?"""
        while lo < hi:
            mid = (lo + hi) >> 1
            a = adj[mid]
            if a < key:
                lo = mid + 1
            elif a > key:
                hi = mid
            else:
                return True
        return False

    @dev
    def lower_bound(adj, lo, hi, key):
        while lo < hi:
            mid = (lo + hi) >> 1
            if adj[mid] <= key:
                lo = mid + 1
            else:
                hi = mid
        return lo

    @dev
    def hslot(u, mask):
        return I64((U64(u) * U64(0x9E3779B97F4A7C15)) >> U64(33)) & mask

    @dev
    def level_key(A, R, u, lvl, nid, oKEY, oTAG, oSO, oSL, oLST, oDL, write):
        """key_l(u) = |N(u) ∩ L_l| (the length of u's level-l list prefix).  A key cached
        by a deeper node of this level's subtree is a prefix of the level's: scan
        forward from it while the entries lie in L_l."""
        if A[R + oTAG + u] == nid:
            return A[R + oKEY + u]
        k = A[R + oKEY + u]
        o = R + oLST + A[R + oSO + u]
        end = A[R + oSL + u]
        while k < end and A[R + oDL + A[o + k]] >= lvl:
            k += 1
        if write:
            A[R + oKEY + u] = k
            A[R + oTAG + u] = nid
        return k

    @dev
    def partition_list(A, R, u, k, lvl, oSO, oLST, oDL):
        """Move the entries of u's prefix [0:k] that lie in L' (DL >= lvl) to its front;
        returns how many (|N(u) ∩ L'|).  In place: the nesting of prefixes survives."""
        o = R + oLST + A[R + oSO + u]
        a = 0
        b = k
        while a < b:
            j = A[o + a]
            if A[R + oDL + j] >= lvl:
                a += 1
            else:
                b -= 1
                t = A[o + b]
                A[o + b] = j
                A[o + a] = t
        return a

    @dev
    def out_of_work(ctl, phase, kst, stage, idle_at):
        """A worker found no work in this stage: once ``idle_at`` have, raise the stop
        signal, and the busy ones publish what they have left."""
        n = cuda.atomic.add(ctl, (phase, CTL_FIXED + 2 * (kst + 2) + stage), 1) + 1
        if n >= idle_at:
            cuda.atomic.max(ctl, (phase, CTL_FIXED + stage), 1)

    @dev
    def wedge_run(adjU, offV, adjV, base, j, v):
        """The run of N(y_j) that v's task takes slots from: (length, start within
        N(y_j)).  RS: the vertices of higher rank (one contiguous run, lists are
        sorted by rank); noRS: the whole list (v itself is skipped when read)."""
        y = adjU[base + j]
        lo = offV[y]
        hi = offV[y + 1]
        if RS:
            s = lower_bound(adjV, lo, hi, v)
            return hi - s, s - lo
        return hi - lo, I64(0)

    def group_fns(MODE):
        """The steps for one kind of worker: a warp (MODE_WARP) or a block."""
        G = WARP if MODE == MODE_WARP else THREADS

        if MODE == MODE_WARP:
            gsync = wsync
        else:
            gsync = block_sync

        @dev
        def offsets_to_shared(sh, g, gl, d, nb, tb, depth, caph, qcap, cb):
            if gl == 0:
                sh[g, S_D] = d
                sh[g, S_NB] = nb
                sh[g, S_TB] = tb
                sh[g, S_DEPTH] = depth
                sh[g, S_CAPH] = caph
                sh[g, S_QCAP] = qcap
                sh[g, S_CBW] = cb
                for f in range(NFIELDS):
                    sh[g, S_OFF + f] = field_offset(f, d, nb, tb, depth, caph, qcap, cb)

        # ------------------------------------------------------------ subtree fetching
        @dev
        def fetch_task(A, A64, prm, offU, adjU, offV, adjV, orig, sh, sh64, shu, g, gl, v,
                       R, aw, cand_left, err):
            """Build task v's local subgraph in the arena at R (the paper's subtree
            fetching): slots for the 2-hop vertices of higher rank (all of them for
            noRS) with their lists N(u) ∩ N(v), and the root level.  Returns the
            number of bicliques it reports itself (the root biclique: 1)."""
            base = offU[v]
            d = I32(offU[v + 1] - base)
            if gl == 0:
                sh64[g, X_MIN] = 0  # wedge count W
                sh[g, S_N] = 0
                sh[g, S_C0] = 0
                sh[g, S_C1] = 0
                sh[g, S_C2] = 0  # longest neighbour list
                shu[g, U_SUMX] = ZERO64
                shu[g, U_SUML] = ZERO64
                sh64[g, X_R] = R
                sh64[g, X_BASE] = base
            gsync()
            nu = prm[P_NU]
            w = I64(0)
            dvl = I64(0)
            for j in range(gl, d, G):
                c, s0 = wedge_run(adjU, offV, adjV, base, j, v)
                w += c
                y = adjU[base + j]
                if offV[y + 1] - offV[y] > dvl:
                    dvl = offV[y + 1] - offV[y]
            cuda.atomic.add(sh64, (g, X_MIN), w)
            cuda.atomic.max(sh, (g, S_C2), I32(dvl))
            gsync()
            W = sh64[g, X_MIN]
            dv = I64(sh[g, S_C2])
            nhi = nu - 1 - v if RS else nu - 1
            nb = task_bound(B_NB, d, W, nhi, dv, RS)
            tb = task_bound(B_TB, d, W, nhi, dv, RS)
            depth = task_bound(B_DEPTH, d, W, nhi, dv, RS)
            caph = task_bound(B_CAPH, d, W, nhi, dv, RS)
            qcap = task_bound(B_QCAP, d, W, nhi, dv, RS)
            cb = task_bound(B_CB, d, W, nhi, dv, RS)
            offsets_to_shared(sh, g, gl, d, nb, tb, depth, caph, qcap, cb)
            gsync()
            if sh[g, S_OFF + NFIELDS - 1] > aw:
                # cannot happen: the host sized the arenas by the same layout
                if gl == 0:
                    err[0] = ERR_ARENA
                return 0
            oHK = sh[g, S_OFF + K_HK]
            oHC = sh[g, S_OFF + K_HC]
            oPRE = sh[g, S_OFF + K_PRE]
            oST = sh[g, S_OFF + K_ST]
            oSG = sh[g, S_OFF + K_SG]
            oSO = sh[g, S_OFF + K_SO]
            oSL = sh[g, S_OFF + K_SL]
            oKEY = sh[g, S_OFF + K_KEY]
            oTAG = sh[g, S_OFF + K_TAG]
            oLST = sh[g, S_OFF + K_LST]
            for j in range(gl, d, G):
                c, s0 = wedge_run(adjU, offV, adjV, base, j, v)
                A[R + oPRE + j] = I32(c)
                A[R + oST + j] = I32(s0)
            for h in range(gl, caph, G):
                A[R + oHK + h] = -1
                A[R + oHC + h] = 0
            gsync()
            # exclusive prefix sums of the runs (lane 0: d is one vertex's degree)
            if gl == 0:
                acc = I32(0)
                for j in range(d):
                    c = A[R + oPRE + j]
                    A[R + oPRE + j] = acc
                    acc += c
                A[R + oPRE + d] = acc
            gsync()
            mask = I64(caph - 1)
            # pass 1: count |N(u) ∩ N(v)| per 2-hop vertex (hash insert)
            j = I32(0)
            for t in range(gl, W, G):
                while A[R + oPRE + j + 1] <= t:
                    j += 1
                y = adjU[base + j]
                u = adjV[offV[y] + A[R + oST + j] + (t - A[R + oPRE + j])]
                if (not RS) and u == v:
                    continue
                h = hslot(u, mask)
                while True:
                    old = cuda.atomic.cas(A, R + oHK + h, I32(-1), I32(u))
                    if old == -1 or old == u:
                        cuda.atomic.add(A, R + oHC + h, 1)
                        break
                    h = (h + 1) & mask
            gsync()
            # pass 2: one slot per vertex; containing N(v) -> X0 (absorbed at the root)
            sx = ZERO64
            for h in range(gl, caph, G):
                u = A[R + oHK + h]
                if u >= 0:
                    c = A[R + oHC + h]
                    if c == d and u > v:
                        sx += elem_u(orig[u], cand_left)
                        cuda.atomic.add(sh, (g, S_C0), 1)
                        A[R + oHC + h] = -1
                    else:
                        s = cuda.atomic.add(sh, (g, S_N), 1)
                        A[R + oSG + s] = u
                        A[R + oSO + s] = cuda.atomic.add(sh, (g, S_C1), c)
                        A[R + oSL + s] = c
                        A[R + oKEY + s] = 0  # fill cursor for pass 3
                        A[R + oHC + h] = s
            cuda.atomic.add(shu, (g, U_SUMX), sx)
            gsync()
            n = sh[g, S_N]
            # pass 3: the lists (local ids), each in arbitrary order
            j = I32(0)
            for t in range(gl, W, G):
                while A[R + oPRE + j + 1] <= t:
                    j += 1
                y = adjU[base + j]
                u = adjV[offV[y] + A[R + oST + j] + (t - A[R + oPRE + j])]
                if (not RS) and u == v:
                    continue
                h = hslot(u, mask)
                while A[R + oHK + h] != u:
                    h = (h + 1) & mask
                s = A[R + oHC + h]
                if s >= 0:
                    p = cuda.atomic.add(A, R + oKEY + s, 1)
                    A[R + oLST + A[R + oSO + s] + p] = j
            gsync()
            # the search view (overwrites the hash): P = every slot of higher rank
            oPARR = sh[g, S_OFF + K_PARR]
            oDL = sh[g, S_OFF + K_DL]
            oLV = sh[g, S_OFF + K_LV]
            oQ = sh[g, S_OFF + K_Q]
            sl = ZERO64
            for jj in range(gl, d, G):
                A[R + oDL + jj] = 0
                sl += elem_v(adjU[base + jj], cand_left)
            cuda.atomic.add(shu, (g, U_SUML), sl)
            if gl == 0:
                sh[g, S_C1] = 0  # P slots
                sh[g, S_C2] = 0  # Q slots (noRS)
            gsync()
            for s in range(gl, n, G):
                A[R + oKEY + s] = A[R + oSL + s]
                A[R + oTAG + s] = 1
                if RS or A[R + oSG + s] > v:
                    p = cuda.atomic.add(sh, (g, S_C1), 1)
                    A[R + oPARR + p] = s
                else:
                    p = cuda.atomic.add(sh, (g, S_C2), 1)
                    A[R + oQ + p] = s
            gsync()
            if gl == 0:
                lv = R + oLV
                A[lv + F_PC] = sh[g, S_C1]
                A[lv + F_KL] = d
                A[lv + F_LSLOT] = -1
                A[lv + F_LASTMIN] = 1
                A[lv + F_NID] = 1
                A[lv + F_NX] = 1 + sh[g, S_C0]
                A[lv + F_X] = -1
                A[lv + F_QS] = 0
                A[lv + F_QE] = sh[g, S_C2]
                A64[(lv + F_SUM) >> 1] = shu[g, U_SUMX] + elem_u(orig[v], cand_left)
                sh64[g, X_NID] = 1
                sh[g, S_LVL] = 0
                sh[g, S_C0] = 0
            gsync()
            return 1

        # ------------------------------------------------------------ work stealing
        @dev
        def publish(A, A64, ph, pb, pn, pl, ctl, sh, sh64, g, gl, l, me, par, phase, kst, stage):
            """Victim: offer every candidate still live on the path (levels 0..l); the
            arena half stays untouched for the next stage, thieves copy from it."""
            R = sh64[g, X_R]
            oLV = sh[g, S_OFF + K_LV]
            if gl == 0:
                sh[g, S_C0] = 0
            gsync()
            tot = I32(0)
            for m in range(gl, l + 1, G):
                tot += A[R + oLV + m * NF + F_PC]
            cuda.atomic.add(sh, (g, S_C0), tot)
            gsync()
            if gl == 0:
                ph[par, me, H_NLEV] = l
                ph[par, me, H_D] = sh[g, S_D]
                ph[par, me, H_NB] = sh[g, S_NB]
                ph[par, me, H_TB] = sh[g, S_TB]
                ph[par, me, H_DEPTH] = sh[g, S_DEPTH]
                ph[par, me, H_CAPH] = sh[g, S_CAPH]
                ph[par, me, H_QCAP] = sh[g, S_QCAP]
                ph[par, me, H_CB] = sh[g, S_CBW]
                pb[par, me] = sh64[g, X_BASE]
                pn[par, me] = sh[g, S_C0]
                i = cuda.atomic.add(ctl, (phase, CTL_FIXED + (kst + 2) + stage), 1)
                pl[par, i] = me
                sh[g, S_PUB] = 1
            gsync()

        @dev
        def steal(ph, pn, pl, ctl, sh, g, gl, me, pprev, phase, kst, stage, idle_at):
            """Thief: find a victim with published candidates left, circularly from this
            worker's place in the publisher list (the whole group reads the counters at
            once), and take one: S_VIC and S_IDX name it for steal_node.  False when none
            is left (this worker is out of work for the stage)."""
            # final since the grid barrier: a plain load, not an atomic from every lane
            npub = relaxed_load(ctl, phase, CTL_FIXED + (kst + 2) + stage - 1)
            while True:
                if gl == 0:
                    sh[g, S_FOUND] = 0x7FFFFFFF
                    sh[g, S_GOT] = 0
                gsync()
                cur = sh[g, S_CUR]
                start = me % npub if npub > 0 else 0
                # one group-wide chunk of publishers at a time, up to the first with pieces
                # left (scanning them all made every steal cost O(publishers))
                for c0 in range(cur, npub, G):
                    off = c0 + gl
                    if off < npub:
                        w = pl[pprev, (start + off) % npub]
                        if relaxed_load(pn, pprev, w) > 0:
                            cuda.atomic.min(sh, (g, S_FOUND), I32(off))
                    gsync()
                    found = sh[g, S_FOUND]
                    gsync()
                    if found < npub:
                        break
                off = sh[g, S_FOUND]
                if gl == 0:
                    if off >= npub:
                        sh[g, S_CUR] = npub
                        out_of_work(ctl, phase, kst, stage, idle_at)
                    else:
                        w = pl[pprev, (start + off) % npub]
                        jx = cuda.atomic.sub(pn, (pprev, w), 1)
                        if jx >= 1:
                            # piece jx-1: pieces are numbered deepest level first, so the
                            # first thieves get the shallow levels' big subtrees
                            sh[g, S_VIC] = w
                            sh[g, S_IDX] = jx - 1
                            sh[g, S_GOT] = 1
                            sh[g, S_CUR] = off
                        else:
                            sh[g, S_CUR] = off + 1
                gsync()
                if off >= npub or sh[g, S_GOT] != 0:
                    break
            return sh[g, S_GOT] != 0

        @dev
        def piece_q_vertex(A, VR, vlv, oQ, oPARR, i, nqm, nafter, t):
            """noRS: the victim's vertex behind the stolen piece's t-th Q candidate: the
            level's Q, the victim's candidates after the piece's (other thieves try those:
            from here they count as processed), and below the victim's deepest level the
            vertex whose subtree the victim was in (it would have joined Q afterwards)."""
            if t < nqm:
                return A[VR + oQ + A[vlv + F_QS] + t]
            if t < nqm + nafter:
                return A[VR + oPARR + i + 1 + (t - nqm)]
            return A[vlv + F_X]

        @dev
        def steal_node(A, A64, prm, ph, pb, sh, sh64, shu, g, gl, R, pprev, aw, adjU, offV,
                       adjV, orig, cand_left, err):
            """Run the stolen node: victim S_VIC's level m, candidate i (flattened index
            S_IDX), branched on with the candidates before it as its P.  Everything is read
            from the victim's arena half (untouched during this stage): L' = N(x) ∩ L_m,
            each candidate counted against L', absorbed ones join R', and only the partial
            ones are copied, with only their L' entries: they become this worker's task at
            level 0 (L = L').  Returns (bicliques, fingerprint, 1)."""
            w = sh[g, S_VIC]
            ti = sh[g, S_IDX]
            VR = I64(pprev) * prm[P_HALF] + I64(w) * I64(aw)
            d = ph[pprev, w, H_D]
            offsets_to_shared(sh, g, gl, d, ph[pprev, w, H_NB], ph[pprev, w, H_TB],
                              ph[pprev, w, H_DEPTH], ph[pprev, w, H_CAPH], ph[pprev, w, H_QCAP],
                              ph[pprev, w, H_CB])
            base = pb[pprev, w]
            if gl == 0:
                sh64[g, X_R] = R
                sh64[g, X_BASE] = base
                sh[g, S_TOT] = 0
                sh[g, S_N] = 0
                sh[g, S_NABS] = 0
                sh[g, S_NONMAX] = 0
                sh[g, S_NQ] = 0
                shu[g, U_SUML] = ZERO64
                shu[g, U_SUMA] = ZERO64
            gsync()
            oSG = sh[g, S_OFF + K_SG]
            oSO = sh[g, S_OFF + K_SO]
            oSL = sh[g, S_OFF + K_SL]
            oKEY = sh[g, S_OFF + K_KEY]
            oTAG = sh[g, S_OFF + K_TAG]
            oLST = sh[g, S_OFF + K_LST]
            oPARR = sh[g, S_OFF + K_PARR]
            oAUX = sh[g, S_OFF + K_AUX]
            oDL = sh[g, S_OFF + K_DL]
            oLV = sh[g, S_OFF + K_LV]
            oQ = sh[g, S_OFF + K_Q]
            # which level, which candidate
            m = ph[pprev, w, H_NLEV]
            while ti >= A[VR + oLV + m * NF + F_PC]:
                ti -= A[VR + oLV + m * NF + F_PC]
                m -= 1
            vlv = VR + oLV + m * NF
            nid = A[vlv + F_NID]
            klm = A[vlv + F_KL]
            lslot = A[vlv + F_LSLOT]
            pcm = A[vlv + F_PC]
            x = A[VR + oPARR + ti]
            kx = level_key(A, VR, x, m, nid, oKEY, oTAG, oSO, oSL, oLST, oDL, False)
            ox = VR + oLST + A[VR + oSO + x]
            # membership: 0 for L_m, 1 for L' (victim lists only hold L_m entries)
            if m == 0:
                for jj in range(gl, d, G):
                    A[R + oDL + jj] = 0
            else:
                lo = VR + oLST + A[VR + oSO + lslot]
                for e in range(gl, klm, G):
                    A[R + oDL + A[lo + e]] = 0
            gsync()
            sl = ZERO64
            for e in range(gl, kx, G):
                jj = A[ox + e]
                A[R + oDL + jj] = 1
                sl += elem_v(adjU[base + jj], cand_left)
            cuda.atomic.add(shu, (g, U_SUML), sl)
            gsync()
            # the candidates before x: counts against L'; partial ones get a slot
            sa = ZERO64
            for t in range(gl, ti, G):
                u = A[VR + oPARR + t]
                k = level_key(A, VR, u, m, nid, oKEY, oTAG, oSO, oSL, oLST, oDL, False)
                o = VR + oLST + A[VR + oSO + u]
                c = I32(0)
                for e in range(k):
                    if A[R + oDL + A[o + e]] == 1:
                        c += 1
                s = I32(-1)
                if c == kx:
                    sa += elem_u(orig[A[VR + oSG + u]], cand_left)
                    cuda.atomic.add(sh, (g, S_NABS), 1)
                elif c > 0:
                    s = cuda.atomic.add(sh, (g, S_N), 1)
                    A[R + oSG + s] = A[VR + oSG + u]
                    A[R + oSL + s] = c
                    A[R + oSO + s] = cuda.atomic.add(sh, (g, S_TOT), c)
                A[R + oAUX + t] = s
            cuda.atomic.add(shu, (g, U_SUMA), sa)
            nqm = I32(0)
            nafter = I32(0)
            nq = I32(0)
            if not RS:
                nqm = A[vlv + F_QE] - A[vlv + F_QS]
                nafter = pcm - ti - 1
                nq = nqm + nafter
                if m < ph[pprev, w, H_NLEV] and A[vlv + F_X] >= 0:
                    nq += 1
            gsync()
            nP = sh[g, S_N]
            if not RS:
                # Q: members containing L' make the node non-maximal; partial ones -> Q'
                for t in range(gl, nq, G):
                    u = piece_q_vertex(A, VR, vlv, oQ, oPARR, ti, nqm, nafter, t)
                    o = VR + oLST + A[VR + oSO + u]
                    c = I32(0)
                    for e in range(A[VR + oSL + u]):
                        jj = A[o + e]
                        if A[VR + oDL + jj] >= m and A[R + oDL + jj] == 1:
                            c += 1
                    if c == kx:
                        sh[g, S_NONMAX] = 1
                    elif c > 0:
                        p = cuda.atomic.add(sh, (g, S_NQ), 1)
                        s = nP + p
                        A[R + oSG + s] = A[VR + oSG + u]
                        A[R + oSL + s] = c
                        A[R + oSO + s] = cuda.atomic.add(sh, (g, S_TOT), c)
                        A[R + oQ + p] = s
                        A[R + oAUX + ti + 1 + t] = s  # (past the P part of AUX)
                    else:
                        A[R + oAUX + ti + 1 + t] = -1
                gsync()
            nabs = sh[g, S_NABS]
            target = A[vlv + F_NX] + 1 + nabs
            if RS:
                check_maximality(A, adjU, offV, adjV, sh, g, gl, R, base, ox, kx, target)
                gsync()
            count = I64(0)
            fp = ZERO64
            nonmax = sh[g, S_NONMAX]
            sumR = A64[(vlv + F_SUM) >> 1] + elem_u(orig[A[VR + oSG + x]], cand_left) \
                + shu[g, U_SUMA]
            if nonmax == 0:
                if gl == 0:
                    count = I64(1)
                    fp = combine_sides(sumR, shu[g, U_SUML], cand_left)
            nQ = sh[g, S_NQ]
            if nonmax == 0 and nP > 0:
                # copy the L' entries of the partial candidates (and of Q')
                for t in range(gl, ti + (nq if not RS else 0), G):
                    if t < ti:
                        u = A[VR + oPARR + t]
                        s = A[R + oAUX + t]
                        k = level_key(A, VR, u, m, nid, oKEY, oTAG, oSO, oSL, oLST, oDL, False)
                        qfilter = False
                    else:
                        u = piece_q_vertex(A, VR, vlv, oQ, oPARR, ti, nqm, nafter, t - ti)
                        s = A[R + oAUX + ti + 1 + (t - ti)]
                        k = A[VR + oSL + u]
                        qfilter = True
                    if s >= 0:
                        src = VR + oLST + A[VR + oSO + u]
                        dst = R + oLST + A[R + oSO + s]
                        c = I32(0)
                        for e in range(k):
                            jj = A[src + e]
                            if A[R + oDL + jj] == 1 and (not qfilter or A[VR + oDL + jj] >= m):
                                A[dst + c] = jj
                                c += 1
                for s in range(gl, nP, G):
                    A[R + oPARR + s] = s
                    A[R + oKEY + s] = A[R + oSL + s]
                    A[R + oTAG + s] = 1
                gsync()
                for e in range(gl, kx, G):
                    A[R + oDL + A[ox + e]] = 0  # L' is this task's L at level 0
                if gl == 0:
                    lv = R + oLV
                    A[lv + F_PC] = nP
                    A[lv + F_KL] = kx
                    A[lv + F_LSLOT] = -1
                    A[lv + F_LASTMIN] = 1
                    A[lv + F_NID] = 1
                    A[lv + F_NX] = target
                    A[lv + F_X] = -1
                    A[lv + F_QS] = 0
                    A[lv + F_QE] = nQ
                    A64[(lv + F_SUM) >> 1] = sumR
                    sh64[g, X_NID] = 1
                    sh[g, S_LVL] = 0
            elif gl == 0:
                sh[g, S_LVL] = -1
            gsync()
            return count, fp, I64(1)

        # ------------------------------------------------------------ the search
        @dev
        def select_candidate(A, sh, sh64, g, gl, R, l, pc, nid, lastmin):
            """Position of the live candidate with the smallest |N(u) ∩ L_l| (ties: any).
            ES: cached keys, stop at a chunk holding the level's last minimum (keys of
            a level only grow); noES: every candidate recounted from its whole list."""
            oKEY = sh[g, S_OFF + K_KEY]
            oTAG = sh[g, S_OFF + K_TAG]
            oSO = sh[g, S_OFF + K_SO]
            oSL = sh[g, S_OFF + K_SL]
            oLST = sh[g, S_OFF + K_LST]
            oDL = sh[g, S_OFF + K_DL]
            oPARR = sh[g, S_OFF + K_PARR]
            if gl == 0:
                sh64[g, X_MIN] = BIG
            gsync()
            for c0 in range(0, pc, G):
                i = c0 + gl
                if i < pc:
                    u = A[R + oPARR + i]
                    if ES:
                        k = level_key(A, R, u, l, nid, oKEY, oTAG, oSO, oSL, oLST, oDL, True)
                    else:
                        o = R + oLST + A[R + oSO + u]
                        k = I32(0)
                        for e in range(A[R + oSL + u]):
                            if A[R + oDL + A[o + e]] >= l:
                                k += 1
                    cuda.atomic.min(sh64, (g, X_MIN), I64(k) * SHIFT + I64(i))
                gsync()
                best = sh64[g, X_MIN]
                gsync()
                if ES and best // SHIFT == lastmin:
                    break
            return sh64[g, X_MIN]

        @dev
        def build_lprime(A, sh, shu, g, gl, R, adjU, base, x, kl, lvl, cand_left):
            """L' = N(x) ∩ L: the prefix of x's list; stamp it as level lvl's L."""
            o = R + sh[g, S_OFF + K_LST] + A[R + sh[g, S_OFF + K_SO] + x]
            oDL = sh[g, S_OFF + K_DL]
            s = ZERO64
            for e in range(gl, kl, G):
                j = A[o + e]
                A[R + oDL + j] = lvl
                s += elem_v(adjU[base + j], cand_left)
            cuda.atomic.add(shu, (g, U_SUML), s)

        @dev
        def unstamp(A, sh, g, gl, R, x, kl, lvl):
            o = R + sh[g, S_OFF + K_LST] + A[R + sh[g, S_OFF + K_SO] + x]
            oDL = sh[g, S_OFF + K_DL]
            for e in range(gl, kl, G):
                A[R + oDL + A[o + e]] = lvl

        @dev
        def expand(A, sh, shu, g, gl, R, l, npc, nid, kl, orig, cand_left):
            """Maximal expansion: for every live candidate, |N(u) ∩ L'| by partitioning its
            level-l list prefix; full -> R' (and a twin of x, whose list equals L', leaves
            P); partial -> P'.  Counts land in AUX by position."""
            oKEY = sh[g, S_OFF + K_KEY]
            oTAG = sh[g, S_OFF + K_TAG]
            oSO = sh[g, S_OFF + K_SO]
            oSL = sh[g, S_OFF + K_SL]
            oLST = sh[g, S_OFF + K_LST]
            oDL = sh[g, S_OFF + K_DL]
            oPARR = sh[g, S_OFF + K_PARR]
            oAUX = sh[g, S_OFF + K_AUX]
            oSG = sh[g, S_OFF + K_SG]
            sa = ZERO64
            for i in range(gl, npc, G):
                u = A[R + oPARR + i]
                k = level_key(A, R, u, l, nid, oKEY, oTAG, oSO, oSL, oLST, oDL, True)
                c = partition_list(A, R, u, k, l + 1, oSO, oLST, oDL)
                if c == kl:
                    sa += elem_u(orig[A[R + oSG + u]], cand_left)
                    cuda.atomic.add(sh, (g, S_NABS), 1)
                    if k == kl:
                        cuda.atomic.add(sh, (g, S_NTW), 1)
                        c = -1  # twin
                elif c > 0:
                    cuda.atomic.add(sh, (g, S_NP), 1)
                A[R + oAUX + i] = c
            cuda.atomic.add(shu, (g, U_SUMA), sa)

        @dev
        def check_maximality(A, adjU, offV, adjV, sh, g, gl, R, base, o, kl, target):
            """Reverse scan: the vertices containing L' (local ids at A[o:o+kl]) are the
            intersection of the V-side lists of L'.  Start from the shortest list and
            intersect one list at a time; L' is maximal iff the running intersection comes
            down to |R'| (= target) vertices, which it holds in any case (ParMBE's closure
            test: it usually stops after a few lists).  Sets S_NONMAX."""
            oCB = R + sh[g, S_OFF + K_CB]
            half = (sh[g, S_CBW] - 2) // 2
            if gl == 0:
                sh[g, S_SURV] = 0
                sh[g, S_C0] = 0x7FFFFFFF
                sh[g, S_C1] = 0
                sh[g, S_R0] = 0
                sh[g, S_R1] = 0
                sh[g, S_R2] = 0
            gsync()
            best = I64(0x7FFFFFFFFFFFFFFF)
            for e in range(gl, kl, G):
                y = adjU[base + A[o + e]]
                dy = offV[y + 1] - offV[y]
                if dy < best:
                    best = dy
            cuda.atomic.min(sh, (g, S_C0), I32(best) if best < 0x7FFFFFFF else I32(0x7FFFFFFE))
            gsync()
            dmin = sh[g, S_C0]
            if dmin <= target:
                return
            for e in range(gl, kl, G):
                y = adjU[base + A[o + e]]
                if offV[y + 1] - offV[y] == dmin:
                    cuda.atomic.max(sh, (g, S_C1), I32(e + 1))
            gsync()
            estar = sh[g, S_C1] - 1
            ys = adjU[base + A[o + estar]]
            lo0 = offV[ys]
            if dmin <= half:
                for t in range(gl, dmin, G):
                    A[oCB + t] = adjV[lo0 + t]
                gsync()
                m = dmin
                cur = 0
                step = 0
                for e in range(kl):
                    if e == estar:
                        continue
                    # three rotating counters: one barrier per list
                    cslot = S_R0 + step % 3
                    if gl == 0:
                        sh[g, S_R0 + (step + 1) % 3] = 0
                    y = adjU[base + A[o + e]]
                    lo = offV[y]
                    hi = offV[y + 1]
                    src = oCB + cur * half
                    dst = oCB + (1 - cur) * half
                    for t in range(gl, m, G):
                        u = A[src + t]
                        if bsearch(adjV, lo, hi, u):
                            A[dst + cuda.atomic.add(sh, (g, cslot), 1)] = u
                    gsync()
                    m = sh[g, cslot]
                    cur = 1 - cur
                    step += 1
                    if m <= target:
                        break
                if gl == 0 and m > target:
                    sh[g, S_NONMAX] = 1
                return
            # every list of L' is longer than the buffer: test each vertex of the shortest
            # against all the others
            for t in range(gl, dmin, G):
                if sh[g, S_SURV] > target:
                    break
                u = adjV[lo0 + t]
                ok = True
                for e in range(kl):
                    if e != estar:
                        y = adjU[base + A[o + e]]
                        if not bsearch(adjV, offV[y], offV[y + 1], u):
                            ok = False
                            break
                if ok:
                    cuda.atomic.add(sh, (g, S_SURV), 1)
            gsync()
            if gl == 0 and sh[g, S_SURV] > target:
                sh[g, S_NONMAX] = 1

        @dev
        def check_q(A, sh, g, gl, R, l, kl, qs, qe, ntw, err):
            """noRS: scan Q directly; a member containing L' makes it non-maximal, members
            meeting L' form Q' (written after room for this node's twins)."""
            oSO = sh[g, S_OFF + K_SO]
            oSL = sh[g, S_OFF + K_SL]
            oLST = sh[g, S_OFF + K_LST]
            oDL = sh[g, S_OFF + K_DL]
            oQ = sh[g, S_OFF + K_Q]
            qcap = sh[g, S_QCAP]
            for i in range(qs + gl, qe, G):
                q = A[R + oQ + i]
                o = R + oLST + A[R + oSO + q]
                c = I32(0)
                for e in range(A[R + oSL + q]):
                    if A[R + oDL + A[o + e]] >= l + 1:
                        c += 1
                if c == kl:
                    sh[g, S_NONMAX] = 1
                elif c > 0:
                    p = cuda.atomic.add(sh, (g, S_NQ), 1)
                    if qe + ntw + p < qcap:
                        A[R + oQ + qe + ntw + p] = q
                    else:
                        err[0] = ERR_QCAP

        @dev
        def compact(A, sh, g, gl, R, npc, np_, ntw, kl, push, nid2):
            """Reorder the live candidates [0:npc): P' first when a child is pushed (their
            counts become the child's cached keys), twins last (they leave P: positions
            >= the new pc hold tried vertices)."""
            oPARR = sh[g, S_OFF + K_PARR]
            oAUX = sh[g, S_OFF + K_AUX]
            oAUX2 = sh[g, S_OFF + K_AUX2]
            oKEY = sh[g, S_OFF + K_KEY]
            oTAG = sh[g, S_OFF + K_TAG]
            if gl == 0:
                sh[g, S_C0] = 0
                sh[g, S_C1] = 0
                sh[g, S_C2] = 0
            gsync()
            nfront = np_ if push else 0
            nmid = npc - ntw - nfront
            for i in range(gl, npc, G):
                c = A[R + oAUX + i]
                u = A[R + oPARR + i]
                if c < 0:
                    p = nfront + nmid + cuda.atomic.add(sh, (g, S_C2), 1)
                elif push and c > 0 and c < kl:
                    p = cuda.atomic.add(sh, (g, S_C0), 1)
                    A[R + oKEY + u] = c
                    A[R + oTAG + u] = nid2
                else:
                    p = nfront + cuda.atomic.add(sh, (g, S_C1), 1)
                A[R + oAUX2 + p] = u
            gsync()
            for i in range(gl, npc, G):
                A[R + oPARR + i] = A[R + oAUX2 + i]
            gsync()

        @dev
        def search(A, A64, prm, adjU, offV, adjV, orig, ph, pb, pn, pl, ctl, sh, sh64, shu,
                   g, gl, me, par, phase, kst, stage, interruptible, cand_left, err, phl):
            """Depth-first search of the task in the arena (levels in the level table);
            returns (bicliques, fingerprint sum, nodes) of this worker's part."""
            R = sh64[g, X_R]
            base = sh64[g, X_BASE]
            oLV = sh[g, S_OFF + K_LV]
            oSO = sh[g, S_OFF + K_SO]
            oQ = sh[g, S_OFF + K_Q]
            oPARR = sh[g, S_OFF + K_PARR]
            oKEY = sh[g, S_OFF + K_KEY]
            oTAG = sh[g, S_OFF + K_TAG]
            oSG = sh[g, S_OFF + K_SG]
            count = I64(0)
            fp = ZERO64
            nodes = I64(0)
            t_last = I64(0)
            if INSTR and gl % WARP == 0:
                t_last = clock()
            while True:
                gsync()
                if gl == 0:
                    sh[g, S_NONMAX] = 0
                    sh[g, S_NP] = 0
                    sh[g, S_NTW] = 0
                    sh[g, S_NABS] = 0
                    sh[g, S_NQ] = 0
                    sh[g, S_STOP] = 0
                    shu[g, U_SUML] = ZERO64
                    shu[g, U_SUMA] = ZERO64
                    lv0 = sh[g, S_LVL]
                    eager = prm[P_EAGER]
                    # (test hook: eager >= 2 publishes only from level eager - 1 down)
                    if interruptible and sh[g, S_PUB] == 0 and lv0 >= 0 and (
                            eager < 2 or lv0 >= eager - 1):
                        sh[g, S_STOP] = relaxed_load(ctl, phase, CTL_FIXED + stage)
                gsync()
                l = sh[g, S_LVL]
                if l < 0:
                    break
                lv = R + oLV + l * NF
                pc = A[lv + F_PC]
                if pc == 0:
                    # level exhausted: back to the parent, whose L it shrank
                    if l > 0:
                        plv = lv - NF
                        xp = A[plv + F_X]
                        unstamp(A, sh, g, gl, R, xp, A[lv + F_KL], l - 1)
                        if gl == 0 and not RS:
                            qe = A[plv + F_QE]
                            if qe < sh[g, S_QCAP]:
                                A[R + oQ + qe] = xp
                                A[plv + F_QE] = qe + 1
                            else:
                                err[0] = ERR_QCAP
                    gsync()
                    if gl == 0:
                        sh[g, S_LVL] = l - 1
                    continue
                if sh[g, S_STOP] != 0:
                    publish(A, A64, ph, pb, pn, pl, ctl, sh, sh64, g, gl, l, me, par, phase,
                            kst, stage)
                    if gl == 0:
                        sh[g, S_LVL] = -1
                        if INSTR:
                            t = clock()
                            phl[PH_STEAL] += t - t_last
                            t_last = t
                    continue
                nid = A[lv + F_NID]
                # ---------- candidate selection ----------
                best = select_candidate(A, sh, sh64, g, gl, R, l, pc, nid, A[lv + F_LASTMIN])
                pos = I32(best & MASK32)
                kl = I32(best // SHIFT)
                if not ES and gl == 0:
                    # noES counted from whole lists: re-establish x's level prefix
                    level_key(A, R, A[R + oPARR + pos], l, nid, oKEY, oTAG, oSO,
                              sh[g, S_OFF + K_SL], sh[g, S_OFF + K_LST],
                              sh[g, S_OFF + K_DL], True)
                x = A[R + oPARR + pos]
                gsync()
                if gl == 0:
                    y = A[R + oPARR + pc - 1]
                    A[R + oPARR + pc - 1] = x
                    A[R + oPARR + pos] = y
                    A[lv + F_PC] = pc - 1
                    A[lv + F_X] = x
                    A[lv + F_LASTMIN] = kl
                    if INSTR:
                        t = clock()
                        phl[PH_SEL] += t - t_last
                        t_last = t
                npc = pc - 1
                nodes += 1
                gsync()
                # ---------- L' construction ----------
                build_lprime(A, sh, shu, g, gl, R, adjU, base, x, kl, l + 1, cand_left)
                gsync()
                if INSTR and gl % WARP == 0:
                    t = clock()
                    phl[PH_LPRIME] += t - t_last
                    t_last = t
                # ---------- maximal expansion: counts, R', P' ----------
                expand(A, sh, shu, g, gl, R, l, npc, nid, kl, orig, cand_left)
                gsync()
                if INSTR and gl % WARP == 0:
                    t = clock()
                    phl[PH_EXPAND] += t - t_last
                    t_last = t
                nabs = sh[g, S_NABS]
                ntw = sh[g, S_NTW]
                np_ = sh[g, S_NP]
                nx = A[lv + F_NX]
                # ---------- maximality checking ----------
                qs = I32(0)
                qe = I32(0)
                if RS:
                    check_maximality(A, adjU, offV, adjV, sh, g, gl, R, base,
                                     R + sh[g, S_OFF + K_LST] + A[R + oSO + x], kl,
                                     nx + 1 + nabs)
                else:
                    qs = A[lv + F_QS]
                    qe = A[lv + F_QE]
                    check_q(A, sh, g, gl, R, l, kl, qs, qe, ntw, err)
                gsync()
                nonmax = sh[g, S_NONMAX]
                if INSTR and gl % WARP == 0:
                    t = clock()
                    phl[PH_CHECK] += t - t_last
                    t_last = t
                push = nonmax == 0 and np_ > 0
                nid2 = I32(0)
                if push:
                    nid2n = sh64[g, X_NID] + 1
                    if nid2n > NID_MAX:
                        if gl == 0:
                            err[0] = ERR_NID
                        nid2n = NID_MAX
                    nid2 = I32(nid2n)
                if ntw > 0 or push:
                    compact(A, sh, g, gl, R, npc, np_, ntw, kl, push, nid2)
                    if gl == 0:
                        A[lv + F_PC] = npc - ntw
                if not RS and ntw > 0:
                    # the twins join Q (before this node's Q', which left them room)
                    for t2 in range(gl, ntw, G):
                        A[R + oQ + qe + t2] = A[R + oPARR + npc - ntw + t2]
                    if gl == 0:
                        A[lv + F_QE] = qe + ntw
                if nonmax == 0:
                    sumR = A64[(lv + F_SUM) >> 1] + elem_u(orig[A[R + oSG + x]], cand_left) \
                        + shu[g, U_SUMA]
                    if gl == 0:
                        count += 1
                        fp += combine_sides(sumR, shu[g, U_SUML], cand_left)
                    if push:
                        if gl == 0:
                            sh64[g, X_NID] = I64(nid2)
                            cl = lv + NF
                            A[cl + F_PC] = np_
                            A[cl + F_KL] = kl
                            A[cl + F_LSLOT] = x
                            A[cl + F_LASTMIN] = 1
                            A[cl + F_NID] = nid2
                            A[cl + F_NX] = nx + 1 + nabs
                            A[cl + F_X] = -1
                            if not RS:
                                A[cl + F_QS] = qe + ntw
                                A[cl + F_QE] = qe + ntw + sh[g, S_NQ]
                            A64[(cl + F_SUM) >> 1] = sumR
                            sh[g, S_LVL] = l + 1
                if not push:
                    unstamp(A, sh, g, gl, R, x, kl, l)
                    if gl == 0 and not RS:
                        qe2 = A[lv + F_QE]
                        if qe2 < sh[g, S_QCAP]:
                            A[R + oQ + qe2] = x
                            A[lv + F_QE] = qe2 + 1
                        else:
                            err[0] = ERR_QCAP
                if INSTR and gl % WARP == 0:
                    t = clock()
                    phl[PH_EXPAND] += t - t_last
                    t_last = t
            if INSTR and gl % WARP == 0:
                t = clock()
                phl[PH_OTHER] += t - t_last
            return count, fp, nodes

        # ------------------------------------------------------------ one phase
        @dev
        def run_stage(A, A64, prm, offU, adjU, offV, adjV, orig, tasks, ph, pb, pn, pl, ctl,
                      sh, sh64, shu, g, gl, me, phase, stage, nst, aw, nwk, task0, ntask, err,
                      phl, acc, accf):
            """One stage of one worker: take tasks (stage 1) or stolen pieces until none
            is left; acc collects bicliques, nodes and tasks, accf the fingerprint."""
            kst = prm[P_K]
            cand_left = prm[P_CANDLEFT] != 0
            eager = prm[P_EAGER]
            par = stage % 2
            pprev = (stage + 1) % 2
            R = I64(par) * prm[P_HALF] + I64(me) * I64(aw)
            interruptible = WS and stage < nst
            # workers that must run out of work before the busy ones publish theirs
            idle_at = max(I64(1), (prm[P_IDLE] * I64(nwk)) // 1000)
            if gl == 0:
                sh[g, S_PUB] = 0
                sh[g, S_CUR] = 0
            gsync()
            t_last = I64(0)
            if INSTR and gl % WARP == 0:
                t_last = clock()
            while True:
                # First-level tasks first, in every stage: a stage normally starts with none
                # left (the stop signal is raised once the last one is taken), but the test
                # switch ``eager`` raises it early, and the tasks left over must still run.
                if gl == 0:
                    r = I32(0x7FFFFFFF)
                    if stage == 1 or relaxed_load(ctl, phase, C_TASK) < ntask:
                        r = cuda.atomic.add(ctl, (phase, C_TASK), 1)
                    if WS and stage == 1 and eager != 0:
                        cuda.atomic.max(ctl, (phase, CTL_FIXED + 1), 1)
                    if WS and stage == 1 and r >= ntask:
                        out_of_work(ctl, phase, kst, 1, idle_at)
                    sh[g, S_GOT] = 1 if r < ntask else 0
                    sh[g, S_IDX] = r
                gsync()
                if sh[g, S_GOT] != 0:
                    v = tasks[task0 + sh[g, S_IDX]]
                    c0 = fetch_task(A, A64, prm, offU, adjU, offV, adjV, orig, sh, sh64, shu,
                                    g, gl, v, R, aw, cand_left, err)
                    if gl == 0 and c0 > 0:
                        acc[0] += 1
                        accf[0] += combine_sides(A64[(R + sh[g, S_OFF + K_LV] + F_SUM) >> 1],
                                                 shu[g, U_SUML], cand_left)
                    if INSTR and gl % WARP == 0:
                        t = clock()
                        phl[PH_FETCH] += t - t_last
                        t_last = t
                    if c0 == 0:
                        continue
                else:
                    if stage == 1:
                        break
                    if not steal(ph, pn, pl, ctl, sh, g, gl, me, pprev, phase, kst, stage,
                                 idle_at):
                        break
                    c, f, nn = steal_node(A, A64, prm, ph, pb, sh, sh64, shu, g, gl, R, pprev,
                                          aw, adjU, offV, adjV, orig, cand_left, err)
                    if gl == 0:
                        acc[0] += c
                        accf[0] += f
                        acc[1] += nn
                    if INSTR and gl % WARP == 0:
                        t = clock()
                        phl[PH_STEAL] += t - t_last
                        t_last = t
                if gl == 0:
                    acc[2] += 1
                c, f, nn = search(A, A64, prm, adjU, offV, adjV, orig, ph, pb, pn, pl, ctl,
                                  sh, sh64, shu, g, gl, me, par, phase, kst, stage,
                                  interruptible, cand_left, err, phl)
                if INSTR and gl % WARP == 0:
                    t_last = clock()
                if gl == 0:
                    acc[0] += c
                    accf[0] += f
                    acc[1] += nn
                if sh[g, S_PUB] != 0:
                    break

        return run_stage

    run_stage_warp = group_fns(MODE_WARP)
    run_stage_block = group_fns(MODE_BLOCK)

    @dev
    def grid_barrier(lane, phl):
        """All threads of the grid; a block's warps come from loops of their own."""
        t = I64(0)
        block_sync()
        if INSTR and lane == 0:
            t = clock()
        wsync()
        cuda.cg.this_grid().sync()
        if INSTR and lane == 0:
            phl[PH_IDLE] += clock() - t

    @dev
    def published(ctl, phase, kst, stage, sh, tid):
        """Did any worker publish in ``stage``?  The same answer in every block: all
        publishing precedes the grid barrier before it is read."""
        if tid == 0:
            sh[NW, S_DONE] = cuda.atomic.add(ctl, (phase, CTL_FIXED + (kst + 2) + stage), 0)
        block_sync()
        return sh[NW, S_DONE] != 0

    def kernel(offU, adjU, offV, adjV, orig, tasks, prm, arena, arena64, ctl, pool_hdr,
               pool_base, pool_n, pool_list, res, res_fp, err, ph_out, tasks_out):
        b = cuda.blockIdx.x
        nb = cuda.gridDim.x
        tid = cuda.threadIdx.x
        warp = tid // WARP
        lane = tid % WARP
        sh = cuda.shared.array((NG, NS), dtype=np.int32)
        sh64 = cuda.shared.array((NG, NS64), dtype=np.int64)
        shu = cuda.shared.array((NG, NSU), dtype=np.uint64)
        phl = cuda.local.array(NPH, dtype=np.int64)
        acc = cuda.local.array(3, dtype=np.int64)  # bicliques, nodes, tasks
        accf = cuda.local.array(1, dtype=np.uint64)
        for i in range(NPH):
            phl[i] = 0
        for i in range(3):
            acc[i] = 0
        accf[0] = ZERO64
        for i in range(tid, NG * NS, THREADS):
            sh[i // NS, i % NS] = 0
        kst = prm[P_K]
        aw = prm[P_AW]
        nwk = prm[P_NWK]
        nt0 = prm[P_NT0]
        nt1 = prm[P_NT1]
        nst = kst if WS else 1
        t_start = I64(0)
        if INSTR and lane == 0:
            t_start = clock()
        bsync()
        me = b * NW + warp
        # phase 0: the tasks too big for a warp, one block each (its warps' arenas joined),
        # blocks stealing from blocks; phase 1: every other task, one warp each
        for phase in range(2):
            if phase == 0 and nt0 == 0:
                continue
            nstp = nst
            for stage in range(1, nstp + 1):
                if stage > 1:
                    grid_barrier(lane, phl)
                    if not published(ctl, phase, kst, stage - 1, sh, tid):
                        break  # nothing is left anywhere: every block leaves together
                if phase == 0:
                    run_stage_block(arena, arena64, prm, offU, adjU, offV, adjV, orig, tasks,
                                    pool_hdr, pool_base, pool_n, pool_list, ctl, sh, sh64, shu,
                                    NW, tid, b, 0, stage, nstp, aw * NW, nb, 0, nt0, err, phl,
                                    acc, accf)
                else:
                    run_stage_warp(arena, arena64, prm, offU, adjU, offV, adjV, orig, tasks,
                                   pool_hdr, pool_base, pool_n, pool_list, ctl, sh, sh64, shu,
                                   warp, lane, me, 1, stage, nst, aw, nwk, nt0, nt1, err, phl,
                                   acc, accf)
                bsync()
            if phase == 0:
                if tid == 0:
                    cuda.atomic.add(res, 3, acc[2])
                grid_barrier(lane, phl)  # the warps reuse the blocks' arenas
        if lane == 0:
            cuda.atomic.add(res, 0, acc[0])
            cuda.atomic.add(res_fp, 0, accf[0])
            cuda.atomic.add(res, 1, acc[1])
            cuda.atomic.add(res, 2, acc[2])
            if INSTR:
                t = clock()
                wk = b * NW + warp
                for i in range(NPH):
                    ph_out[wk, i] = phl[i]
                ph_out[wk, NPH] = t - t_start
                tasks_out[wk] = acc[2]

    kern = keyed(cuda.jit(**jit_kw)(kernel))
    _CACHE[key] = kern
    return kern


KERNEL_ARGS = ("offU", "adjU", "offV", "adjV", "orig", "tasks", "prm", "arena", "arena64", "ctl",
               "pool_hdr", "pool_base", "pool_n", "pool_list", "res", "res_fp", "err", "ph_out",
               "tasks_out")
