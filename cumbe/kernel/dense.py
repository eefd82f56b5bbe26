"""The dense leaf search (the ``cuMBE-dense`` build; not part of the paper's cuMBE).

Once a maximal node's child would have |L'| <= 32 and at most DENSE_P partial candidates,
the warp runs that child's whole subtree in registers instead of pushing it: bit b of a mask
stands for the b-th vertex of L', lane i holds candidate i's neighbourhood within L' as one
mask, so that intersections are ANDs, sizes popcounts, the candidate with the fewest
neighbours in L a warp minimum, and "full" (joins R'), "twin" (leaves P) and "partial"
(forms P') three ballots.  The level stack (L, P, the P' lanes in R, |R|, R's hash sum) is
the same in every lane.  The lists, keys and level table stay as the generic search left
them.

The maximality check is local too: once, at the subtree's root, the V-side lists of L' are
merged by rank (a warp minimum per vertex), which gives the mask of every vertex outside R'
and P' that meets L' (Q; R' are the vertices with the full mask, as the root is maximal); a
node's L'' is maximal unless a mask of Q, or of a P' lane neither live nor in R'' (tried
earlier), contains it: subset tests, instead of the paper's reverse scan of global lists at
every node.  Q lives in the maximality check's buffer; a root whose Q does not fit it is
pushed as usual.  Any order of the candidates is exact with this check; the smallest
|N(u) ∩ L| first is the generic search's order."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numba import cuda

from cumbe.kernel.consts import I32, I64, PH_EXPAND, S_CBW, S_OFF, WARP, ZERO64
from cumbe.kernel.lists import combine_sides
from cumbe.kernel.sync import clock, wballot, wmin, wsync
from cumbe.layout import K_CB, K_DL, K_KEY, K_LST, K_PARR, K_SG, K_SO

# a subtree's L fits one 32-bit word (one candidate per lane)
DENSE_MAX = WARP
# at most this many candidates: a subtree runs on one warp, unstolen, so it must stay small
# (at most 2^DENSE_P nodes)
DENSE_P = 16
NIDX = 0x7FFFFFFF  # past every vertex id


def make_dense(cfg, lists, maximality):
    """The dense leaf search of a warp worker (the block-wide workers never take it)."""
    dev, INSTR, NW = cfg.dev, cfg.instr, cfg.threads // WARP
    TW, DEPTH = 2 * WARP, WARP + 1  # (array shapes must be constants)
    elem_u, elem_v = lists.elem_u, lists.elem_v

    @dev
    def lowbit(m):
        """Index of the lowest set bit of m > 0."""
        return cuda.popc((m & -m) - 1)

    @dev
    def hash_sum(tab, g, off, m):
        """Sum of tab[g, off + b] over the set bits b of m."""
        s = ZERO64
        while m != 0:
            s += tab[g, off + lowbit(m)]
            m &= m - 1
        return s

    @dev
    def any_contains(A, qb, nq, gl, lp):
        """Does one of the nq masks at A[qb:] contain lp?  (the warp's lanes strided)"""
        found = False
        for i0 in range(0, nq, WARP):
            i = i0 + gl
            hit = i < nq and (I64(A[qb + i]) & lp) == lp
            if wballot(hit) != 0:
                found = True
                break
        return found

    @dev
    def subtree(A, sh, g, gl, R, base, adjU, offV, adjV, orig, ox, kl, npc, nr0, sumr0,
                lvl, cand_left, phl, t_last):
        """Enumerate the subtree under the node just expanded: L' is the kl local ids at
        A[ox:], P' the first npc candidates of the level's P (compacted, with their counts
        against L' as keys and their L' entries first in their lists), R' has nr0
        vertices of hash sum sumr0, and L' is stamped as level lvl.  Returns (done, maximal
        bicliques below that node, their fingerprint sum, nodes, t_last); done is False,
        with nothing changed, when the outside vertices meeting L' do not fit the buffer."""
        oDL = sh[g, S_OFF + K_DL]
        oLST = sh[g, S_OFF + K_LST]
        oSO = sh[g, S_OFF + K_SO]
        oSG = sh[g, S_OFF + K_SG]
        oPARR = sh[g, S_OFF + K_PARR]
        oKEY = sh[g, S_OFF + K_KEY]
        qb = R + sh[g, S_OFF + K_CB]
        qcap = sh[g, S_CBW]
        # per warp: L' vertices' hashes [0:32], candidates' hashes [32:64], candidate masks
        tab = cuda.shared.array((NW, TW), dtype=np.uint64)
        cms = cuda.shared.array((NW, WARP), dtype=np.int64)
        sL = cuda.local.array(DEPTH, dtype=np.int64)
        sP = cuda.local.array(DEPTH, dtype=np.int64)
        sQ = cuda.local.array(DEPTH, dtype=np.int64)
        sN = cuda.local.array(DEPTH, dtype=np.int32)
        sR = cuda.local.array(DEPTH, dtype=np.uint64)
        # bit b of a mask is L''s b-th vertex: DL holds -2 - b for it while the masks are made
        myj = I32(-1)
        head = I32(NIDX)
        pos = I64(0)
        end = I64(0)
        if gl < kl:
            myj = A[ox + gl]
            A[R + oDL + myj] = -2 - gl
            y = adjU[base + myj]
            tab[g, gl] = elem_v(y, cand_left)
            pos = offV[y]
            end = offV[y + 1]
            head = adjV[pos]
        wsync()
        cm = I64(0)
        cu = I32(-1)
        if gl < npc:
            u = A[R + oPARR + gl]
            o = R + oLST + A[R + oSO + u]
            for e in range(A[R + oKEY + u]):
                cm |= I64(1) << I64(-2 - A[R + oDL + A[o + e]])
            cu = A[R + oSG + u]
            tab[g, WARP + gl] = elem_u(orig[cu], cand_left)
            cms[g, gl] = cm
        wsync()
        if gl < kl:
            A[R + oDL + myj] = lvl
        full = (I64(1) << I64(kl)) - 1
        # Q: every vertex outside R' and P' that meets L', as its mask (the V-side lists
        # of L' merged by rank); R' are the vertices containing L' (the node is maximal)
        nq = 0
        while True:
            m = wmin(head)
            if m == NIDX:
                break
            bits = wballot(head == m)
            if head == m:
                pos += 1
                head = adjV[pos] if pos < end else I32(NIDX)
            if bits != full and wballot(cu == m) == 0:
                if nq == qcap:
                    nq = -1
                    break
                if gl == 0:
                    A[qb + nq] = I32(bits)
                nq += 1
        wsync()
        if nq < 0:
            return False, I64(0), ZERO64, I64(0), t_last
        count = I64(0)
        fp = ZERO64
        nodes = I64(0)
        t = 0
        sL[0] = full
        sP[0] = (I64(1) << I64(npc)) - 1
        sQ[0] = 0  # P' lanes in R (none at the root)
        sN[0] = nr0
        sR[0] = sumr0
        lanes = sP[0]
        while t >= 0:
            P = sP[t]
            if P == 0:
                t -= 1
                continue
            L = sL[t]
            live = ((P >> I64(gl)) & 1) != 0
            key = I32(cuda.popc(cm & L)) if live else I32(2 * WARP)
            x = wmin(key * WARP + I32(gl)) % WARP
            P &= ~(I64(1) << I64(x))
            lp = L & cms[g, x]
            kp = cuda.popc(lp)
            c = cuda.popc(cm & lp)
            cand = live and gl != x
            full = wballot(cand and c == kp)
            twin = wballot(cand and c == kp and (cm & L) == lp)
            part = wballot(cand and c > 0 and c < kp)
            sP[t] = P & ~twin
            nodes += 1
            rl = sQ[t] | (I64(1) << I64(x)) | full
            # maximal unless a vertex outside R'' contains L'': a P' lane neither live
            # nor in R'' (tried, or a twin of a tried one), or one of Q
            inq = ((lanes & ~P & ~rl) >> I64(gl)) & 1 != 0
            nonmax = wballot(inq and (cm & lp) == lp) != 0
            if not nonmax:
                nonmax = any_contains(A, qb, nq, gl, lp)
            if not nonmax:
                sumr = sR[t] + tab[g, WARP + x] + hash_sum(tab, g, WARP, full)
                if gl == 0:
                    count += 1
                    fp += combine_sides(sumr, hash_sum(tab, g, 0, lp), cand_left)
                if part != 0:
                    t += 1
                    sL[t] = lp
                    sP[t] = part
                    sQ[t] = rl
                    sN[t] = sN[t - 1] + 1 + cuda.popc(full)
                    sR[t] = sumr
        if INSTR and gl == 0:
            tc = clock()
            phl[PH_EXPAND] += tc - t_last
            t_last = tc
        wsync()
        return True, count, fp, nodes, t_last

    return SimpleNamespace(subtree=subtree)

