"""k-level work stealing (paper §III-D): publish and steal.

Once enough workers are out of work, the stop flag of the stage goes up and every busy
worker publishes all the work left on its path at its next node: every level's remaining
candidates, whose lists, L and R sums already lie in its arena.  Workers work in arena
half ``stage % 2``, so a victim's half stays untouched for the whole next stage and
publishing copies nothing.  In the next stage idle workers take single candidates (a
level m and an index i) from the published pools, and *steal_node* runs that node
straight from the victim's arena, copying only what the new task needs."""

from __future__ import annotations

from types import SimpleNamespace

from numba import cuda

from cumbe.kernel.consts import CTL_FIXED, H_CAPH, H_CB, H_D, H_DEPTH, H_NB, H_NLEV, H_PK, H_PN
from cumbe.kernel.consts import H_QCAP, H_TB, I32, I64, P_HALF, S_C0, S_CAPH, S_CBW, S_CUR, S_D
from cumbe.kernel.consts import S_DEPTH, S_FOUND, S_GOT, S_IDX, S_LVL, S_N, S_NABS, S_NB, S_NONMAX
from cumbe.kernel.consts import S_NQ, S_OFF, S_PK, S_PN, S_PUB, S_QCAP, S_R0, S_TB, S_TOT, S_VIC
from cumbe.kernel.consts import U_SUMA, U_SUML, X_BASE, X_NID, X_R, ZERO64
from cumbe.kernel.lists import combine_sides
from cumbe.kernel.sync import relaxed_load
from cumbe.layout import F_KL, F_LASTMIN, F_LSLOT, F_NID, F_NX, F_PC, F_QE, F_QS, F_SUM, F_X, K_AUX
from cumbe.layout import K_DL, K_LV, K_PARR, K_Q, NF


def make_stealing(cfg, grp, lists, fetch, maximality):
    """Publishing and stealing for the switches ``cfg`` and the worker kind ``grp``."""
    dev, RS, PIECES, G, gsync = cfg.dev, cfg.rs, cfg.pieces, grp.size, grp.sync
    ROUNDS = maximality.rounds  # this worker keeps R''s ids (a warp's, in the rounds build)
    # the steps it calls, as closure variables (numba compiles them in)
    elem_u, level_key, order_key, stamp, stamp_lprime = (
        lists.elem_u, lists.level_key, lists.order_key, lists.stamp, lists.stamp_lprime)
    slot_fields, group_add = lists.slot_fields, lists.group_add
    offsets_to_shared = fetch.offsets_to_shared
    check_maximality, rx_put, rx_slot = (maximality.check_maximality, maximality.rx_put,
                                         maximality.rx_slot)

    @dev
    def out_of_work(ctl, phase, kst, stage, idle_at):
        """A worker found no work in this stage: once ``idle_at`` have, raise the stop
        signal, and the busy ones publish what they have left."""
        n = cuda.atomic.add(ctl, (phase, CTL_FIXED + 2 * (kst + 2) + stage), 1) + 1
        if n >= idle_at:
            cuda.atomic.max(ctl, (phase, CTL_FIXED + stage), 1)

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
        m = I32(gl)
        while m <= l:
            tot += A[R + oLV + m * NF + F_PC]
            m = I32(m + G)
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
            if PIECES:
                ph[par, me, H_PK] = sh[g, S_PK]
                ph[par, me, H_PN] = sh[g, S_PN]
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
            # (S_GOT is 0 here: the caller found no task of its own, and a steal that sets
            # it leaves the loop; storing 0 again raced the caller's read, racecheck)
            if gl == 0:
                sh[g, S_FOUND] = 0x7FFFFFFF
            gsync()
            cur = sh[g, S_CUR]
            start = me % npub if npub > 0 else 0
            # one group-wide chunk of publishers at a time, up to the first with pieces
            # left (scanning them all made every steal cost O(publishers))
            c0 = I32(cur)
            while c0 < npub:
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
                c0 = I32(c0 + G)
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
                   adjV, orig, cand_left, err, hubs):
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
            if PIECES:  # what it steals is a whole subtree (filtered below, if at all)
                sh[g, S_PK] = 0
                sh[g, S_PN] = 1
            (sh[g, S_TOT], sh[g, S_N], sh[g, S_NABS], sh[g, S_NONMAX], sh[g, S_NQ]) = 0, 0, 0, 0, 0
            shu[g, U_SUML], shu[g, U_SUMA] = ZERO64, ZERO64
        gsync()
        oSG, oSO, oSL, oKEY, oTAG, oLST = slot_fields(sh, g)
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
        # a level-0 candidate of a piece of a task (cumbe.kernel.search): its P is the
        # candidates after it in the task's fixed order, and it is this piece's branch
        # only if as many candidates come after it as the piece's rule says
        canon = PIECES and m == 0 and ph[pprev, w, H_PN] > 1
        lim = ti
        ckx = I64(0)
        if canon:
            vpn = ph[pprev, w, H_PN]
            ckx = order_key(A, VR, oSL, oSG, x)
            lim = pcm
            if gl == 0:
                sh[g, S_R0] = 0
            gsync()
            after = I32(0)
            t = I32(gl)
            while t < pcm:
                if order_key(A, VR, oSL, oSG, A[VR + oPARR + t]) > ckx:
                    after = I32(after + 1)
                t = I32(t + G)
            cuda.atomic.add(sh, (g, S_R0), after)
            gsync()
            if sh[g, S_R0] % vpn != ph[pprev, w, H_PK]:
                if gl == 0:
                    sh[g, S_LVL] = -1
                gsync()
                return I64(0), ZERO64, I64(0)
        vnx = A[vlv + F_NX]
        # membership: 0 for L_m, 1 for L' (victim lists only hold L_m entries)
        if m == 0:
            jj = I32(gl)
            while jj < d:
                A[R + oDL + jj] = 0
                jj = I32(jj + G)
        else:
            stamp(A, R, oDL, VR + oLST + A[VR + oSO + lslot], gl, klm, 0)
        gsync()
        stamp_lprime(A, shu, g, gl, R, oDL, ox, kx, 1, adjU, base, cand_left)
        gsync()
        # the candidates before x: counts against L'; partial ones get a slot
        sa = ZERO64
        t = I32(gl)
        while t < lim:
            u = A[VR + oPARR + t]
            if canon and (t == ti or order_key(A, VR, oSL, oSG, u) < ckx):
                A[R + oAUX + t] = -1  # processed before x in the fixed order: not in its P
            else:
                k = level_key(A, VR, u, m, nid, oKEY, oTAG, oSO, oSL, oLST, oDL, False)
                o = VR + oLST + A[VR + oSO + u]
                c = I32(0)
                e = I32(0)
                while e < k:
                    if A[R + oDL + A[o + e]] == 1:
                        c = I32(c + 1)
                    e = I32(e + 1)
                s = I32(-1)
                if c == kx:
                    sa += elem_u(orig[A[VR + oSG + u]], cand_left)
                    pa = cuda.atomic.add(sh, (g, S_NABS), 1)
                    rx_put(A, sh, g, R, vnx + 1 + pa, A[VR + oSG + u])
                elif c > 0:
                    s = cuda.atomic.add(sh, (g, S_N), 1)
                    A[R + oSG + s] = A[VR + oSG + u]
                    A[R + oSL + s] = c
                    A[R + oSO + s] = cuda.atomic.add(sh, (g, S_TOT), c)
                A[R + oAUX + t] = s
            t = I32(t + G)
        group_add(shu, g, U_SUMA, gl, sa)
        if ROUNDS:
            # R' below the victim's level: its R (copied) and x
            t = I32(gl)
            while t <= vnx:
                s = rx_slot(sh, g, t)
                if s >= 0:
                    A[R + s] = A[VR + s] if t < vnx else A[VR + oSG + x]
                t = I32(t + G)
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
            t = I32(gl)
            while t < nq:
                u = piece_q_vertex(A, VR, vlv, oQ, oPARR, ti, nqm, nafter, t)
                o = VR + oLST + A[VR + oSO + u]
                c = I32(0)
                e = I32(0)
                e_end = A[VR + oSL + u]
                while e < e_end:
                    jj = A[o + e]
                    if A[VR + oDL + jj] >= m and A[R + oDL + jj] == 1:
                        c = I32(c + 1)
                    e = I32(e + 1)
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
                t = I32(t + G)
            gsync()
        nabs = sh[g, S_NABS]
        target = vnx + 1 + nabs
        if RS:
            check_maximality(A, adjU, offV, adjV, sh, g, gl, R, base, ox, kx, target, err, hubs)
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
            t = I32(gl)
            nt = lim + (nq if not RS else 0)
            while t < nt:
                if t < lim:
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
                    e = I32(0)
                    while e < k:
                        jj = A[src + e]
                        if A[R + oDL + jj] == 1 and (not qfilter or A[VR + oDL + jj] >= m):
                            A[dst + c] = jj
                            c = I32(c + 1)
                        e = I32(e + 1)
                t = I32(t + G)
            s = I32(gl)
            while s < nP:
                A[R + oPARR + s] = s
                A[R + oKEY + s] = A[R + oSL + s]
                A[R + oTAG + s] = 1
                s = I32(s + G)
            gsync()
            stamp(A, R, oDL, ox, gl, kx, 0)  # L' is this task's L at level 0
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

    return SimpleNamespace(out_of_work=out_of_work, publish=publish, steal=steal,
                           steal_node=steal_node)
