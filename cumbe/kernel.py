"""The cuMBE kernel (Numba CUDA), one source for every variant.

One cooperative kernel enumerates all maximal bicliques.  Notation (paper §II):
candidates P, R and the processed set Q are vertices of the *candidate side* U;
L is a subset of the other side V.  A thread block owns one search stack:

* compact arrays with lookup tables: ``Larr/posL`` (V), ``Parr/posP`` and
  ``Rarr/posR`` (U), each a vertex array plus a position table, so membership is
  ``0 <= pos[u] < len and arr[pos[u]] == u`` (O(1), no initialisation needed);
  every recursion level is a prefix ``arr[0:len_l]`` with ``len_l`` kept in the
  per-level table ``lv`` (nested prefixes: a child only permutes inside its
  parent's prefix, so the parent's set survives), nothing is allocated while
  enumerating;
* Q is implicit in the reverse-scanning variants: a vertex of U that is neither
  in P nor in R is either processed (a real Q member) or was dropped because it
  has no neighbour in some ancestor L, hence none in the current L' either, so it
  can never make a biclique non-maximal.  The noRS variant scans Q directly and
  therefore keeps it explicitly, as a stack of filtered copies (``Qstack``, bounded
  by ``qcap``; overflow is reported, never ignored);
* coarse-grained tasks: a task is one vertex x of the global candidate array
  ``gP`` (taken from its end with an atomic counter); its P is ``gP[0:r-1]``
  and its Q ``gP[r:]`` (membership through ``gpos``, nothing is copied);
* k-level work stealing in rounds ("stages"): stage 1 runs the first-level tasks;
  once they are gone (``stop[1]``) every block that is inside a task publishes the
  rest of its level-1 candidates (with L and R) into its pool at its next level-1
  loop boundary and leaves the task; ``grid.sync()``; in stage 2 blocks steal
  level-2 tasks from the pools, circularly starting at their own; ... up to stage
  k, which runs to completion.  Every block executes the same k-1 grid syncs, so
  the scheme cannot deadlock; pools are double-buffered by stage parity.

Variants are compile-time constants of the closure (``build``): RS (reverse
scanning), ES (early-stop candidate selection), WS (work stealing), INSTR
(clock64 phase timers).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from mbebench import fingerprint as _fpmod

from numba.cuda import config as _cfg

SIM = bool(_cfg.ENABLE_CUDASIM)

_fp = _fpmod.compile_with(cuda.jit(device=True))
left_elem = _fp.left_elem
right_elem = _fp.right_elem
combine_sides = _fp.combine_sides

# phases (index into the per-block phase table)
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
NPH = 8  # slot 7: grid-sync wait (idle)

# per-level int32 fields
F_LENL, F_PC, F_RLEN, F_LASTMIN, F_X, F_QS, F_QE, F_NID = range(8)
NF = 8
# pool int32 fields
PI_NLEV, PI_NQ = range(2)
NPI = 4
# pool level-table fields (int32; the level's L/R sums go to poolLs)
PL_PC, PL_LENL, PL_RLEN = range(3)
NPL = 3
# error codes (err[0])
ERR_QCAP = 1

if SIM:
    import time as _time

    def clock64():  # simulator: wall clock in ns stands in for cycles
        return np.int64(_time.perf_counter_ns())

    def bsync():
        cuda.syncthreads()

    def wsync():
        pass

else:
    from llvmlite import ir
    from numba.cuda import types as _types
    from numba.cuda.extending import intrinsic
    from numba.cuda.typing import signature as _signature

    @intrinsic
    def clock64(typingctx):
        """The SM's 64-bit cycle counter (PTX %clock64); numba-cuda 0.30.4 has no
        cuda.clock64, so this is inline PTX."""
        sig = _signature(_types.int64)

        def codegen(context, builder, sig, args):
            fnty = ir.FunctionType(ir.IntType(64), [])
            asm = ir.InlineAsm(fnty, "mov.u64 $0, %clock64;", "=l", side_effect=True)
            return builder.call(asm, [])

        return sig, codegen

    @intrinsic
    def bsync(typingctx):
        """Block barrier that tolerates warps arriving diverged (PTX ``barrier.sync``
        without ``.aligned``).  ``cuda.syncthreads()`` is ``bar.sync`` = the aligned
        form, which requires converged warps; numba's control flow around our
        thread-0-only sections does not guarantee that (compute-sanitizer synccheck:
        "Divergent thread(s) in warp", then CUDA_ERROR_ILLEGAL_INSTRUCTION)."""
        sig = _signature(_types.void)

        def codegen(context, builder, sig, args):
            fnty = ir.FunctionType(ir.VoidType(), [])
            asm = ir.InlineAsm(fnty, "barrier.sync 0;", "~{memory}", side_effect=True)
            builder.call(asm, [])
            return context.get_dummy_value()

        return sig, codegen

    def _wsync_impl():
        cuda.syncwarp(0xFFFFFFFF)

    wsync = cuda.jit(device=True, forceinline=True)(_wsync_impl)


_CACHE: dict = {}
MAX_THREADS = 512  # launch bound: the register budget assumes at most this many threads


def build(rs=True, es=True, ws=True, instr=False, g=32, sg=8, cache=True):
    """The kernel for one variant (memoised).  g: lanes per group in the scans;
    sg: lanes per candidate in candidate selection."""
    key = (bool(rs), bool(es), bool(ws), bool(instr), int(g), int(sg))
    if key in _CACHE:
        return _CACHE[key]
    RS, ES, WS, INSTR, G, SG = key
    I32 = np.int32
    I64 = np.int64
    U64 = np.uint64
    INF32 = 0x7FFFFFFF
    BIGKEY = np.int64(0x7FFFFFFFFFFFFFFF)
    ZERO64 = np.uint64(0)
    MASK32 = np.int64(0xFFFFFFFF)
    import os as _os

    # scan N(v) when deg(v) <= BSF*|L|, else binary-search v in N(w) for w in L
    BSF = int(_os.environ.get("CUMBE_BSF", "4"))
    SHIFT = np.int64(1 << 32)

    # shared scalar slots
    S_LVL, S_X0, S_PEND, S_CTX, S_LIM, S_VIC, S_TASK, S_KL = 0, 1, 2, 3, 4, 5, 6, 7
    S_NT, S_NFULL, S_NPART, S_NONMAX, S_NA, S_NB, S_NA2, S_NB2 = 8, 9, 10, 11, 12, 13, 14, 15
    S_NQ, S_STOP, S_LENL0, S_RLEN0, S_TOT, S_NQ0, S_CUR, S_GOTTASK = 16, 17, 18, 19, 20, 21, 22, 23
    S_PUB, S_MISS, S_FOFF, S_NNE, S_PUBN = 24, 25, 26, 27, 28
    NID_MAX = np.int64(0x7FFFFFFF)
    NS = 32

    jit_kw = {}
    if not SIM:
        import os

        jit_kw["cache"] = bool(cache)
        jit_kw["launch_bounds"] = (MAX_THREADS, int(os.environ.get("CUMBE_MIN_BLOCKS", "2")))
        if os.environ.get("CUMBE_LINEINFO"):
            jit_kw["lineinfo"] = True
    dev = cuda.jit(device=True, **({} if SIM else {"forceinline": True}))

    @dev
    def elem_u(u, cand_left):
        if cand_left:
            return left_elem(u)
        return right_elem(u)

    @dev
    def elem_v(v, cand_left):
        if cand_left:
            return right_elem(v)
        return left_elem(v)

    @dev
    def in_set(arr, pos, b, u, n):
        p = pos[b, u]
        if p >= 0 and p < n:
            return arr[b, p] == u
        return False

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
    def swap_positions(arr, pos, b, at_a, at_b, n, tid, nt):
        """Swap arr[at_a[j]] with arr[at_b[j]] for j < n, keeping pos in step: the
        in-place partition that moves a child's set to the front of its parent's prefix."""
        for j in range(tid, n, nt):
            pa = at_a[b, j]
            pb = at_b[b, j]
            wa = arr[b, pa]
            wb = arr[b, pb]
            arr[b, pa] = wb
            pos[b, wb] = pa
            arr[b, pb] = wa
            pos[b, wa] = pb

    @dev
    def copy_in(arr, pos, b, src, n, tid, nt):
        """arr[0:n] = src[0:n] with the position table (a stolen task's L or R)."""
        for i in range(tid, n, nt):
            w = src[i]
            arr[b, i] = w
            pos[b, w] = i

    @dev
    def count_in_l(offU, adjU, offV, adjV, Larr, posL, b, lenl, v, slane, slot, row, sw):
        """Add this lane's share of |N(v) & L| to slot[row, sw]: scan N(v) when v has few
        neighbours, else binary-search v in N(w) for w in L.  Always the full count: it
        is cached as the candidate's key for the rest of the level."""
        if offU[v + 1] - offU[v] <= BSF * lenl:
            for e in range(offU[v] + slane, offU[v + 1], SG):
                if in_set(Larr, posL, b, adjU[e], lenl):
                    cuda.atomic.add(slot, (row, sw), 1)
        else:
            for t2 in range(slane, lenl, SG):
                w = Larr[b, t2]
                if bsearch(adjV, offV[w], offV[w + 1], v):
                    cuda.atomic.add(slot, (row, sw), 1)

    @dev
    def in_pool(poolP, poolPos, buf, v, u, n):
        p = poolPos[buf, v, u]
        if p >= 0 and p < n:
            return poolP[buf, v, p] == u
        return False

    def kernel(
        offU, adjU, offV, adjV, gP, gpos, nG, nU, nV, cand_left, kstages, qcap,
        Larr, posL, markL, Parr, posP, Rarr, posR, cnt, touched, keyTag,
        auxA, auxB, auxC, auxD, Qstack, lv, lvs,
        poolP, poolPos, poolL, poolR, poolQ, poolN, poolI, poolLv, poolLs,
        gcount, stop, pubcnt, res_count, res_fp, err, ph_out, tasks_out, eager,
    ):
        b = cuda.blockIdx.x
        nb = cuda.gridDim.x
        tid = cuda.threadIdx.x
        nt = cuda.blockDim.x
        warp = tid // G
        lane = tid % G
        ngr = nt // G
        swarp = tid // SG
        slane = tid % SG
        nsg = nt // SG

        shi = cuda.shared.array(NS, dtype=np.int32)
        shl = cuda.shared.array(2, dtype=np.int64)
        shu = cuda.shared.array(4, dtype=np.uint64)
        slot = cuda.shared.array((2, 1024), dtype=np.int32)
        phl = cuda.local.array(NPH, dtype=np.int64)

        for i in range(tid, 2 * 1024, nt):
            slot[i // 1024, i % 1024] = 0
        if tid < NS:
            shi[tid] = 0
        if tid == 0:
            shl[0] = BIGKEY
            shl[1] = 0
            shu[0] = ZERO64
            shu[1] = ZERO64
            shu[2] = ZERO64
            shu[3] = ZERO64
        my_count = np.int64(0)
        my_fp = ZERO64
        my_tasks = np.int64(0)
        my_nodes = np.int64(0)
        t_last = np.int64(0)
        t_start = np.int64(0)
        if INSTR:
            for i in range(NPH):
                phl[i] = 0
            if tid == 0:
                t_start = clock64()
                t_last = t_start
        bsync()

        nstages = kstages if WS else 1
        for stage in range(1, nstages + 1):
            if WS and stage > 1:
                if INSTR and tid == 0:
                    t = clock64()
                    phl[PH_OTHER] += t - t_last
                    t_last = t
                bsync()
                wsync()
                cuda.cg.this_grid().sync()
                if INSTR and tid == 0:
                    t = clock64()
                    phl[7] += t - t_last
                    t_last = t
                if tid == 0:
                    # its own slot: S_PUB is reset below while slow threads may still read this
                    shi[S_PUBN] = cuda.atomic.add(pubcnt, stage - 1, 0)
                bsync()
                # Nobody published in the last stage: nothing is left anywhere.  Every block
                # reads the same count (all publishing precedes the grid sync), so all leave
                # together and no grid sync is left waiting (23 empty stages cost the small
                # graphs ~0.6 ms at 1056 blocks).
                if shi[S_PUBN] == 0:
                    break
            if tid == 0:
                shi[S_CUR] = 0
                shi[S_PUB] = 0
            bsync()
            interruptible = WS and stage < nstages
            buf = stage % 2
            nbuf = (stage + 1) % 2
            while True:
                # ---------------- fetch a task ----------------
                if tid == 0:
                    shi[S_GOTTASK] = 0
                    if stage == 1:
                        r = cuda.atomic.sub(gcount, 0, 1)
                        if WS and (r <= 1 or eager != 0):
                            # the first-level pool is (now) empty: raise the level
                            cuda.atomic.max(stop, 1, 1)
                        if r >= 1:
                            shi[S_GOTTASK] = 1
                            shi[S_CTX] = 0
                            shi[S_LIM] = r - 1
                            shi[S_X0] = gP[r - 1]
                            shi[S_LENL0] = 0
                            shi[S_RLEN0] = 0
                            shu[2] = ZERO64
                            shu[3] = ZERO64
                if stage > 1:
                    # Find a pool with tasks left, circularly from our own.  The whole block
                    # reads the counters at once: thread 0 trying one pool after another (one
                    # atomic round trip each) made every stage cost ~0.25 ms at 528 blocks.
                    # Atomic reads because the counters change under other SMs' L1 caches.
                    while True:
                        if tid == 0:
                            shi[S_FOFF] = INF32
                            shi[S_NNE] = 0
                        bsync()
                        cur = shi[S_CUR]
                        for off in range(cur + tid, nb, nt):
                            if cuda.atomic.add(poolN, (buf, (b + off) % nb), 0) > 0:
                                cuda.atomic.min(shi, S_FOFF, off)
                                cuda.atomic.add(shi, S_NNE, 1)
                        bsync()
                        off = shi[S_FOFF]
                        if tid == 0:
                            if off >= nb:
                                shi[S_CUR] = nb
                                cuda.atomic.max(stop, stage, 1)
                            else:
                                v = (b + off) % nb
                                j = cuda.atomic.sub(poolN, (buf, v), 1)
                                if (j == 1 and shi[S_NNE] == 1) or eager != 0:
                                    # took what looked like the last task anywhere
                                    cuda.atomic.max(stop, stage, 1)
                                if j >= 1:
                                    # task j-1 of the victim's flattened levels: the deepest
                                    # level's candidates first, level 1's last, so that the
                                    # big shallow subtrees are taken first (from the end)
                                    ti = j - 1
                                    m = poolI[buf, v, PI_NLEV]
                                    while ti >= poolLv[buf, v, m, PL_PC]:
                                        ti -= poolLv[buf, v, m, PL_PC]
                                        m -= 1
                                    shi[S_GOTTASK] = 1
                                    shi[S_CTX] = 1
                                    shi[S_VIC] = v
                                    shi[S_LIM] = ti
                                    shi[S_X0] = poolP[buf, v, ti]
                                    shi[S_LENL0] = poolLv[buf, v, m, PL_LENL]
                                    shi[S_RLEN0] = poolLv[buf, v, m, PL_RLEN]
                                    shi[S_NQ0] = poolI[buf, v, PI_NQ]
                                    shi[S_TOT] = poolLv[buf, v, m, PL_PC]
                                    shu[2] = poolLs[buf, v, m, 0]
                                    shu[3] = poolLs[buf, v, m, 1]
                                    shi[S_CUR] = off
                                else:
                                    shi[S_CUR] = off + 1
                        bsync()
                        if off >= nb or shi[S_GOTTASK] != 0:
                            break
                bsync()
                if shi[S_GOTTASK] == 0:
                    break
                ctx = shi[S_CTX]
                vic = shi[S_VIC]
                lim = shi[S_LIM]
                x0 = shi[S_X0]
                lenl0 = shi[S_LENL0]
                rlen0 = shi[S_RLEN0]
                nq0 = shi[S_NQ0]
                tot0 = shi[S_TOT]
                sumL0 = shu[2]
                sumR0 = shu[3]
                my_tasks += 1
                if ctx == 1:
                    # stolen task: copy the victim's L and R into our compact arrays
                    copy_in(Larr, posL, b, poolL[buf, vic], lenl0, tid, nt)
                    copy_in(Rarr, posR, b, poolR[buf, vic], rlen0, tid, nt)
                bsync()
                if tid == 0:
                    shi[S_LVL] = 0
                    shi[S_PEND] = 1
                    if INSTR:
                        t = clock64()
                        if stage == 1:
                            phl[PH_FETCH] += t - t_last
                        else:
                            phl[PH_STEAL] += t - t_last
                        t_last = t

                # ---------------- depth-first search of this task ----------------
                while True:
                    bsync()
                    if tid == 0:
                        for si in range(S_NT, S_NQ + 1):
                            shi[si] = 0
                        shi[S_KL] = 0
                        shi[S_STOP] = 0
                        if interruptible and shi[S_PUB] == 0:
                            # read here, before the barrier every node pays anyway
                            shi[S_STOP] = cuda.atomic.max(stop, stage, 0)
                        shi[S_MISS] = 0
                        shl[0] = BIGKEY
                        shu[0] = ZERO64
                        shu[1] = ZERO64
                    l = shi[S_LVL]
                    pend = shi[S_PEND]
                    bsync()
                    if l < 0:
                        break
                    x = I32(0)
                    kL = I32(0)
                    if l == 0:
                        if pend == 0:
                            if tid == 0:
                                shi[S_LVL] = -1
                            continue
                        x = x0
                        if tid == 0:
                            shi[S_PEND] = 0
                            Rarr[b, rlen0] = x  # R' = R + {x}, as in the pop below
                            posR[b, x] = rlen0
                        lenl = lenl0
                        rl = rlen0
                        sumL = sumL0
                        sumR = sumR0
                        pc = I32(0)
                    else:
                        pc = lv[b, l, F_PC]
                        if pc == 0:
                            if tid == 0:
                                shi[S_LVL] = l - 1
                                if (not RS) and l - 1 >= 1:
                                    qe = lv[b, l - 1, F_QE]
                                    if qe < qcap:
                                        Qstack[b, qe] = lv[b, l - 1, F_X]
                                        lv[b, l - 1, F_QE] = qe + 1
                                    else:
                                        err[0] = ERR_QCAP
                            continue
                        # (test hook: eager >= 2 publishes only from level eager down)
                        if shi[S_STOP] != 0 and ((RS and l >= eager) or (not RS and l == 1)):
                            # Victim: publish all the work left on our path and leave the task.
                            # Each level m <= l keeps its remaining candidates in Parr[0:pc_m], its
                            # L in Larr[0:lenl_m] and R in Rarr[0:rlen_m] (nested prefixes), so one
                            # copy of Parr[0:pc_1], Larr[0:lenl_1], Rarr[0:rlen_l] plus the level
                            # table describes all of it; a thief of level m's candidate i takes
                            # P = positions < i, L and R prefixes of level m.  Publishing below
                            # level 1 means a stage ends after one node, not after a whole
                            # level-1 subtree (edit-nawiki: blocks idled at the grid sync most of
                            # the time).  noRS would need every level's explicit Q too: level 1 only.
                            pc1 = lv[b, 1, F_PC]
                            lenl1 = lv[b, 1, F_LENL]
                            rll = lv[b, l, F_RLEN]
                            for i in range(tid, pc1, nt):
                                u = Parr[b, i]
                                poolP[nbuf, b, i] = u
                                poolPos[nbuf, b, u] = i
                            for i in range(tid, lenl1, nt):
                                poolL[nbuf, b, i] = Larr[b, i]
                            for i in range(tid, rll, nt):
                                poolR[nbuf, b, i] = Rarr[b, i]
                            tot = I32(0)
                            for m in range(1 + tid, l + 1, nt):
                                pcm = lv[b, m, F_PC]
                                poolLv[nbuf, b, m, PL_PC] = pcm
                                poolLv[nbuf, b, m, PL_LENL] = lv[b, m, F_LENL]
                                poolLv[nbuf, b, m, PL_RLEN] = lv[b, m, F_RLEN]
                                poolLs[nbuf, b, m, 0] = lvs[b, m, 0]
                                poolLs[nbuf, b, m, 1] = lvs[b, m, 1]
                                tot += pcm
                            cuda.atomic.add(shi, S_NB, tot)
                            nq1 = I32(0)
                            if not RS:
                                qs1 = lv[b, 1, F_QS]
                                nq1 = lv[b, 1, F_QE] - qs1
                                for i in range(tid, nq1, nt):
                                    poolQ[nbuf, b, i] = Qstack[b, qs1 + i]
                            bsync()
                            if tid == 0:
                                poolI[nbuf, b, PI_NLEV] = l
                                poolI[nbuf, b, PI_NQ] = nq1
                                poolN[nbuf, b] = shi[S_NB]
                                cuda.atomic.add(pubcnt, stage, 1)
                                shi[S_LVL] = -1
                                shi[S_PUB] = 1
                                if INSTR:
                                    t = clock64()
                                    phl[PH_STEAL] += t - t_last
                                    t_last = t
                            continue
                        lenl = lv[b, l, F_LENL]
                        rl = lv[b, l, F_RLEN]
                        sumL = lvs[b, l, 0]
                        sumR = lvs[b, l, 1]
                        lastmin = lv[b, l, F_LASTMIN]
                        # ---------- candidate selection (smallest |N(v) & L|) ----------
                        curmin = I64(INF32)
                        if ES:
                            # L is fixed while a level lives, so a key computed once stays
                            # valid: the scan that made this level left every candidate's
                            # key in keyTag, tagged with the level's node id; only keys that
                            # a deeper level overwrote since are counted again (and cached).
                            nid = I64(lv[b, l, F_NID])
                            for i in range(tid, pc, nt):
                                u = Parr[b, i]
                                tg = keyTag[b, u]
                                if nid > 0 and (tg >> 32) == nid:
                                    cuda.atomic.min(shl, 0, (tg & MASK32) * SHIFT + I64(i))
                                else:
                                    j = cuda.atomic.add(shi, S_MISS, 1)
                                    auxA[b, j] = i
                            bsync()
                            curmin = shl[0] // SHIFT
                            nmiss = shi[S_MISS]
                            if curmin != lastmin:
                                nbat = (nmiss + nsg - 1) // nsg
                                for bi in range(nbat):
                                    row = bi % 2
                                    jj = bi * nsg + swarp
                                    i = I32(0)
                                    v = I32(0)
                                    if jj < nmiss:
                                        i = auxA[b, jj]
                                        v = Parr[b, i]
                                        count_in_l(offU, adjU, offV, adjV, Larr, posL, b, lenl, v,
                                                   slane, slot, row, swarp)
                                    bsync()
                                    if slane == 0 and jj < nmiss:
                                        c = I64(slot[row, swarp])
                                        slot[row, swarp] = 0
                                        if nid > 0:
                                            keyTag[b, v] = (nid << 32) | c
                                        if c <= curmin:
                                            cuda.atomic.min(shl, 0, c * SHIFT + I64(i))
                                    bsync()
                                    curmin = shl[0] // SHIFT
                                    if curmin == lastmin:
                                        break
                        else:
                            nbat = (pc + nsg - 1) // nsg
                            for bi in range(nbat):
                                row = bi % 2
                                i = bi * nsg + swarp
                                if i < pc:
                                    count_in_l(offU, adjU, offV, adjV, Larr, posL, b, lenl,
                                               Parr[b, i], slane, slot, row, swarp)
                                bsync()
                                if slane == 0 and i < pc:
                                    c = I64(slot[row, swarp])
                                    slot[row, swarp] = 0
                                    if c <= curmin:
                                        cuda.atomic.min(shl, 0, c * SHIFT + I64(i))
                                bsync()
                                curmin = shl[0] // SHIFT
                        best = shl[0]
                        pos = I32(best & MASK32)
                        kL = I32(best // SHIFT)
                        x = Parr[b, pos]
                        bsync()
                        if tid == 0:
                            # pop x: swap it behind the current P
                            y = Parr[b, pc - 1]
                            Parr[b, pc - 1] = x
                            posP[b, x] = pc - 1
                            Parr[b, pos] = y
                            posP[b, y] = pos
                            lv[b, l, F_PC] = pc - 1
                            lv[b, l, F_LASTMIN] = kL
                            lv[b, l, F_X] = x
                            # R' = R + {x}, written here so that the barriers of the L'
                            # construction publish it (one barrier less per node)
                            Rarr[b, rl] = x
                            posR[b, x] = rl
                        pc = pc - 1
                        if INSTR and tid == 0:
                            t = clock64()
                            phl[PH_SEL] += t - t_last
                            t_last = t
                    # ================= process node (level l, vertex x) =================
                    # ---------- L' construction ----------
                    dx0 = offU[x]
                    dx = I32(offU[x + 1] - dx0)
                    my_nodes += 1
                    if l == 0 and ctx == 0:
                        s = ZERO64
                        for i in range(tid, dx, nt):
                            w = adjU[dx0 + i]
                            Larr[b, i] = w
                            posL[b, w] = i
                            s += elem_v(w, cand_left)
                        cuda.atomic.add(shu, 0, s)
                        kL = dx
                        bsync()
                    else:
                        s = ZERO64
                        c = I32(0)
                        if dx <= BSF * lenl:
                            for i in range(tid, dx, nt):
                                w = adjU[dx0 + i]
                                if in_set(Larr, posL, b, w, lenl):
                                    markL[b, w] = 1
                                    s += elem_v(w, cand_left)
                                    c += 1
                        else:
                            for i in range(tid, lenl, nt):
                                w = Larr[b, i]
                                if bsearch(adjV, offV[w], offV[w + 1], x):
                                    markL[b, w] = 1
                                    s += elem_v(w, cand_left)
                                    c += 1
                        cuda.atomic.add(shu, 0, s)
                        cuda.atomic.add(shi, S_KL, I32(c))
                        bsync()
                        kL = shi[S_KL]
                        for i in range(tid, lenl, nt):
                            mk = markL[b, Larr[b, i]]
                            if i >= kL:
                                if mk != 0:
                                    j = cuda.atomic.add(shi, S_NB, 1)
                                    auxC[b, j] = i
                            elif mk == 0:
                                j = cuda.atomic.add(shi, S_NA, 1)
                                auxD[b, j] = i
                        bsync()
                        swap_positions(Larr, posL, b, auxD, auxC, shi[S_NB], tid, nt)
                        bsync()
                        for i in range(tid, kL, nt):
                            markL[b, Larr[b, i]] = 0
                    r1 = rl + 1  # R' = Rarr[0:r1], x written at the pop
                    sumLp = shu[0]
                    if INSTR and tid == 0:
                        t = clock64()
                        phl[PH_LPRIME] += t - t_last
                        t_last = t
                    # ---------- maximality checking / counting ----------
                    qbase = I32(0)
                    qs = I32(0)
                    nq = I32(0)
                    if l >= 1:
                        qbase = lv[b, l, F_QE] if not RS else I32(0)
                    if RS:
                        # reverse scanning: a group per vertex of L', lanes over its neighbours;
                        # a vertex outside P and R reaching |L'| proves non-maximality: stop early
                        for i in range(warp, kL, ngr):
                            if cuda.atomic.max(shi, S_NONMAX, 0) != 0:
                                break
                            v = Larr[b, i]
                            for e in range(offV[v] + lane, offV[v + 1], G):
                                u = adjV[e]
                                if not in_set(Rarr, posR, b, u, r1):
                                    old = cuda.atomic.add(cnt, (b, u), 1)
                                    if old == 0:
                                        j = cuda.atomic.add(shi, S_NT, 1)
                                        touched[b, j] = u
                                    if old + 1 == kL:
                                        if l == 0:
                                            if ctx == 0:
                                                inp0 = gpos[u] < lim
                                            else:
                                                inp0 = in_pool(poolP, poolPos, buf, vic, u, lim)
                                        else:
                                            inp0 = in_set(Parr, posP, b, u, pc)
                                        if not inp0:
                                            shi[S_NONMAX] = 1
                        bsync()
                    else:
                        # scan Q directly: the list depends on where we are
                        if l == 0:
                            if ctx == 0:
                                nq = nG - (lim + 1)
                            else:
                                nq = nq0 + (tot0 - (lim + 1))
                        else:
                            qs = lv[b, l, F_QS]
                            nq = qbase - qs
                        for i in range(warp, nq, ngr):
                            if l == 0:
                                if ctx == 0:
                                    q = gP[lim + 1 + i]
                                elif i < nq0:
                                    q = poolQ[buf, vic, i]
                                else:
                                    q = poolP[buf, vic, lim + 1 + i - nq0]
                            else:
                                q = Qstack[b, qs + i]
                            for e in range(offU[q] + lane, offU[q + 1], G):
                                if in_set(Larr, posL, b, adjU[e], kL):
                                    cuda.atomic.add(cnt, (b, q), 1)
                        bsync()
                        for i in range(tid, nq, nt):
                            if l == 0:
                                if ctx == 0:
                                    q = gP[lim + 1 + i]
                                elif i < nq0:
                                    q = poolQ[buf, vic, i]
                                else:
                                    q = poolP[buf, vic, lim + 1 + i - nq0]
                            else:
                                q = Qstack[b, qs + i]
                            c = cnt[b, q]
                            if c > 0:
                                cnt[b, q] = 0
                                if c == kL:
                                    shi[S_NONMAX] = 1
                                else:
                                    j = cuda.atomic.add(shi, S_NQ, 1)
                                    if qbase + j < qcap:
                                        Qstack[b, qbase + j] = q
                                    else:
                                        err[0] = ERR_QCAP
                        bsync()
                        if shi[S_NONMAX] == 0:
                            if INSTR and tid == 0:
                                t = clock64()
                                phl[PH_CHECK] += t - t_last
                                t_last = t
                            # scan P directly
                            if l == 0:
                                np_ = lim
                            else:
                                np_ = pc
                            for i in range(warp, np_, ngr):
                                if l == 0:
                                    if ctx == 0:
                                        u = gP[i]
                                    else:
                                        u = poolP[buf, vic, i]
                                else:
                                    u = Parr[b, i]
                                for e in range(offU[u] + lane, offU[u + 1], G):
                                    if in_set(Larr, posL, b, adjU[e], kL):
                                        cuda.atomic.add(cnt, (b, u), 1)
                            bsync()
                            for i in range(tid, np_, nt):
                                if l == 0:
                                    if ctx == 0:
                                        u = gP[i]
                                    else:
                                        u = poolP[buf, vic, i]
                                else:
                                    u = Parr[b, i]
                                if cnt[b, u] > 0:
                                    j = cuda.atomic.add(shi, S_NT, 1)
                                    touched[b, j] = u
                            bsync()
                    # ---------- classification ----------
                    nT = shi[S_NT]
                    ncl = nT
                    if RS and shi[S_NONMAX] != 0:
                        ncl = 0  # already known non-maximal: only the counters need resetting
                    for j in range(tid, ncl, nt):
                        u = touched[b, j]
                        c = cnt[b, u]
                        if l == 0:
                            if ctx == 0:
                                inp = gpos[u] < lim
                            else:
                                inp = in_pool(poolP, poolPos, buf, vic, u, lim)
                        else:
                            inp = in_set(Parr, posP, b, u, pc)
                        if inp:
                            if c == kL:
                                k2 = cuda.atomic.add(shi, S_NFULL, 1)
                                auxA[b, k2] = u
                            else:
                                k2 = cuda.atomic.add(shi, S_NPART, 1)
                                auxB[b, k2] = u
                        elif c == kL:
                            shi[S_NONMAX] = 1
                    bsync()
                    nonmax = shi[S_NONMAX]
                    if INSTR and tid == 0:
                        t = clock64()
                        if RS or nonmax != 0:
                            phl[PH_CHECK] += t - t_last
                        else:
                            phl[PH_EXPAND] += t - t_last
                        t_last = t
                    pushed = False
                    if nonmax == 0:
                        # ---------- maximal expansion ----------
                        nF = shi[S_NFULL]
                        nP = shi[S_NPART]
                        s = ZERO64
                        for j in range(tid, nF, nt):
                            u = auxA[b, j]
                            Rarr[b, r1 + j] = u
                            posR[b, u] = r1 + j
                            s += elem_u(u, cand_left)
                        cuda.atomic.add(shu, 1, s)
                        if ES and my_nodes <= NID_MAX:
                            # the counts are the child level's selection keys: keep them
                            tagc = my_nodes << 32
                            for j in range(tid, nP, nt):
                                u = auxB[b, j]
                                keyTag[b, u] = tagc | I64(cnt[b, u])
                        if l == 0:
                            for j in range(tid, nP, nt):
                                u = auxB[b, j]
                                Parr[b, j] = u
                                posP[b, u] = j
                        else:
                            # partition Parr[0:pc] so that P' = Parr[0:nP]
                            for j in range(tid, nP, nt):
                                u = auxB[b, j]
                                p = posP[b, u]
                                if p >= nP:
                                    k2 = cuda.atomic.add(shi, S_NB2, 1)
                                    auxC[b, k2] = p
                            for i in range(tid, nP, nt):
                                c = cnt[b, Parr[b, i]]
                                if c == 0 or c == kL:
                                    k2 = cuda.atomic.add(shi, S_NA2, 1)
                                    auxD[b, k2] = i
                            bsync()
                            swap_positions(Parr, posP, b, auxD, auxC, shi[S_NB2], tid, nt)
                        bsync()
                        if tid == 0:
                            sumRp = sumR + elem_u(x, cand_left) + shu[1]
                            my_count += 1
                            my_fp += combine_sides(sumRp, sumLp, cand_left)
                            if nP > 0:
                                l1 = l + 1
                                lv[b, l1, F_LENL] = kL
                                lv[b, l1, F_PC] = nP
                                lv[b, l1, F_RLEN] = r1 + nF
                                lv[b, l1, F_LASTMIN] = 1
                                lv[b, l1, F_NID] = I32(my_nodes) if my_nodes <= NID_MAX else I32(0)
                                lvs[b, l1, 0] = sumLp
                                lvs[b, l1, 1] = sumRp
                                if not RS:
                                    lv[b, l1, F_QS] = qbase
                                    lv[b, l1, F_QE] = min(qbase + shi[S_NQ], qcap)
                                shi[S_LVL] = l1
                        pushed = nP > 0
                    if tid == 0 and (not RS) and (not pushed) and l >= 1:
                        qe = lv[b, l, F_QE]
                        if qe < qcap:
                            Qstack[b, qe] = x
                            lv[b, l, F_QE] = qe + 1
                        else:
                            err[0] = ERR_QCAP
                    for j in range(tid, nT, nt):
                        cnt[b, touched[b, j]] = 0
                    if INSTR and tid == 0:
                        t = clock64()
                        if nonmax == 0:
                            phl[PH_EXPAND] += t - t_last
                        else:
                            phl[PH_CHECK] += t - t_last
                        t_last = t
            bsync()
        if tid == 0:
            cuda.atomic.add(res_count, 0, my_count)
            cuda.atomic.add(res_fp, 0, my_fp)
            cuda.atomic.add(res_count, 1, my_nodes)
            if INSTR:
                t = clock64()
                phl[PH_OTHER] += t - t_last
                total = t - t_start
                for i in range(NPH):
                    ph_out[b, i] = phl[i]
                ph_out[b, NPH] = total
                tasks_out[b] = my_tasks

    kern = cuda.jit(**jit_kw)(kernel)
    _CACHE[key] = kern
    return kern
