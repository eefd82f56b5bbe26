"""Numba kernel of ParMBE: the per-vertex subproblems, MineLMBC inside each.

Notation.  ``U`` is the side we split on (its CSR arrays ``uo``/``ui``), ``V``
the other side (``vo``/``vi``).  ``rank`` orders ``U`` by (degree, id).  A
maximal biclique is a closed pair (A, B), A ⊆ U, B ⊆ V, B = Γ(A), A = Γ(B), both
non-empty.  It belongs to the subproblem of the lowest-rank vertex v of A.

Subproblem of v (all of it lives inside N(v), whose vertices get local ids
0..d-1 by position in v's sorted neighbour list):

* X0 = closure({v}) = {u : N(v) ⊆ N(u)}.  If X0 holds a vertex of lower rank
  than v, every closed A ∋ v does too (A ⊇ X0), so the subproblem is empty.
  Otherwise (X0, N(v)) is reported.
* tail = {u ∈ N2(v) \\ X0 : rank(u) > rank(v)}: every other vertex of a closed
  A with min-rank v is adjacent to some vertex of Γ(A) ⊆ N(v), so it is in N2(v).
* MineLMBC node (X, Γ(X), tail): tail sorted by ascending |N(w) ∩ Γ(X)|; for
  each w in that order, removed from the tail first: Γ' = Γ(X) ∩ N(w) and the
  closure Y = Γ(Γ').  The branch is kept iff Y \\ (X ∪ {w}) ⊆ remaining tail;
  then (Y, Γ') is reported and the node (Y, Γ', remaining tail \\ Y) searched.
  Every closed Z ⊋ X with Z \\ X ⊆ tail is reached exactly once: through its
  first tail vertex in the node's order.

Implementation of the branch test (:mod:`baselines._parmbe_check`).  While building the
child's tail we count |N(u) ∩ Γ'| for every u of the remaining tail; those with count |Γ'| are
the part of Y in the tail ("absorbed").  X ∪ {w} ∪ absorbed ⊆ Y always, so the
branch is kept iff |Y| = |X| + 1 + |absorbed|.  |Y| = |∩_{y∈Γ'} N(y)| is
counted by intersecting the global neighbour lists of Γ' starting from the
shortest one, stopping as soon as the running intersection has shrunk to that
size.  No "Q" (excluded) set is kept at all, so a hub on the V side, which
makes every vertex's excluded set huge, costs nothing here.

Tail vertices whose count equals |Γ'| and whose whole current list equals Γ'
would give the very same Γ' later and fail the test (w is no longer in the
tail then); they are flagged and skipped (iMBEA's pruning).

Task decomposition: a task is a list of (v, k, K): run the subproblem of v but
only the first-level branches i with i % K == k (K = 1: the whole subproblem;
the top biclique (X0, N(v)) is reported by k == 0 only).  Which subproblems
are split, and into how many pieces, is decided before any task runs (see
:func:`baselines.parmbe_plan.plan_tasks`, which uses the kernels of
:mod:`baselines._parmbe_plan_kernel`).

The per-graph scratch arrays (``cnt``, ``slot``, ``touched``: one entry per U
vertex; ``buf``: the largest V degree; :func:`baselines.parmbe_plan.new_scratch`) are
allocated once by the caller and handed to every call: a task is often a few
milliseconds of work, and allocating and initialising O(|U|) memory plus scanning
all of V per task would be a per-task cost that grows with the number of tasks.
``cnt`` must be all zeros and ``slot`` all -1 on entry; both are left that way on return.

``run_tasks`` is the engine's search; ``build(skip=False)`` makes it without
the skip flags (the work analysis measures what they save).  More switches
are for the work analysis only: ``vmajor`` runs the branch test vertex by vertex,
``wcache`` first tries the last few lower-ranked vertices that rejected a
branch of the task (a lower-ranked vertex is never in X', so one containing Γ'
rejects the branch without the test), and ``wstatic=K`` tries instead the task's K
lower-ranked 2-hop vertices with the most common neighbours with v, chosen once
at the task's start from the two-hop counts it makes anyway; ``dense=T`` runs the
subtrees whose Γ holds at most T vertices on bit words (:mod:`baselines._parmbe_words`).
Work counters (:mod:`baselines._work`) are on when ``ctr`` is an array and compiled
out when it is ``None`` (the engine).

Why one module of about 550 lines: most of it is one compiled function, the search loop
with its explicit stack of frames (the branch test and the bit words are apart, in
:mod:`baselines._parmbe_check` and :mod:`baselines._parmbe_words`); its state lives in the
loop's locals, so cutting the loop into functions would pass a dozen arrays and cursors
around, and the switches must stay constants of that one function for numba to prune them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from baselines import _work as work_counters
from baselines._imbea_parts import _cttz, _popcnt
from baselines._parmbe_check import (
    _closure_is_vmajor,
    _closure_size,
    _contains_all,
    _witness_is_left,
)
from baselines._parmbe_words import MAXW, clear_words, closure_exceeds, low_mask, words_of
from baselines._sort import insertion_sort
from mbebench.fingerprint import combine_sides_nb, left_elem_nb, mix_nb, right_elem_nb
from mbebench.jitcache import keyed


@keyed
@njit(cache=True, nogil=True, inline="always")
def _elem(x, is_left):
    if is_left:
        return left_elem_nb(x)
    return right_elem_nb(x)


@keyed
@njit(cache=True, nogil=True)
def _reserve(a, cap, need):
    """``a`` with room for ``need`` items; capacity at least doubles when it grows."""
    if need <= cap:
        return a, cap
    cap = max(need, 2 * cap)
    b = np.zeros(cap, a.dtype)
    b[: a.shape[0]] = a
    return b, cap


@keyed
@njit(cache=True, nogil=True)
def _reserve_slots(vid, aoff, alen, skip, cap, need):
    """The four per-slot arrays, grown together (they share one capacity)."""
    vid, new_cap = _reserve(vid, cap, need)
    aoff, _ = _reserve(aoff, cap, need)
    alen, _ = _reserve(alen, cap, need)
    skip, _ = _reserve(skip, cap, need)
    return vid, aoff, alen, skip, new_cap


@keyed
@njit(cache=True, nogil=True)
def _sort_slots(vid, aoff, alen, lo, hi):
    """Stable sort of slots [lo, hi) by ascending alen."""
    n = hi - lo
    if n <= 24:
        insertion_sort(alen, lo, hi, (vid, aoff))
    else:
        order = np.argsort(alen[lo:hi], kind="mergesort")
        tv = vid[lo:hi].copy()
        to = aoff[lo:hi].copy()
        tl = alen[lo:hi].copy()
        for a in range(n):
            o = order[a]
            vid[lo + a] = tv[o]
            aoff[lo + a] = to[o]
            alen[lo + a] = tl[o]


@keyed
@njit(cache=True, nogil=True)
def _count_two_hop(v, uo, ui, vo, vi, cnt, touched):
    """cnt[u] = |N(u) ∩ N(v)| for every u of N2(v) (v itself included), each
    such u listed once in ``touched``; returns how many were listed."""
    nt = 0
    for j in range(uo[v], uo[v + 1]):
        y = ui[j]
        for e in range(vo[y], vo[y + 1]):
            u = vi[e]
            if cnt[u] == 0:
                touched[nt] = u
                nt += 1
            cnt[u] += 1
    return nt


@keyed
@njit(cache=True, nogil=True, inline="always")
def _split_two_hop(v, d, rank, cnt, touched, nt, u_is_left):
    """Classify N2(v) after :func:`_count_two_hop` (the rule lives here once, for
    the subproblem and for the planner's tail lengths).  Returns (killed, npp,
    tot, sum_x, nx): killed if a lower-rank u has N(v) in N(u) (another
    subproblem finds these bicliques); npp tail vertices (higher rank, partial
    overlap) with tot overlap in all; X0 = v and the higher-rank u with N(u)
    containing N(v), nx of them with element-hash sum sum_x.  Stops at killed."""
    rv = rank[v]
    killed = False
    sum_x = _elem(v, u_is_left)
    nx = 1
    npp = 0
    tot = 0
    for idx in range(nt):
        u = touched[idx]
        if u == v:
            continue
        c = cnt[u]
        if rank[u] < rv:
            if c == d:
                killed = True
                break
        elif c == d:
            sum_x += _elem(u, u_is_left)
            nx += 1
        else:
            npp += 1
            tot += c
    return killed, npp, tot, sum_x, nx


@keyed
@njit(cache=True, nogil=True)
def _memo_slot(mk1, mk2, mln, h1, h2, ln):
    """The memo's slot for the set with hashes (h1, h2) and size ln: its own, or the empty
    one where it would go (open addressing; a table that is full is an error)."""
    mask = np.uint64(mk1.shape[0] - 1)
    i = h1 & mask
    for _ in range(mk1.shape[0]):
        j = np.int64(i)
        if mln[j] == 0 or (mln[j] == ln and mk1[j] == h1 and mk2[j] == h2):
            return j
        i = (i + np.uint64(1)) & mask
    raise RuntimeError("the memo of build(memo=True) is full")


@keyed
@njit(cache=True, nogil=True)
def _memo_grow(mk1, mk2, mln, mrk, mvx):
    """The memo's table at twice the size, every entry in its new slot."""
    n = 2 * mk1.shape[0]
    k1 = np.zeros(n, np.uint64)
    k2 = np.zeros(n, np.uint64)
    ln = np.zeros(n, np.int32)
    rk = np.zeros(n, np.int32)
    vx = np.zeros(n, np.int32)
    for i in range(mk1.shape[0]):
        if mln[i] != 0:
            j = _memo_slot(k1, k2, ln, mk1[i], mk2[i], mln[i])
            k1[j] = mk1[i]
            k2[j] = mk2[i]
            ln[j] = mln[i]
            rk[j] = mrk[i]
            vx[j] = mvx[i]
    return k1, k2, ln, rk, vx


_BUILDS: dict = {}
WCAP = 4  # witnesses a task keeps (build(wcache=True))


def build(skip=True, vmajor=False, wcache=False, wstatic=0, dense=0, degcut=False, memo=0):
    """The search (``run_tasks``) for one setting of the work-analysis switch.

    ``skip``: flag tail vertices whose whole list equals Γ' and skip them (the
    engine; False only for the work analysis, which measures what
    the flags save).  The switch is a constant of the compiled code: the
    engine's build has no trace of the other setting.  ``dense=T`` (1..64) runs every
    subtree whose root's Γ holds at most T vertices on bit words
    (:mod:`baselines._parmbe_words`); not with ``vmajor``, ``wcache`` or ``wstatic``.
    ``memo`` (the work analysis's model, with counters only; alone): every branch's Γ' is
    looked up in a memo of the Γ's tested before, anywhere in the run, each with the
    lowest-ranked vertex of its closure (1: every one, in an open-addressed table that
    doubles when half full; K > 1: a table of 2**K slots, a Γ' to the slot its hash
    names, the last one tested there kept, as a GPU's table of bounded size would); a
    branch whose Γ' is there with a vertex ranked below the task's root that contains Γ'
    (checked) is counted as one the memo settles.
    Every Γ' is closed, so a branch is rejected exactly when its biclique is another
    branch's (in another task: the one of its lowest-ranked vertex); the search itself is
    unchanged.  In this serial search a task's own branches meet a Γ' after the one that
    reports it, but where subtrees are stolen they need not: the memo settles only by a
    witness below the root, whatever the order.  Memoised.
    """
    key = (bool(skip), bool(vmajor), bool(wcache), int(wstatic), int(dense), bool(degcut),
           int(memo))
    if key in _BUILDS:
        return _BUILDS[key]
    SKIP, VMAJOR, WCACHE, WSTATIC, DENSE, DEGCUT, MEMO = key
    if not 0 <= DENSE <= MAXW or (DENSE and (VMAJOR or WCACHE or WSTATIC)):
        raise ValueError(f"dense must be 0..{MAXW}, and 0 with vmajor, wcache or wstatic")
    if MEMO and (VMAJOR or WCACHE or WSTATIC or DENSE or DEGCUT):
        raise ValueError("memo is a switch of its own")
    NWS = max(WSTATIC, 1)

    @keyed
    @njit(cache=True, nogil=True)
    def run_tasks(uo, ui, vo, vi, rank, verts, ks, nks, u_is_left, cnt, slot, touched, buf, ctr):
        """Run the tasks (verts[t], ks[t], nks[t]); see the module docstring.
        ``ctr``: None, or the work counters of :mod:`baselines._work` to add to.

        Returns (count, fingerprint)."""
        count = np.int64(0)
        fp = np.uint64(0)
        v_is_left = not u_is_left

        maxd = 1
        for t in range(verts.shape[0]):
            v = verts[t]
            d = uo[v + 1] - uo[v]
            if d > maxd:
                maxd = d

        mark = np.zeros(maxd, np.int64)
        token = np.int64(0)
        velem = np.empty(maxd, np.uint64)
        wc = np.zeros(WCAP, np.int64)
        ws_u = np.zeros(NWS, np.int64)
        ws_c = np.zeros(NWS, np.int64)
        wsn = 0

        vcap = 1024
        vid = np.empty(vcap, np.int32)
        aoff = np.empty(vcap, np.int64)
        alen = np.empty(vcap, np.int32)
        skip = np.zeros(vcap, np.uint8)
        acap = 4096
        adj = np.empty(acap, np.int32)

        fcap = maxd + 2
        # the work analysis's model of a test that knows P (_witness_is_left): the tried
        # candidates of the node's path, marked with their depth + 1
        nq = 1
        if ctr is not None:
            nq = rank.shape[0]
        qmark = np.zeros(nq, np.int64)
        f_qdone = np.zeros(fcap, np.int64)
        wbuf = np.empty(nq, np.int32)
        # (the memo behind ``if MEMO``, a constant of the build, as the words: no trace of
        # it in the other builds)
        if MEMO:
            nm = 1 << 12 if MEMO == 1 else 1 << MEMO
            mused = 0
            mk1 = np.zeros(nm, np.uint64)
            mk2 = np.zeros(nm, np.uint64)
            mln = np.zeros(nm, np.int32)  # 0: an empty slot (a Γ' is never empty)
            mrk = np.zeros(nm, np.int32)  # the least rank in the closure
            mvx = np.zeros(nm, np.int32)  # ... and its vertex
        f_sumx = np.empty(fcap, np.uint64)
        f_nx = np.empty(fcap, np.int64)
        f_p0 = np.empty(fcap, np.int64)
        f_np = np.empty(fcap, np.int64)
        f_i = np.empty(fcap, np.int64)
        f_step = np.empty(fcap, np.int64)
        f_vtop = np.empty(fcap, np.int64)
        f_atop = np.empty(fcap, np.int64)
        f_atot = np.empty(fcap, np.int64)
        # Every use of the bit words is behind ``if DENSE`` (a constant of the build), whose
        # branch numba prunes before typing: the other builds have no trace of them.
        if DENSE:
            # the subtree of frame ``droot`` (-1: none) runs on the words of its Γ, whose
            # position j is local id gam[j]; f_g: a frame's Γ as a word
            wslot = np.full(rank.shape[0], -1, np.int32)
            wvert = np.empty(16, np.int32)
            wword = np.empty(16, np.uint64)
            ylist = np.empty(16, np.int32)
            yoff = np.zeros(MAXW + 1, np.int64)
            ycnt = np.zeros((MAXW, MAXW + 2), np.int64)
            hist = np.zeros(MAXW + 2, np.int64)
            gcnt = np.zeros(MAXW + 2, np.int64)
            gam = np.empty(MAXW, np.int32)
            f_g = np.zeros(fcap, np.uint64)
            droot = -1
            nw = 0

        for t in range(verts.shape[0]):
            v = verts[t]
            k = ks[t]
            kk = nks[t]
            base = uo[v]
            d = uo[v + 1] - base
            if d == 0:
                continue
            if ctr is not None:
                ctr[work_counters.C_TASKS] += 1
                for j in range(d):
                    y = ui[base + j]
                    ctr[work_counters.C_N2] += vo[y + 1] - vo[y]
            # --- count |N(u) ∩ N(v)| for every u in N2(v) -------------------
            ntouched = _count_two_hop(v, uo, ui, vo, vi, cnt, touched)
            killed, npp, tot, sum_x, nx = _split_two_hop(
                v, d, rank, cnt, touched, ntouched, u_is_left
            )
            rv = rank[v]
            wcn = 0
            if killed:
                if ctr is not None:
                    ctr[work_counters.C_KILLED] += 1
                for idx in range(ntouched):
                    cnt[touched[idx]] = 0
                continue
            if WSTATIC:
                # the K lower-ranked 2-hop vertices with the most common neighbours, by
                # insertion into a short sorted list
                wsn = 0
                for idx in range(ntouched):
                    u = touched[idx]
                    c = cnt[u]
                    if rank[u] < rv and (wsn < WSTATIC or c > ws_c[wsn - 1]):
                        p = min(wsn, WSTATIC - 1)
                        while p > 0 and ws_c[p - 1] < c:
                            ws_c[p] = ws_c[p - 1]
                            ws_u[p] = ws_u[p - 1]
                            p -= 1
                        ws_c[p] = c
                        ws_u[p] = u
                        wsn = min(wsn + 1, WSTATIC)
            sum_v = np.uint64(0)
            for j in range(d):
                velem[j] = _elem(ui[base + j], v_is_left)
                sum_v += velem[j]
            # --- root frame: the tail with its lists restricted to N(v) -----
            vid, aoff, alen, skip, vcap = _reserve_slots(vid, aoff, alen, skip, vcap, npp)
            adj, acap = _reserve(adj, acap, tot)
            s = 0
            off = 0
            for idx in range(ntouched):
                u = touched[idx]
                c = cnt[u]
                if u != v and rank[u] > rv and c < d:
                    vid[s] = u
                    aoff[s] = off
                    alen[s] = 0
                    skip[s] = 0
                    slot[u] = s
                    s += 1
                    off += c
            if ctr is not None:
                ctr[work_counters.C_P1] += npp
                if npp > 0:
                    for j in range(d):
                        y = ui[base + j]
                        ctr[work_counters.C_BUILD] += vo[y + 1] - vo[y]
            for j in range(d):
                y = ui[base + j]
                for e in range(vo[y], vo[y + 1]):
                    si = slot[vi[e]]
                    if si >= 0:
                        adj[aoff[si] + alen[si]] = j
                        alen[si] += 1
            for idx in range(ntouched):
                u = touched[idx]
                cnt[u] = 0
                slot[u] = -1
            if k == 0:
                count += 1
                fp += combine_sides_nb(sum_x, sum_v, u_is_left)
                if ctr is not None:
                    ctr[work_counters.C_REPORT] += d
            if npp == 0:
                continue
            _sort_slots(vid, aoff, alen, 0, npp)
            if ctr is not None:
                ctr[work_counters.C_SORT] += npp
            if DENSE and d <= DENSE:
                for j in range(d):
                    gam[j] = j
                nw, wvert, wword, ylist = words_of(ui, vo, vi, base, gam, d, wslot, wvert,
                                                   wword, ylist, yoff, ycnt, hist, gcnt, ctr)
                f_g[0] = low_mask(d)
                droot = 0
            depth = 0
            f_sumx[0] = sum_x
            f_nx[0] = nx
            f_p0[0] = 0
            f_np[0] = npp
            f_i[0] = k
            f_qdone[0] = 0
            f_step[0] = kk
            f_vtop[0] = npp
            f_atop[0] = tot
            f_atot[0] = tot
            # --- depth-first search, explicit stack -------------------------
            while depth >= 0:
                i = f_i[depth]
                if i >= f_np[depth]:
                    if ctr is not None:
                        for j in range(f_qdone[depth]):
                            qmark[vid[f_p0[depth] + j]] = 0
                    if DENSE and depth == droot:
                        clear_words(wslot, wvert, nw)
                        droot = -1
                    depth -= 1
                    continue
                f_i[depth] = i + f_step[depth]
                p0 = f_p0[depth]
                if ctr is not None:
                    # every slot before this one was tried here (or by another piece)
                    for j in range(f_qdone[depth], i):
                        qmark[vid[p0 + j]] = depth + 1
                    f_qdone[depth] = max(f_qdone[depth], i)
                ws = p0 + i
                if skip[ws]:
                    continue
                lo = aoff[ws]
                ln = alen[ws]
                dn = False
                if DENSE and droot >= 0:
                    dn = True
                    gx = wword[wslot[vid[ws]]] & f_g[depth]
                if not dn:
                    token += 1
                    for e in range(lo, lo + ln):
                        mark[adj[e]] = token
                vtop = f_vtop[depth]
                atop = f_atop[depth]
                pend = p0 + f_np[depth]
                if ctr is not None:
                    ctr[work_counters.C_NODES] += 1
                    ctr[work_counters.C_LPRIME] += ln
                    ctr[work_counters.C_PVERTS] += pend - ws - 1
                if MEMO:
                    mhit = False
                    mfound = False
                    mj = np.int64(0)
                    c_at = np.int64(0)
                    x_at = np.int64(0)
                if MEMO and ctr is not None:
                    h1 = np.uint64(0)
                    h2 = np.uint64(0)
                    for e in range(lo, lo + ln):
                        gy = np.uint64(ui[base + adj[e]])
                        h1 += mix_nb(gy)
                        h2 += mix_nb(gy ^ np.uint64(0x9E3779B97F4A7C15))
                    if MEMO == 1:
                        mj = _memo_slot(mk1, mk2, mln, h1, h2, ln)
                    else:
                        mj = np.int64(h1 & np.uint64(mk1.shape[0] - 1))
                    mfound = mln[mj] == ln and mk1[mj] == h1 and mk2[mj] == h2
                    if mfound and mrk[mj] < rv:
                        ctr[work_counters.C_MVERIFY] += ln
                        mhit = _contains_all(uo, ui, mvx[mj], base, adj, lo, ln, None)
                        if not mhit:
                            ctr[work_counters.C_MBAD] += 1
                    c_at = ctr[work_counters.C_CLOSURE]
                    x_at = ctr[work_counters.C_EXPAND]
                need_v = vtop + (pend - ws)
                vid, aoff, alen, skip, vcap = _reserve_slots(vid, aoff, alen, skip, vcap, need_v)
                adj, acap = _reserve(adj, acap, atop + f_atot[depth])
                # child tail: remaining tail filtered to Γ' (= w's list)
                sum_x = f_sumx[depth] + _elem(vid[ws], u_is_left)
                nx = f_nx[depth] + 1
                cp0 = vtop
                a0 = atop
                xw = 0
                for s in range(ws + 1, pend):
                    al = alen[s]
                    so = aoff[s]
                    c = 0
                    if DENSE and dn:
                        c = _popcnt(wword[wslot[vid[s]]] & gx)
                        if ctr is not None:
                            ctr[work_counters.C_DPVERTS] += 1
                    if not dn:
                        if ctr is not None:
                            ctr[work_counters.C_EXPAND] += al
                            xw += al
                        for e in range(so, so + al):
                            x = adj[e]
                            if mark[x] == token:
                                adj[atop + c] = x
                                c += 1
                    if c == ln:
                        sum_x += _elem(vid[s], u_is_left)
                        nx += 1
                        if SKIP and al == ln:
                            skip[s] = 1
                    elif c > 0:
                        vid[vtop] = vid[s]
                        aoff[vtop] = atop
                        alen[vtop] = c
                        skip[vtop] = 0
                        vtop += 1
                        atop += c  # (words: room in adj that goes unused)
                # maximality / first-generation test: |Γ(Γ')| == |X'|
                hit = False
                if MEMO:
                    ym = 0
                if WSTATIC:
                    for ci in range(wsn):
                        if ws_c[ci] < ln:
                            break  # sorted: no later one has |L'| common neighbours
                        if _contains_all(uo, ui, ws_u[ci], base, adj, lo, ln, ctr):
                            hit = True
                            break
                if WCACHE:
                    for ci in range(wcn):
                        if _contains_all(uo, ui, wc[ci], base, adj, lo, ln, ctr):
                            hit = True
                            break
                if hit:
                    kept = False
                    if ctr is not None:
                        ctr[work_counters.C_WHITS] += 1
                elif DENSE and dn:
                    kept = not closure_exceeds(gx, nx, wword, ylist, yoff, ycnt, gcnt, ctr)
                elif VMAJOR:
                    kept = _closure_is_vmajor(vo, vi, ui, base, adj, lo, ln, nx, ctr)
                else:
                    ym = _closure_size(vo, vi, ui, base, adj, lo, ln, nx, buf, ctr, uo, DEGCUT)
                    kept = ym <= nx
                    if ctr is not None:
                        if _witness_is_left(vo, vi, ui, base, adj, lo, ln, rank, rv, qmark,
                                            wbuf, ctr) == kept:
                            ctr[work_counters.C_PWDIS] += 1
                        if not kept:
                            ctr[work_counters.C_PWXREJ] += xw
                    if WCACHE and not kept:
                        # a lower-ranked vertex of the intersection is never in X': it will
                        # witness other branches of this task (most recent first)
                        for t in range(ym):
                            if rank[buf[t]] < rv:
                                for ci in range(min(wcn, WCAP - 1), 0, -1):
                                    wc[ci] = wc[ci - 1]
                                wc[0] = buf[t]
                                wcn = min(wcn + 1, WCAP)
                                break
                if MEMO and ctr is not None:
                    if mhit:
                        ctr[work_counters.C_MHITS] += 1
                        ctr[work_counters.C_MCLOSURE] += ctr[work_counters.C_CLOSURE] - c_at
                        ctr[work_counters.C_MEXPAND] += ctr[work_counters.C_EXPAND] - x_at
                        if kept:
                            ctr[work_counters.C_MBAD] += 1
                    else:
                        if not kept:
                            ctr[work_counters.C_MMISSED] += 1
                        # the closure's least rank: v's when kept (X' is the closure),
                        # else the full intersection's, which _closure_size left in buf
                        br = rv
                        bv = v
                        if not kept:
                            for t2 in range(ym):
                                if rank[buf[t2]] < br:
                                    br = rank[buf[t2]]
                                    bv = buf[t2]
                        if not mfound:  # a new Γ', or (a bounded table) another's slot
                            mk1[mj] = h1
                            mk2[mj] = h2
                            mln[mj] = ln
                            mrk[mj] = br
                            mvx[mj] = bv
                            ctr[work_counters.C_MKEYS] += 1
                            mused += 1
                            if MEMO == 1 and 2 * mused > mk1.shape[0]:
                                mk1, mk2, mln, mrk, mvx = _memo_grow(mk1, mk2, mln, mrk, mvx)
                        elif br < mrk[mj]:
                            mrk[mj] = br
                            mvx[mj] = bv
                if not kept:
                    if ctr is not None:
                        ctr[work_counters.C_NONMAX] += 1
                    continue
                sv = np.uint64(0)
                if DENSE and dn:
                    r = gx
                    while r:
                        sv += velem[gam[_cttz(r)]]
                        r &= r - np.uint64(1)
                if not dn:
                    for e in range(lo, lo + ln):
                        sv += velem[adj[e]]
                count += 1
                fp += combine_sides_nb(sum_x, sv, u_is_left)
                np2 = vtop - cp0
                if ctr is not None:
                    ctr[work_counters.C_REPORT] += ln
                if np2 > 0:
                    _sort_slots(vid, aoff, alen, cp0, vtop)
                    if ctr is not None:
                        ctr[work_counters.C_SORT] += np2
                    depth += 1
                    f_sumx[depth] = sum_x
                    f_nx[depth] = nx
                    f_p0[depth] = cp0
                    f_np[depth] = np2
                    f_i[depth] = 0
                    f_qdone[depth] = 0
                    f_step[depth] = 1
                    f_vtop[depth] = vtop
                    f_atop[depth] = atop
                    f_atot[depth] = atop - a0
                    if DENSE:
                        if dn:
                            f_g[depth] = gx
                        elif ln <= DENSE:  # this subtree on the words of Γ'
                            for j in range(ln):
                                gam[j] = adj[lo + j]
                            nw, wvert, wword, ylist = words_of(
                                ui, vo, vi, base, gam, ln, wslot, wvert, wword, ylist, yoff,
                                ycnt, hist, gcnt, ctr)  # fmt: skip
                            f_g[depth] = low_mask(ln)
                            droot = depth
        if ctr is not None:
            ctr[work_counters.C_BICLIQUES] += count
        return count, fp

    _BUILDS[key] = run_tasks
    return run_tasks


# the engine's search
run_tasks = build()
