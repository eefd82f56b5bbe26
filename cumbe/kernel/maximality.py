"""The maximality check (paper §III-E, reverse scanning).

The vertices containing L' are the intersection of the V-side lists of L'; L' is maximal
iff that intersection holds only R'.  The check starts from the shortest list and
intersects one list at a time, stopping once the intersection is down to |R'| (ParMBE's
closure test: usually after a few lists).  Lower-ranked vertices and candidates tried
earlier show up there, so no Q is kept.  noRS keeps Q explicitly and scans it at every
node, as the paper's baseline does."""

from __future__ import annotations

from types import SimpleNamespace

from numba import cuda

from cumbe.kernel.arena import base_at, ld, st
from cumbe.kernel.consts import ERR_QCAP, ERR_ROUNDS, I32, I64, MASK32, S_C0, S_C1, S_CBW
from cumbe.kernel.consts import S_NONMAX, S_NQ, S_OFF, S_QCAP, S_R0, S_SURV, WARP
from cumbe.kernel.sync import ballot, warp_min
from cumbe.layout import F_QE, K_CB, K_DL, K_LST, K_Q, K_SL, K_SO


def make_maximality(cfg, grp):
    """The maximality checks for the switches ``cfg`` and the worker kind ``grp``."""
    dev, G, gsync = cfg.dev, grp.size, grp.sync
    # ROUNDS: R''s global ids are kept (rx_slot), and the check leaves them out of its
    # running intersection, testing several lists a round (check_rounds).  A warp's only:
    # the rounds vote by ballot; block-wide workers keep the paper's check and, since blocks
    # steal only from blocks, no stack (its stores would only grow their code)
    # (the rounds compact in place, so R''s stack takes the buffer's second half: nothing
    # else of a warp's uses it under ROUNDS)
    ROUNDS = cfg.rounds and G == WARP
    # HUBS: the check looks a vertex up in a hub's bit row (cumbe.hubs), one load where the
    # binary search in a list of thousands is a chain of a dozen; every worker's check (the
    # block-wide ones' hubs are the longest lists)
    HUBS = cfg.hubs

    @dev
    def bsearch(adj, lo, hi, key):
        """Is key in the sorted segment adj[lo:hi]?  Positions in the segment are 32-bit:
        the host refuses a graph whose tasks reach a list of 2**31 entries
        (cumbe.single_device.check_task_words)."""
        P = base_at(adj, lo)
        a = I32(0)
        b = I32(hi - lo)
        while a < b:
            mid = I32((a + b) >> 1)
            w = ld(P, mid)
            if w < key:
                a = I32(mid + 1)
            elif w > key:
                b = mid
            else:
                return True
        return False

    @dev
    def hub_row(hubs, y):
        """Where y's bit row starts in ``hubs``, or -1: no row (the build has none, the run
        made none, or y's list is short)."""
        if HUBS and hubs.shape[0] > 1:
            return hubs[y]
        return I32(-1)

    @dev
    def in_row(hubs, h, u):
        """Is bit u set in the row at hubs[h]?"""
        return (hubs[I64(h) + (u >> 5)] >> (u & 31)) & 1 != 0

    @dev
    def member(adjV, lo, hi, hubs, h, u):
        """Is u in the list adjV[lo:hi], whose bit row (if any) starts at hubs[h]?"""
        if HUBS and h >= 0:
            return in_row(hubs, h, u)
        return bsearch(adjV, lo, hi, u)

    @dev
    def intersect_one(A, NV, offV, adjV, sh, g, gl, o, e, W, oCB, half, cur, step, m, hubs):
        """One list a barrier: the running intersection (``m`` vertices in buffer half
        ``cur``, the worker's words at ``W``) against list ``e`` of L' (local ids into N(v)
        at ``NV``), the survivors into the other half; returns how many.  Three rotating
        counters (``step``): one barrier a list."""
        cslot = S_R0 + step % 3
        if gl == 0:
            sh[g, S_R0 + (step + 1) % 3] = 0
        y = ld(NV, A[o + e])
        lo = offV[y]
        hi = offV[y + 1]
        h = hub_row(hubs, y)
        src = I32(oCB + cur * half)
        dst = I32(oCB + (1 - cur) * half)
        t = I32(gl)
        # a loop each way, not a branch a vertex (1-4 % off with rows, H200)
        if HUBS and h >= 0:
            while t < m:
                u = ld(W, I32(src + t))
                if in_row(hubs, h, u):
                    st(W, I32(dst + cuda.atomic.add(sh, (g, cslot), 1)), u)
                t = I32(t + G)
        else:
            while t < m:
                u = ld(W, I32(src + t))
                if bsearch(adjV, lo, hi, u):
                    st(W, I32(dst + cuda.atomic.add(sh, (g, cslot), 1)), u)
                t = I32(t + G)
        gsync()
        return sh[g, cslot]

    @dev
    def rx_slot(sh, g, i):
        """Where R''s i-th global id lies (from the worker's base), or -1 past the stack:
        R' is no larger than any list of L' (it lies in all of them), so a check whose
        shortest list fits the buffer finds every one of R''s ids stored."""
        half = I32((sh[g, S_CBW] - 2) // 2)
        if i < half:
            return I32(sh[g, S_OFF + K_CB] + half + i)
        return I32(-1)

    @dev
    def rx_put(A, sh, g, R, i, u):
        """R''s i-th member is vertex u (nothing past the stack)."""
        if ROUNDS:
            s = rx_slot(sh, g, i)
            if s >= 0:
                st(base_at(A, R), s, u)

    @dev
    def move_down(W, gl, oCB, n2, keep, u):
        """One chunk of 32 vertices of the running intersection compacted in place: the
        lanes that ``keep`` their vertex ``u`` store it at ``oCB + n2`` on, in lane order,
        once every lane of the chunk has read its own (survivors only move down); returns
        ``n2`` plus their number.  numba's ballot is a signed 32-bit word: masked, lane
        31's vote is one bit, not the sign."""
        bits = I64(ballot(keep)) & MASK32
        gsync()
        if keep:
            st(W, I32(oCB + n2 + cuda.popc(bits & ((I64(1) << gl) - 1))), u)
        return I32(n2 + cuda.popc(bits))

    @dev
    def move_down4(W, gl, oCB, n2, k0, u0, k1, u1, k2, u2, k3, u3):
        """Four whole chunks of 32 vertices of the running intersection compacted in place
        (as move_down, one barrier for the four)."""
        b0 = I64(ballot(k0)) & MASK32
        b1 = I64(ballot(k1)) & MASK32
        b2 = I64(ballot(k2)) & MASK32
        b3 = I64(ballot(k3)) & MASK32
        gsync()
        below = (I64(1) << gl) - 1
        if k0:
            st(W, I32(oCB + n2 + cuda.popc(b0 & below)), u0)
        n2 = I32(n2 + cuda.popc(b0))
        if k1:
            st(W, I32(oCB + n2 + cuda.popc(b1 & below)), u1)
        n2 = I32(n2 + cuda.popc(b1))
        if k2:
            st(W, I32(oCB + n2 + cuda.popc(b2 & below)), u2)
        n2 = I32(n2 + cuda.popc(b2))
        if k3:
            st(W, I32(oCB + n2 + cuda.popc(b3 & below)), u3)
        return I32(n2 + cuda.popc(b3))

    @dev
    def one_list(A, NV, offV, adjV, W, gl, o, e, S, so, oCB, m, hubs):
        """The running intersection (``m`` vertices from ``so`` in ``S``: the worker's
        buffer at ``oCB``, or at first the shortest list itself) against list ``e`` of L',
        each lane striding over the vertices; the survivors move to ``oCB`` on, in order.
        Returns how many.  Against a hub's bit row, four whole chunks of 32 go together while
        there are, their loads in flight at once (the loop waits on memory: 0.78-0.84x the
        planted-xl grades, 0.95-0.99x the tiles); four binary searches in step, for the
        lists without a row, made the tiles 1.08-1.19x slower (docs/gpu.md)."""
        y = ld(NV, A[o + e])
        lo = offV[y]
        hi = offV[y + 1]
        h = hub_row(hubs, y)
        n2 = I32(0)
        t0 = I32(0)
        if HUBS and h >= 0:  # (a loop each way, as in intersect_one)
            while t0 + 4 * WARP <= m:
                t = I32(so + t0 + gl)
                u0 = ld(S, t)
                u1 = ld(S, I32(t + WARP))
                u2 = ld(S, I32(t + 2 * WARP))
                u3 = ld(S, I32(t + 3 * WARP))
                n2 = move_down4(W, gl, oCB, n2, in_row(hubs, h, u0), u0, in_row(hubs, h, u1),
                                u1, in_row(hubs, h, u2), u2, in_row(hubs, h, u3), u3)
                t0 = I32(t0 + 4 * WARP)
            while t0 < m:
                t = I32(t0 + gl)
                keep = False
                u = I32(-1)
                if t < m:
                    u = ld(S, I32(so + t))
                    keep = in_row(hubs, h, u)
                n2 = move_down(W, gl, oCB, n2, keep, u)
                t0 = I32(t0 + WARP)
        else:
            while t0 < m:
                t = I32(t0 + gl)
                keep = False
                u = I32(-1)
                if t < m:
                    u = ld(S, I32(so + t))
                    keep = bsearch(adjV, lo, hi, u)
                n2 = move_down(W, gl, oCB, n2, keep, u)
                t0 = I32(t0 + WARP)
        gsync()
        return n2

    @dev
    def drop_rprime(W, gl, oCB, m, rxo, target):
        """Strike R' out of the running intersection (sorted, ``m`` vertices at ``oCB``,
        all of R' among them): each lane finds its R' members by binary search and marks
        them with the sign bit (the search compares without it, so a lane reading a word
        another lane marks meanwhile finds the same order), then the unmarked ones move down
        in place.  Returns how many are left (``m - target``)."""
        r = I32(gl)
        while r < target:
            key = ld(W, I32(rxo + r))
            a = I32(0)
            b = I32(m)
            while a < b:
                mid = I32((a + b) >> 1)
                w = ld(W, I32(oCB + mid)) & 0x7FFFFFFF
                if w < key:
                    a = I32(mid + 1)
                elif w > key:
                    b = mid
                else:
                    st(W, I32(oCB + mid), I32(w | -0x80000000))
                    break
            r = I32(r + WARP)
        gsync()
        n2 = I32(0)
        t0 = I32(0)
        while t0 < m:
            t = I32(t0 + gl)
            u = I32(-1)
            if t < m:
                u = ld(W, I32(oCB + t))
            n2 = move_down(W, gl, oCB, n2, u >= 0, u)
            t0 = I32(t0 + WARP)
        gsync()
        return n2

    @dev
    def other_list(p, estar):
        """Which list of L' is the p-th of those other than the shortest (list ``estar``)."""
        e = p
        if p >= estar:
            e = I32(p + 1)
        return e

    @dev
    def check_rounds(A, NV, offV, adjV, W, sh, g, gl, o, kl, target, oCB, half, estar, lo0,
                     dmin, err, hubs):
        """A warp's check that takes R' out of the running intersection once at most 32
        other vertices are left in it (their number is known: R' lies in every list of L',
        so it is the intersection's size less |R'|); until then one list a round, as the
        paper's check.  Then L' is maximal once none is left, and while m are, lane (t, j)
        looks for vertex t in the round's j-th list, 32 // 2**ceil(log2 m) lists a round; a
        vertex is struck out once one lane misses it (one ballot)."""
        m = I32(dmin)
        nl = I32(kl - 1)  # the lists left: every one but the shortest
        out = False  # R' taken out
        p0 = I32(0)
        if m - target > WARP and nl > 0:
            # the first round is one list: it reads the shortest list where it lies, and
            # only its survivors are written (no copy of the whole list first)
            e = I32(0)
            if estar == 0:
                e = I32(1)
            m = one_list(A, NV, offV, adjV, W, gl, o, e, base_at(adjV, lo0), I32(0), oCB, m,
                         hubs)
            p0 = I32(1)
        else:
            t = I32(gl)
            while t < dmin:
                st(W, I32(oCB + t), adjV[lo0 + t])
                t = I32(t + WARP)
            gsync()
        while True:
            if not out and m - target <= WARP:
                if m == target:
                    m = I32(0)
                    break
                left = drop_rprime(W, gl, oCB, m, I32(oCB + half), target)
                if left != m - target and gl == 0:
                    # R' is in every list of L': a stack that misses a member, or a count
                    # gone wrong, is an error, never a count
                    err[0] = ERR_ROUNDS
                m = left
                out = True
            if p0 >= nl:
                break
            if out and m <= WARP:
                # lists in power-of-two strides of lanes (2**lg >= m): shifts and masks, not
                # a 64-bit division (a subroutine call on the GPU, and its spills)
                lg = I32(32 - cuda.clz(I32(m - 1)))  # ceil(log2 m): 0 for m = 1
                k = I32(WARP >> lg)
                j = I32(gl >> lg)
                t = I32(gl & ((I32(1) << lg) - 1))
                p = I32(p0 + j)
                miss = False
                if t < m and p < nl:
                    y = ld(NV, A[o + other_list(p, estar)])
                    miss = not member(adjV, offV[y], offV[y + 1], hubs, hub_row(hubs, y),
                                      ld(W, I32(oCB + t)))
                mine = I32(-1)
                if gl < m:
                    mine = ld(W, I32(oCB + gl))
                bits = I64(ballot(miss)) & MASK32
                dead = I64(0)
                jj = I32(0)
                while jj < k:
                    dead |= bits >> (jj << lg)
                    jj = I32(jj + 1)
                live = ~dead & ((I64(1) << m) - 1)
                gsync()  # every lane has read the vertices before they move
                if gl < m and (live >> gl) & 1:
                    st(W, I32(oCB + cuda.popc(live & ((I64(1) << gl) - 1))), mine)
                gsync()
                m = I32(cuda.popc(live))
                p0 = I32(p0 + k)
            else:
                m = one_list(A, NV, offV, adjV, W, gl, o, other_list(p0, estar), W, oCB, oCB,
                             m, hubs)
                p0 = I32(p0 + 1)
            if out and m == 0:
                break
        if gl == 0 and m > 0:
            sh[g, S_NONMAX] = 1

    @dev
    def check_maximality(A, adjU, offV, adjV, sh, g, gl, R, base, o, kl, target, err, hubs):
        """Reverse scan: the vertices containing L' (local ids at A[o:o+kl]) are the
        intersection of the V-side lists of L'.  Start from the shortest list and
        intersect one list at a time; L' is maximal iff the running intersection comes
        down to |R'| (= target) vertices, which it holds in any case (ParMBE's closure
        test: it usually stops after a few lists).  Sets S_NONMAX."""
        W = base_at(A, R)
        NV = base_at(adjU, base)  # N(v): L' holds local ids into it
        oCB = sh[g, S_OFF + K_CB]
        half = I32((sh[g, S_CBW] - 2) // 2)
        if gl == 0:
            sh[g, S_SURV] = 0
            sh[g, S_C0] = 0x7FFFFFFF
            sh[g, S_C1] = 0
            for r in range(3):  # the rotating counters
                sh[g, S_R0 + r] = 0
        gsync()
        if ROUNDS:
            # a warp's: the shortest list, the last of the shortest, in one pass and one
            # shuffled minimum of (length, -index), where the block-wide check takes two
            # passes, two shared atomics and two barriers
            key = I64(0x7FFFFFFFFFFFFFFF)
            e = I32(gl)
            while e < kl:
                y = ld(NV, A[o + e])
                dy = min(offV[y + 1] - offV[y], I64(0x7FFFFFFE))
                key = min(key, (I64(dy) << 32) | I64(0x7FFFFFFF - e))
                e = I32(e + WARP)
            key = warp_min(key)
            dmin = I32(key >> 32)
            if dmin <= target:
                return
            estar = I32(0x7FFFFFFF - (key & MASK32))
        else:
            best = I64(0x7FFFFFFFFFFFFFFF)
            e = I32(gl)
            while e < kl:
                y = ld(NV, A[o + e])
                dy = offV[y + 1] - offV[y]
                if dy < best:
                    best = dy
                e = I32(e + G)
            cuda.atomic.min(sh, (g, S_C0), I32(best) if best < 0x7FFFFFFF else I32(0x7FFFFFFE))
            gsync()
            dmin = sh[g, S_C0]
            if dmin <= target:
                return
            e = I32(gl)
            while e < kl:
                y = ld(NV, A[o + e])
                if offV[y + 1] - offV[y] == dmin:
                    cuda.atomic.max(sh, (g, S_C1), I32(e + 1))
                e = I32(e + G)
            gsync()
            estar = sh[g, S_C1] - 1
        ys = ld(NV, A[o + estar])
        lo0 = offV[ys]
        if dmin <= half:
            if ROUNDS:  # (the paper's list after list is then not compiled in)
                check_rounds(A, NV, offV, adjV, W, sh, g, gl, o, kl, target, oCB, half, estar,
                             lo0, dmin, err, hubs)
                return
            t = I32(gl)
            while t < dmin:
                st(W, I32(oCB + t), adjV[lo0 + t])
                t = I32(t + G)
            gsync()
            m = dmin
            cur = 0
            step = 0
            for e in range(kl):
                if e == estar:
                    continue
                m = intersect_one(A, NV, offV, adjV, sh, g, gl, o, e, W, oCB, half, cur, step,
                                  m, hubs)
                cur = 1 - cur
                step += 1
                if m <= target:
                    break
            if gl == 0 and m > target:
                sh[g, S_NONMAX] = 1
            return
        # every list of L' is longer than the buffer: test each vertex of the shortest
        # against all the others
        t = I32(gl)
        while t < dmin:
            if sh[g, S_SURV] > target:
                break
            u = adjV[lo0 + t]
            ok = True
            for e in range(kl):
                if e != estar:
                    y = ld(NV, A[o + e])
                    if not member(adjV, offV[y], offV[y + 1], hubs, hub_row(hubs, y), u):
                        ok = False
                        break
            if ok:
                cuda.atomic.add(sh, (g, S_SURV), 1)
            t = I32(t + G)
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
        i = I32(qs + gl)
        while i < qe:
            q = A[R + oQ + i]
            o = R + oLST + A[R + oSO + q]
            c = I32(0)
            e = I32(0)
            e_end = A[R + oSL + q]
            while e < e_end:
                if A[R + oDL + A[o + e]] >= l + 1:
                    c = I32(c + 1)
                e = I32(e + 1)
            if c == kl:
                sh[g, S_NONMAX] = 1
            elif c > 0:
                p = cuda.atomic.add(sh, (g, S_NQ), 1)
                if qe + ntw + p < qcap:
                    A[R + oQ + qe + ntw + p] = q
                else:
                    err[0] = ERR_QCAP
            i = I32(i + G)

    @dev
    def q_append(A, sh, g, R, oQ, lv, x, err):
        """noRS: a tried vertex joins the level's Q; an overflow is an error, never a count."""
        qe = A[lv + F_QE]
        if qe < sh[g, S_QCAP]:
            A[R + oQ + qe] = x
            A[lv + F_QE] = qe + 1
        else:
            err[0] = ERR_QCAP

    return SimpleNamespace(check_maximality=check_maximality, check_q=check_q, q_append=q_append,
                           rx_put=rx_put, rx_slot=rx_slot, rounds=ROUNDS)
