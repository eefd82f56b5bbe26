"""Subtree fetching (paper §III-C): a worker builds a first-level task's local subgraph
in its own arena.

Task v: L = N(v) with local ids 0..d-1, and one slot per 2-hop vertex u of higher rank
(every 2-hop vertex for noRS) holding N(u) ∩ N(v) in local ids: ParMBE's subproblem of
v.  One pass over v's wedges (a contiguous run of each neighbour's list: lists are sorted
by rank) counts them into an open-addressing hash, one places the lists.  Everything is
bounded by the task's wedge count W (:mod:`cumbe.layout`), never by |U| or |V|."""

from __future__ import annotations

from types import SimpleNamespace

from numba import cuda

from cumbe import layout as _lay
from cumbe.kernel.arena import base_at, ld, st
from cumbe.kernel.consts import ERR_ARENA, I32, I64, P_NU, S_C0, S_C1, S_C2, S_CAPH, S_CBW, S_D
from cumbe.kernel.consts import S_DEPTH, S_LVL, S_N, S_NB, S_OFF, S_QCAP, S_TB, U64, U_SUML, U_SUMX
from cumbe.kernel.consts import X_BASE, X_COST, X_MIN, X_NID, X_R, ZERO64
from cumbe.layout import B_CAPH, B_CB, B_DEPTH, B_NB, B_QCAP, B_TB, F_KL, F_LASTMIN, F_LSLOT, F_NID
from cumbe.layout import F_NX, F_PC, F_QE, F_QS, F_SUM, F_X, K_DL, K_HC, K_HK, K_LV
from cumbe.layout import K_PARR, K_PRE, K_Q, K_ST, NFIELDS

_ly = _lay.compile_with(cuda.jit(device=True))
_lyc = _lay.compile_with(cuda.jit(device=True), compact=True)


def make_fetch(cfg, grp, lists, maximality):
    """Subtree fetching for the switches ``cfg`` and the worker kind ``grp``."""
    dev, RS, G, gsync, COMPACT = cfg.dev, cfg.rs, grp.size, grp.sync, cfg.compact
    ROUNDS = maximality.rounds  # this worker keeps R''s ids (a warp's, in the rounds build)
    rx_put = maximality.rx_put
    elem_u, elem_v, slot_fields = lists.elem_u, lists.elem_v, lists.slot_fields
    ly = _lyc if COMPACT else _ly
    field_offset, task_bound = ly.field_offset, ly.task_bound

    @dev
    def lower_bound(adj, lo, hi, key):
        while lo < hi:
            mid = (lo + hi) >> 1
            if adj[mid] <= key:
                lo = mid + 1
            else:
                hi = mid
        return lo

    # ``mask``: the plain layout's power-of-two capacity - 1; the compact layout's
    # capacity itself (the hash is scaled to it by a multiply, and probes wrap at it)
    @dev
    def hslot(u, mask):
        if COMPACT:
            return I64((((U64(u) * U64(0x9E3779B97F4A7C15)) >> U64(32)) * U64(mask)) >> U64(32))
        return I64((U64(u) * U64(0x9E3779B97F4A7C15)) >> U64(33)) & mask

    @dev
    def hnext(h, mask):
        if COMPACT:
            h += 1
            if h == mask:
                h = 0
            return h
        return (h + 1) & mask

    @dev
    def hash_insert(A, R, oHK, oHC, u, mask):
        """Count one more wedge to u in the task's hash (open addressing)."""
        h = hslot(u, mask)
        while True:
            old = cuda.atomic.cas(A, R + oHK + h, I32(-1), I32(u))
            if old == -1 or old == u:
                cuda.atomic.add(A, R + oHC + h, 1)
                return
            h = hnext(h, mask)

    @dev
    def hash_find(A, R, oHK, oHC, u, mask):
        """u's count slot, as pass 2 left it (u is in the hash)."""
        W = base_at(A, R)
        h = hslot(u, mask)
        while ld(W, I32(oHK + h)) != u:
            h = hnext(h, mask)
        return ld(W, I32(oHC + h))

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

    @dev
    def wedge_at(A, R, oPRE, oST, adjU, offV, adjV, base, j, t):
        """Wedge t's 2-hop vertex, and the run j it lies in: a lane walks its wedges in
        order, so j, the run of the previous one, only moves forward."""
        W = base_at(A, R)
        while ld(W, I32(oPRE + j + 1)) <= t:
            j = I32(j + 1)
        y = adjU[base + j]
        return j, adjV[offV[y] + ld(W, I32(oST + j)) + (t - ld(W, I32(oPRE + j)))]

    @dev
    def offsets_to_shared(sh, g, gl, d, nb, tb, depth, caph, qcap, cb):
        if gl == 0:
            (sh[g, S_D], sh[g, S_NB], sh[g, S_TB], sh[g, S_DEPTH], sh[g, S_CAPH], sh[g, S_QCAP],
             sh[g, S_CBW]) = d, nb, tb, depth, caph, qcap, cb
            if not COMPACT:
                for f in range(NFIELDS):
                    sh[g, S_OFF + f] = field_offset(f, d, nb, tb, depth, caph, qcap, cb)
        if COMPACT and gl < NFIELDS:
            # one field per lane (a group has at least NFIELDS lanes): lane 0's unrolled
            # loop of the compact layout's offsets made a larger, slower kernel
            sh[g, S_OFF + gl] = field_offset(gl, d, nb, tb, depth, caph, qcap, cb)

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
        j = I32(gl)
        while j < d:
            c, s0 = wedge_run(adjU, offV, adjV, base, j, v)
            w += c
            y = adjU[base + j]
            if offV[y + 1] - offV[y] > dvl:
                dvl = offV[y + 1] - offV[y]
            j = I32(j + G)
        cuda.atomic.add(sh64, (g, X_MIN), w)
        cuda.atomic.max(sh, (g, S_C2), I32(dvl))
        gsync()
        W = sh64[g, X_MIN]
        if gl == 0:
            sh64[g, X_COST] = W + d
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
        oSG, oSO, oSL, oKEY, oTAG, oLST = slot_fields(sh, g)
        Wr = base_at(A, R)
        j = I32(gl)
        while j < d:
            c, s0 = wedge_run(adjU, offV, adjV, base, j, v)
            st(Wr, I32(oPRE + j), c)
            st(Wr, I32(oST + j), s0)
            j = I32(j + G)
        h = I32(gl)
        while h < caph:
            st(Wr, I32(oHK + h), -1)
            st(Wr, I32(oHC + h), 0)
            h = I32(h + G)
        gsync()
        # exclusive prefix sums of the runs (lane 0: d is one vertex's degree)
        if gl == 0:
            acc = I32(0)
            j = I32(0)
            while j < d:
                c = A[R + oPRE + j]
                A[R + oPRE + j] = acc
                acc += c
                j = I32(j + 1)
            A[R + oPRE + d] = acc
        gsync()
        mask = I64(caph) if COMPACT else I64(caph - 1)
        # pass 1: count |N(u) ∩ N(v)| per 2-hop vertex (hash insert)
        j = I32(0)
        t = I32(gl)
        while t < W:
            j, u = wedge_at(A, R, oPRE, oST, adjU, offV, adjV, base, j, t)
            if RS or u != v:
                hash_insert(A, R, oHK, oHC, u, mask)
            t = I32(t + G)
        gsync()
        # pass 2: one slot per vertex; containing N(v) -> X0 (absorbed at the root)
        sx = ZERO64
        h = I32(gl)
        while h < caph:
            u = ld(Wr, I32(oHK + h))
            if u >= 0:
                c = ld(Wr, I32(oHC + h))
                if c == d and u > v:
                    sx += elem_u(orig[u], cand_left)
                    p = cuda.atomic.add(sh, (g, S_C0), 1)
                    st(Wr, I32(oHC + h), -1)
                    if ROUNDS:
                        # R''s ids go on its stack once the hash is dead: meanwhile in the
                        # slots' ids past the last slot (slots + these <= n_b)
                        st(Wr, I32(oSG + sh[g, S_NB] - 1 - p), u)
                else:
                    s = I32(cuda.atomic.add(sh, (g, S_N), 1))
                    st(Wr, I32(oSG + s), u)
                    st(Wr, I32(oSO + s), cuda.atomic.add(sh, (g, S_C1), c))
                    st(Wr, I32(oSL + s), c)
                    st(Wr, I32(oKEY + s), 0)  # fill cursor for pass 3
                    st(Wr, I32(oHC + h), s)
            h = I32(h + G)
        cuda.atomic.add(shu, (g, U_SUMX), sx)
        gsync()
        n = sh[g, S_N]
        # pass 3: the lists (local ids), each in arbitrary order
        j = I32(0)
        t = I32(gl)
        while t < W:
            j, u = wedge_at(A, R, oPRE, oST, adjU, offV, adjV, base, j, t)
            if RS or u != v:
                s = hash_find(A, R, oHK, oHC, u, mask)
                if s >= 0:
                    p = cuda.atomic.add(A, R + oKEY + s, 1)
                    st(Wr, I32(oLST + ld(Wr, I32(oSO + s)) + p), j)
            t = I32(t + G)
        gsync()
        # the search view (overwrites the hash): P = every slot of higher rank
        oPARR = sh[g, S_OFF + K_PARR]
        oDL = sh[g, S_OFF + K_DL]
        oLV = sh[g, S_OFF + K_LV]
        oQ = sh[g, S_OFF + K_Q]
        sl = ZERO64
        jj = I32(gl)
        while jj < d:
            st(Wr, I32(oDL + jj), 0)
            sl += elem_v(adjU[base + jj], cand_left)
            jj = I32(jj + G)
        if ROUNDS:
            # R at the root: v and the vertices containing N(v)
            jj = I32(gl)
            while jj <= sh[g, S_C0]:
                rx_put(A, sh, g, R, jj, v if jj == 0 else ld(Wr, I32(oSG + sh[g, S_NB] - jj)))
                jj = I32(jj + G)
        cuda.atomic.add(shu, (g, U_SUML), sl)
        if gl == 0:
            sh[g, S_C1] = 0  # P slots
            sh[g, S_C2] = 0  # Q slots (noRS)
        gsync()
        s = I32(gl)
        while s < n:
            st(Wr, I32(oKEY + s), ld(Wr, I32(oSL + s)))
            st(Wr, I32(oTAG + s), 1)
            if RS or ld(Wr, I32(oSG + s)) > v:
                p = cuda.atomic.add(sh, (g, S_C1), 1)
                st(Wr, I32(oPARR + p), s)
            else:
                p = cuda.atomic.add(sh, (g, S_C2), 1)
                st(Wr, I32(oQ + p), s)
            s = I32(s + G)
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

    return SimpleNamespace(offsets_to_shared=offsets_to_shared, fetch_task=fetch_task)
