"""The search (paper Alg. 1, §III-E): one node per loop turn, no recursion.

A node selects a candidate (smallest |N(u) ∩ L|; ES: cached keys, stop at the first
chunk holding the level's last minimum; noES recounts every candidate from its whole
list), builds L' (stamps the chosen vertex's list prefix), expands (counts and partitions
every candidate's prefix: full ones join R', a twin of x leaves P for good, partial ones
form P'), checks maximality (:mod:`cumbe.kernel.maximality`) and pushes the child level.
A worker told to stop publishes what is left on its path (:mod:`cumbe.kernel.stealing`)."""

from __future__ import annotations

from types import SimpleNamespace

from numba import cuda

from cumbe.kernel.arena import base_at, ld, st
from cumbe.kernel.consts import BIG, CTL_FIXED, ERR_NID, I32, I64, MASK32, NID_MAX, P_EAGER
from cumbe.kernel.consts import PH_CHECK, PH_EXPAND, PH_LPRIME, PH_OTHER, PH_SEL, PH_STEAL, S_LVL
from cumbe.kernel.consts import S_NABS, S_NONMAX, S_NP, S_NQ, S_NTW, S_OFF, S_PK, S_PN, S_PUB, S_R0
from cumbe.kernel.consts import S_STOP, SHIFT, U_SUMA, U_SUML, WARP, X_BASE, X_MIN, X_NID, X_R
from cumbe.kernel.consts import ZERO64
from cumbe.kernel.lists import combine_sides
from cumbe.kernel.sync import clock, relaxed_load
from cumbe.layout import F_KL, F_LASTMIN, F_LSLOT, F_NID, F_NX, F_PC, F_QE, F_QS, F_SUM, F_X
from cumbe.layout import K_DL, K_KEY, K_LST, K_LV, K_PARR, K_Q, K_SG, K_SL, K_SO, K_TAG, NF


def make_search(cfg, grp, lists, stealing, maximality):
    """The search for the switches ``cfg`` and the worker kind ``grp``."""
    dev, RS, ES, INSTR, PIECES = cfg.dev, cfg.rs, cfg.es, cfg.instr, cfg.pieces
    ROUNDS = maximality.rounds  # this worker keeps R''s ids (a warp's, in the rounds build)
    G, gsync = grp.size, grp.sync
    # the steps it calls, as closure variables (numba compiles them in)
    elem_u, level_key, order_key, partition_list, compact, stamp, stamp_lprime = (
        lists.elem_u, lists.level_key, lists.order_key, lists.partition_list, lists.compact,
        lists.stamp, lists.stamp_lprime)
    list_fields, node_fields = lists.list_fields, lists.node_fields
    group_add, group_min, SHUFFLED = lists.group_add, lists.group_min, lists.shuffled
    publish = stealing.publish
    check_maximality, check_q, q_append = (maximality.check_maximality, maximality.check_q,
                                           maximality.q_append)
    rx_put = maximality.rx_put

    @dev
    def select_candidate(A, sh, sh64, g, gl, R, l, pc, nid, lastmin):
        """Position of the live candidate with the smallest |N(u) ∩ L_l| (ties: any).
        ES: cached keys, stop at a chunk holding the level's last minimum (keys of
        a level only grow); noES: every candidate recounted from its whole list."""
        oKEY, oTAG, oSO, oSL, oLST, oDL = list_fields(sh, g)
        oPARR = sh[g, S_OFF + K_PARR]
        W = base_at(A, R)
        if gl == 0:
            sh64[g, X_MIN] = BIG
        gsync()
        c0 = I32(0)
        while c0 < pc:
            i = I32(c0 + gl)
            key = BIG
            if i < pc:
                u = ld(W, I32(oPARR + i))
                if ES:
                    k = level_key(A, R, u, l, nid, oKEY, oTAG, oSO, oSL, oLST, oDL, True)
                else:
                    o = I32(oLST + ld(W, I32(oSO + u)))
                    k = I32(0)
                    e = I32(0)
                    e_end = ld(W, I32(oSL + u))
                    while e < e_end:
                        if ld(W, I32(oDL + ld(W, I32(o + e)))) >= l:
                            k = I32(k + 1)
                        e = I32(e + 1)
                key = I64(k) * SHIFT + I64(i)
                # (the paper's build keeps its per-lane atomic here, and its machine code;
                # the shuffles need every lane of the warp, past the candidates too)
                if not SHUFFLED:
                    cuda.atomic.min(sh64, (g, X_MIN), key)
            if SHUFFLED:
                group_min(sh64, g, X_MIN, gl, key)
            gsync()
            best = sh64[g, X_MIN]
            gsync()
            if ES and best // SHIFT == lastmin:
                break
            c0 = I32(c0 + G)
        return sh64[g, X_MIN]

    @dev
    def select_first(A, sh, sh64, g, gl, R, pc):
        """A piece of a task, at level 0: the live candidate first in the task's fixed
        order, the smallest (key, vertex).  Keys do not change at level 0 (L is N(v)), so
        this is the early-stop choice with ties broken by vertex, not by position: every
        piece takes the level-0 branches in the same order, wherever its candidates lie."""
        if gl == 0:
            sh64[g, X_MIN] = BIG
        oSL = sh[g, S_OFF + K_SL]
        oSG = sh[g, S_OFF + K_SG]
        oPARR = sh[g, S_OFF + K_PARR]
        gsync()
        i = I32(gl)
        while i < pc:
            cuda.atomic.min(sh64, (g, X_MIN), order_key(A, R, oSL, oSG, A[R + oPARR + i]))
            i = I32(i + G)
        gsync()
        best = sh64[g, X_MIN]
        i = I32(gl)
        while i < pc:
            if order_key(A, R, oSL, oSG, A[R + oPARR + i]) == best:
                sh[g, S_R0] = i
            i = I32(i + G)
        gsync()
        return (best // SHIFT) * SHIFT + I64(sh[g, S_R0])

    @dev
    def list_of(A, sh, g, R, x):
        """Where slot x's list starts in A (absolute)."""
        return R + sh[g, S_OFF + K_LST] + ld(base_at(A, R), I32(sh[g, S_OFF + K_SO] + x))

    @dev
    def build_lprime(A, sh, shu, g, gl, R, adjU, base, x, kl, lvl, cand_left):
        """L' = N(x) ∩ L: the prefix of x's list; stamp it as level lvl's L."""
        stamp_lprime(A, shu, g, gl, R, sh[g, S_OFF + K_DL], list_of(A, sh, g, R, x), kl, lvl,
                     adjU, base, cand_left)

    @dev
    def unstamp(A, sh, g, gl, R, x, kl, lvl):
        stamp(A, R, sh[g, S_OFF + K_DL], list_of(A, sh, g, R, x), gl, kl, lvl)

    @dev
    def expand(A, sh, shu, g, gl, R, l, npc, nid, kl, orig, cand_left, twins, nx):
        """Maximal expansion: for every live candidate, |N(u) ∩ L'| by partitioning its
        level-l list prefix; full -> R' (and, with ``twins``, a twin of x, whose list
        equals L', leaves P); partial -> P'.  Counts land in AUX by position."""
        oKEY, oTAG, oSO, oSL, oLST, oDL = list_fields(sh, g)
        oPARR, oAUX, oSG, _lv, _q = node_fields(sh, g)
        W = base_at(A, R)
        sa = ZERO64
        i = I32(gl)
        while i < npc:
            u = ld(W, I32(oPARR + i))
            k = level_key(A, R, u, l, nid, oKEY, oTAG, oSO, oSL, oLST, oDL, True)
            c = partition_list(A, R, u, k, l + 1, oSO, oLST, oDL)
            if c == kl:
                gu = ld(W, I32(oSG + u))
                sa += elem_u(orig[gu], cand_left)
                pa = cuda.atomic.add(sh, (g, S_NABS), 1)
                rx_put(A, sh, g, R, nx + 1 + pa, gu)
                if twins and k == kl:
                    cuda.atomic.add(sh, (g, S_NTW), 1)
                    c = -1  # twin
            elif c > 0:
                cuda.atomic.add(sh, (g, S_NP), 1)
            st(W, I32(oAUX + i), c)
            i = I32(i + G)
        group_add(shu, g, U_SUMA, gl, sa)

    @dev
    def search(A, A64, prm, adjU, offV, adjV, orig, ph, pb, pn, pl, ctl, sh, sh64, shu,
               g, gl, me, par, phase, kst, stage, interruptible, cand_left, err, phl, hubs):
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
        W = base_at(A, R)
        count = I64(0)
        fp = ZERO64
        nodes = I64(0)
        t_last = I64(0)
        if INSTR and gl % WARP == 0:
            t_last = clock()
        while True:
            gsync()
            if gl == 0:
                (sh[g, S_NONMAX], sh[g, S_NP], sh[g, S_NTW], sh[g, S_NABS], sh[g, S_NQ],
                 sh[g, S_STOP]) = 0, 0, 0, 0, 0, 0
                shu[g, U_SUML], shu[g, U_SUMA] = ZERO64, ZERO64
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
            lw = I32(oLV + l * NF)  # the level's fields, from the worker's base
            lv = R + lw
            pc = ld(W, I32(lw + F_PC))
            if pc == 0:
                # level exhausted: back to the parent, whose L it shrank
                if l > 0:
                    plv = lv - NF
                    xp = ld(W, I32(lw - NF + F_X))
                    unstamp(A, sh, g, gl, R, xp, ld(W, I32(lw + F_KL)), l - 1)
                    if gl == 0 and not RS:
                        q_append(A, sh, g, R, oQ, plv, xp, err)
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
            nid = ld(W, I32(lw + F_NID))
            # a piece of a task (RS only, :func:`cumbe.prepare.split`): its level-0 nodes in
            # the task's fixed order, twins kept, so that a level-0 branch's place in that
            # order is the number of candidates left after it
            canon = PIECES and l == 0 and sh[g, S_PN] > 1
            # ---------- candidate selection ----------
            if canon:
                best = select_first(A, sh, sh64, g, gl, R, pc)
            else:
                best = select_candidate(A, sh, sh64, g, gl, R, l, pc, nid,
                                        ld(W, I32(lw + F_LASTMIN)))
            pos = I32(best & MASK32)
            kl = I32(best // SHIFT)
            if (canon or not ES) and gl == 0:
                # noES counted from whole lists: re-establish x's level prefix
                level_key(A, R, ld(W, I32(oPARR + pos)), l, nid, oKEY, oTAG, oSO,
                          sh[g, S_OFF + K_SL], sh[g, S_OFF + K_LST],
                          sh[g, S_OFF + K_DL], True)
            x = ld(W, I32(oPARR + pos))
            gsync()
            if gl == 0:
                y = ld(W, I32(oPARR + pc - 1))
                st(W, I32(oPARR + pc - 1), x)
                st(W, I32(oPARR + pos), y)
                st(W, I32(lw + F_PC), pc - 1)
                st(W, I32(lw + F_X), x)
                st(W, I32(lw + F_LASTMIN), kl)
                if INSTR:
                    t = clock()
                    phl[PH_SEL] += t - t_last
                    t_last = t
            npc = pc - 1
            gsync()
            if canon and npc % sh[g, S_PN] != sh[g, S_PK]:
                continue  # another piece's level-0 branch: it only leaves P
            nodes += 1
            # ---------- L' construction ----------
            build_lprime(A, sh, shu, g, gl, R, adjU, base, x, kl, l + 1, cand_left)
            gsync()
            if INSTR and gl % WARP == 0:
                t = clock()
                phl[PH_LPRIME] += t - t_last
                t_last = t
            # ---------- maximal expansion: counts, R', P' ----------
            nxr = I32(0)
            if ROUNDS:  # R''s stack: x, then the candidates expand takes in
                nxr = ld(W, I32(lw + F_NX))
                if gl == 0:
                    rx_put(A, sh, g, R, nxr, ld(W, I32(oSG + x)))
            expand(A, sh, shu, g, gl, R, l, npc, nid, kl, orig, cand_left, not canon, nxr)
            gsync()
            if INSTR and gl % WARP == 0:
                t = clock()
                phl[PH_EXPAND] += t - t_last
                t_last = t
            nabs = sh[g, S_NABS]
            ntw = sh[g, S_NTW]
            np_ = sh[g, S_NP]
            nx = ld(W, I32(lw + F_NX))
            # ---------- maximality checking ----------
            qs = I32(0)
            qe = I32(0)
            if RS:
                check_maximality(A, adjU, offV, adjV, sh, g, gl, R, base, list_of(A, sh, g, R, x),
                                 kl, nx + 1 + nabs, err, hubs)
            else:
                qs = ld(W, I32(lw + F_QS))
                qe = ld(W, I32(lw + F_QE))
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
                    st(W, I32(lw + F_PC), npc - ntw)
            if not RS and ntw > 0:
                # the twins join Q (before this node's Q', which left them room)
                t2 = I32(gl)
                while t2 < ntw:
                    st(W, I32(oQ + qe + t2), ld(W, I32(oPARR + npc - ntw + t2)))
                    t2 = I32(t2 + G)
                if gl == 0:
                    st(W, I32(lw + F_QE), qe + ntw)
            if nonmax == 0:
                sumR = A64[(lv + F_SUM) >> 1] + elem_u(orig[ld(W, I32(oSG + x))], cand_left) \
                    + shu[g, U_SUMA]
                if gl == 0:
                    count += 1
                    fp += combine_sides(sumR, shu[g, U_SUML], cand_left)
                if push:
                    if gl == 0:
                        sh64[g, X_NID] = I64(nid2)
                        cw = I32(lw + NF)
                        cl = lv + NF
                        st(W, I32(cw + F_PC), np_)
                        st(W, I32(cw + F_KL), kl)
                        st(W, I32(cw + F_LSLOT), x)
                        st(W, I32(cw + F_LASTMIN), 1)
                        st(W, I32(cw + F_NID), nid2)
                        st(W, I32(cw + F_NX), nx + 1 + nabs)
                        st(W, I32(cw + F_X), -1)
                        if not RS:
                            st(W, I32(cw + F_QS), qe + ntw)
                            st(W, I32(cw + F_QE), qe + ntw + sh[g, S_NQ])
                        A64[(cl + F_SUM) >> 1] = sumR
                        sh[g, S_LVL] = l + 1
            if not push:
                unstamp(A, sh, g, gl, R, x, kl, l)
                if gl == 0 and not RS:
                    q_append(A, sh, g, R, oQ, lv, x, err)
            if INSTR and gl % WARP == 0:
                t = clock()
                phl[PH_EXPAND] += t - t_last
                t_last = t
        if INSTR and gl % WARP == 0:
            t = clock()
            phl[PH_OTHER] += t - t_last
        return count, fp, nodes

    return SimpleNamespace(search=search)
