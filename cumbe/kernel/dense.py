"""The dense leaf search (the ``cuMBE-dense`` build; not part of the paper's cuMBE).

Once a node's child would have |L'| <= 32 and at most 32 partial candidates, the warp runs
that child's whole subtree in registers instead of pushing it: bit b of a mask stands for the
b-th vertex of L', lane i holds candidate i's neighbourhood within L' as one mask, so that
intersections are ANDs, sizes popcounts, the candidate with the fewest neighbours in L a warp
minimum, and "full" (joins R'), "twin" (leaves P) and "partial" (forms P') three ballots.
The level stack (L, P, |R|, R's hash sum) is the same in every lane.  Nothing of it goes to
the arena: the lists, keys and level table stay as the generic search left them.

The maximality check stays the paper's reverse scan (:mod:`cumbe.kernel.maximality`): the
intersection of the V-side lists of L' must hold only R'.  It sees vertices of lower rank and
candidates tried earlier, so the subtree needs no Q; for it, L' is written as local ids into
the dense root's own list prefix (restored at the end).  Any order of the candidates is
exact with that check; the smallest |N(u) ∩ L| first is the generic search's order."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numba import cuda

from cumbe.kernel.consts import I32, I64, PH_CHECK, PH_EXPAND, S_NONMAX, S_OFF, WARP, ZERO64
from cumbe.kernel.lists import combine_sides
from cumbe.kernel.sync import clock, wballot, wmin, wsync
from cumbe.layout import K_DL, K_KEY, K_LST, K_PARR, K_SG, K_SO

# a subtree's L and P fit one 32-bit word each (one candidate per lane)
DENSE_MAX = WARP


def make_dense(cfg, lists, maximality):
    """The dense leaf search of a warp worker (the block-wide workers never take it)."""
    dev, INSTR, NW = cfg.dev, cfg.instr, cfg.threads // WARP
    TW, DEPTH = 2 * WARP, WARP + 1  # (array shapes must be constants)
    elem_u, elem_v = lists.elem_u, lists.elem_v
    check_maximality = maximality.check_maximality

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
    def subtree(A, sh, g, gl, R, base, adjU, offV, adjV, orig, ox, kl, npc, nr0, sumr0,
                lvl, cand_left, phl, t_last):
        """Enumerate the subtree under the node just expanded: L' is the kl local ids at
        A[ox:], P' the first npc candidates of the level's P (compacted, with their counts
        against L' as keys and their L' entries first in their lists), R' has nr0
        vertices of hash sum sumr0, and L' is stamped as level lvl.  Returns (maximal
        bicliques below that node, their fingerprint sum, nodes, t_last)."""
        oDL = sh[g, S_OFF + K_DL]
        oLST = sh[g, S_OFF + K_LST]
        oSO = sh[g, S_OFF + K_SO]
        oSG = sh[g, S_OFF + K_SG]
        oPARR = sh[g, S_OFF + K_PARR]
        oKEY = sh[g, S_OFF + K_KEY]
        # per warp: L' vertices' hashes [0:32], candidates' hashes [32:64], candidate masks
        tab = cuda.shared.array((NW, TW), dtype=np.uint64)
        cms = cuda.shared.array((NW, WARP), dtype=np.int64)
        sL = cuda.local.array(DEPTH, dtype=np.int64)
        sP = cuda.local.array(DEPTH, dtype=np.int64)
        sN = cuda.local.array(DEPTH, dtype=np.int32)
        sR = cuda.local.array(DEPTH, dtype=np.uint64)
        # bit b of a mask is L''s b-th vertex: DL holds -2 - b for it while the masks are made
        myj = I32(-1)
        if gl < kl:
            myj = A[ox + gl]
            A[R + oDL + myj] = -2 - gl
            tab[g, gl] = elem_v(adjU[base + myj], cand_left)
        wsync()
        cm = I64(0)
        if gl < npc:
            u = A[R + oPARR + gl]
            o = R + oLST + A[R + oSO + u]
            for e in range(A[R + oKEY + u]):
                cm |= I64(1) << I64(-2 - A[R + oDL + A[o + e]])
            tab[g, WARP + gl] = elem_u(orig[A[R + oSG + u]], cand_left)
            cms[g, gl] = cm
        wsync()
        if gl < kl:
            A[R + oDL + myj] = lvl
        wsync()
        count = I64(0)
        fp = ZERO64
        nodes = I64(0)
        t = 0
        sL[0] = (I64(1) << I64(kl)) - 1
        sP[0] = (I64(1) << I64(npc)) - 1
        sN[0] = nr0
        sR[0] = sumr0
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
            nr = sN[t] + 1 + cuda.popc(full)
            # L' as local ids for the closure check, in the root's list prefix
            if gl < kl and ((lp >> I64(gl)) & 1) != 0:
                A[ox + cuda.popc(lp & ((I64(1) << I64(gl)) - 1))] = myj
            if gl == 0:
                sh[g, S_NONMAX] = 0
            wsync()
            if INSTR and gl == 0:
                tc = clock()
                phl[PH_EXPAND] += tc - t_last
                t_last = tc
            check_maximality(A, adjU, offV, adjV, sh, g, gl, R, base, ox, kp, nr)
            wsync()
            if INSTR and gl == 0:
                tc = clock()
                phl[PH_CHECK] += tc - t_last
                t_last = tc
            if sh[g, S_NONMAX] == 0:
                sumr = sR[t] + tab[g, WARP + x] + hash_sum(tab, g, WARP, full)
                if gl == 0:
                    count += 1
                    fp += combine_sides(sumr, hash_sum(tab, g, 0, lp), cand_left)
                if part != 0:
                    t += 1
                    sL[t] = lp
                    sP[t] = part
                    sN[t] = nr
                    sR[t] = sumr
            wsync()  # every lane has read S_NONMAX and A[ox:] before the next node
        if gl < kl:
            A[ox + gl] = myj
        wsync()
        return count, fp, nodes, t_last

    return SimpleNamespace(subtree=subtree)

