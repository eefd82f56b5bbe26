"""Compact arrays and the lookup table (paper §III-B, §III-E), over a task's local ids.

L at level l is a prefix of the list of the vertex chosen one level up; membership is
the lookup table ``DL[j] >= l`` (the deepest level whose L holds j).  Every slot's list
keeps nested prefixes, ``LST[u][0:key_l(u)] = N(u) ∩ L_l``, so a node scans only what
is left of a list, and a child only permutes inside its parent's prefix (``compact``)."""

from __future__ import annotations

from types import SimpleNamespace

from numba import cuda

from cumbe.kernel.arena import base_at, ld, st
from cumbe.kernel.consts import I32, I64, S_C0, S_C1, S_C2, S_OFF, SHIFT, U_SUML, WARP, ZERO64
from cumbe.kernel.sync import warp_min, warp_sum
from cumbe.layout import K_AUX, K_AUX2, K_DL, K_KEY, K_LST, K_LV, K_PARR, K_Q, K_SG, K_SL, K_SO
from cumbe.layout import K_TAG
from mbebench import fingerprint as _fpmod

_fp = _fpmod.compile_with(cuda.jit(device=True))
left_elem = _fp.left_elem
right_elem = _fp.right_elem
combine_sides = _fp.combine_sides


def make_lists(cfg, grp):
    """The list steps for the switches ``cfg`` and the worker kind ``grp``."""
    dev, G, gsync = cfg.dev, grp.size, grp.sync
    # A group's per-node sums and minima (the L and R' fingerprint sums, the selection's
    # minimum) reach their shared word once a warp, after shuffles: a 64-bit atomic on shared
    # memory is a compare-and-swap loop that 32 lanes on one word run 32 times, 8 % of the
    # warps' time on planted-xl-e2.3 (docs/gpu-performance.md, "A dense-core grade").  The
    # rounds build only: the paper's build keeps its machine code.
    SHUFFLED = cfg.rounds

    @dev
    def group_add(shu, g, slot, gl, s):
        """shu[g, slot] += the group's lanes' s (every lane of the group calls it)."""
        if SHUFFLED:
            s = warp_sum(s)
            if gl % WARP == 0:
                cuda.atomic.add(shu, (g, slot), s)
        else:
            cuda.atomic.add(shu, (g, slot), s)

    @dev
    def group_min(sh64, g, slot, gl, v):
        """sh64[g, slot] = min(it, the group's lanes' v) (every lane of the group calls it;
        the rounds build only)."""
        v = warp_min(v)
        if gl % WARP == 0:
            cuda.atomic.min(sh64, (g, slot), v)

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

    # The arena's field offsets, read from the group's shared slots in three fixed sets: a
    # step unpacks the set it needs (unused loads are dropped when inlined).  Each set is in
    # the order its steps read them before: the order moves the register allocation, and in
    # these orders every build's machine code is what it was (tools/kernel_text.py).
    @dev
    def list_fields(sh, g):
        """The candidate lists: (KEY, TAG, SO, SL, LST, DL), what level_key reads."""
        return (sh[g, S_OFF + K_KEY], sh[g, S_OFF + K_TAG], sh[g, S_OFF + K_SO],
                sh[g, S_OFF + K_SL], sh[g, S_OFF + K_LST], sh[g, S_OFF + K_DL])

    @dev
    def slot_fields(sh, g):
        """The slots' vertices and lists: (SG, SO, SL, KEY, TAG, LST), what building a
        task's lists (fetching, stealing) writes."""
        return (sh[g, S_OFF + K_SG], sh[g, S_OFF + K_SO], sh[g, S_OFF + K_SL],
                sh[g, S_OFF + K_KEY], sh[g, S_OFF + K_TAG], sh[g, S_OFF + K_LST])

    @dev
    def node_fields(sh, g):
        """The search's state: (PARR, AUX, SG, LV, Q), candidates, their counts, their
        vertices, the level table and noRS's Q."""
        return (sh[g, S_OFF + K_PARR], sh[g, S_OFF + K_AUX], sh[g, S_OFF + K_SG],
                sh[g, S_OFF + K_LV], sh[g, S_OFF + K_Q])

    @dev
    def level_key(A, R, u, lvl, nid, oKEY, oTAG, oSO, oSL, oLST, oDL, write):
        """key_l(u) = |N(u) ∩ L_l| (the length of u's level-l list prefix).  A key cached
        by a deeper node of this level's subtree is a prefix of the level's: scan
        forward from it while the entries lie in L_l."""
        W = base_at(A, R)
        if ld(W, I32(oTAG + u)) == nid:
            return ld(W, I32(oKEY + u))
        k = ld(W, I32(oKEY + u))
        o = I32(oLST + ld(W, I32(oSO + u)))
        end = ld(W, I32(oSL + u))
        while k < end and ld(W, I32(oDL + ld(W, I32(o + k)))) >= lvl:
            k = I32(k + 1)
        if write:
            st(W, I32(oKEY + u), k)
            st(W, I32(oTAG + u), nid)
        return k

    @dev
    def order_key(A, R, oSL, oSG, u):
        """u's place in a task's fixed level-0 order (pieces of a task): its level-0 key
        (its whole list, L being N(v)), then its vertex."""
        return I64(A[R + oSL + u]) * SHIFT + I64(A[R + oSG + u])

    @dev
    def partition_list(A, R, u, k, lvl, oSO, oLST, oDL):
        """Move the entries of u's prefix [0:k] that lie in L' (DL >= lvl) to its front;
        returns how many (|N(u) ∩ L'|).  In place: the nesting of prefixes survives."""
        W = base_at(A, R)
        o = I32(oLST + ld(W, I32(oSO + u)))
        a = I32(0)
        b = I32(k)
        while a < b:
            j = ld(W, I32(o + a))
            if ld(W, I32(oDL + j)) >= lvl:
                a = I32(a + 1)
            else:
                b = I32(b - 1)
                st(W, I32(o + a), ld(W, I32(o + b)))
                st(W, I32(o + b), j)
        return a

    # ``o`` is an absolute arena index: a stolen task's lists are in its victim's arena
    @dev
    def stamp(A, R, oDL, o, gl, k, lvl):
        """DL[j] = lvl for the k entries j of the list at A[o], the group's lanes strided."""
        W = base_at(A, R)
        e = I32(gl)
        while e < k:
            st(W, I32(oDL + A[o + e]), lvl)
            e = I32(e + G)

    @dev
    def stamp_lprime(A, shu, g, gl, R, oDL, o, k, lvl, adjU, base, cand_left):
        """Stamp the list at A[o:o+k] as L' (level lvl) and add its element hashes to the
        group's L sum."""
        W = base_at(A, R)
        NV = base_at(adjU, base)
        s = ZERO64
        e = I32(gl)
        while e < k:
            j = A[o + e]
            st(W, I32(oDL + j), lvl)
            s += elem_v(ld(NV, j), cand_left)
            e = I32(e + G)
        group_add(shu, g, U_SUML, gl, s)

    @dev
    def compact(A, sh, g, gl, R, npc, np_, ntw, kl, push, nid2):
        """Reorder the live candidates [0:npc): P' first when a child is pushed (their
        counts become the child's cached keys), twins last (they leave P: positions
        >= the new pc hold tried vertices)."""
        oPARR, oAUX, _sg, _lv, _q = node_fields(sh, g)
        oAUX2 = sh[g, S_OFF + K_AUX2]
        oKEY, oTAG, _so, _sl, _lst, _dl = list_fields(sh, g)
        if gl == 0:
            sh[g, S_C0] = 0
            sh[g, S_C1] = 0
            sh[g, S_C2] = 0
        gsync()
        W = base_at(A, R)
        nfront = I32(np_ if push else 0)
        nmid = I32(npc - ntw - nfront)
        i = I32(gl)
        while i < npc:
            c = ld(W, I32(oAUX + i))
            u = ld(W, I32(oPARR + i))
            if c < 0:
                p = I32(nfront + nmid + cuda.atomic.add(sh, (g, S_C2), 1))
            elif push and c > 0 and c < kl:
                p = I32(cuda.atomic.add(sh, (g, S_C0), 1))
                st(W, I32(oKEY + u), c)
                st(W, I32(oTAG + u), nid2)
            else:
                p = I32(nfront + cuda.atomic.add(sh, (g, S_C1), 1))
            st(W, I32(oAUX2 + p), u)
            i = I32(i + G)
        gsync()
        i = I32(gl)
        while i < npc:
            st(W, I32(oPARR + i), ld(W, I32(oAUX2 + i)))
            i = I32(i + G)
        gsync()

    return SimpleNamespace(group_add=group_add, group_min=group_min, shuffled=SHUFFLED,
                           elem_u=elem_u, elem_v=elem_v, list_fields=list_fields,
                           node_fields=node_fields, slot_fields=slot_fields,
                           level_key=level_key, order_key=order_key,
                           partition_list=partition_list, stamp=stamp,
                           stamp_lprime=stamp_lprime, compact=compact)
