"""Instrumented copies of the iMBEA and ParMBE searches, with switches.

Used only by benchmarks/work_analysis.py: the engines in baselines/ are not
touched, so their speed and results are whatever they were.  Each function
here is the engine's search with (a) work counters and (b) switches that move
one design choice at a time towards the other engine's choice.  Every switch
setting must give the same count and fingerprint as the engines; the driver
checks that on every run.

Counters (``ctr``, int64[NCTR], added to): see ``COUNTERS``.  "Elements" are
neighbour-list entries read; "words" are 64-bit bitset words read (iMBEA keeps
N(v) ∩ N(x0) as a bitset row over the positions of N(x0)).

iMBEA family (``imbea_work``, bitset rows, explicit level stack):

* ``wmode``: 0 = rows as wide as the largest candidate degree (the engine:
  every first-level task zeroes m x W words), 1 = rows as wide as this task's
  d = |N(x0)|;
* ``check``: 0 = scan Q (the engine), 1 = closure: |∩_{y ∈ L'} N(y)| over the
  global neighbour lists of L' from the shortest one, against |R'| (ParMBE's
  test); needs the expansion first (it counts the absorbed vertices);
* ``buildq``: 1 = first-level local universe is P' ∪ Q' (all of N2(x0), the
  engine), 0 = P' only (possible only with ``check`` = 1);
* ``twin``: 0 = no same-neighbourhood pruning, 1 = the engine's (after a
  *maximal* node, P vertices with N(v) ∩ L = N(x) ∩ L move to Q), 2 =
  ParMBE's (expansion before the check, twins leave P at every node, maximal
  or not).  ``twin`` = 1 with ``check`` = 1 is not offered (the closure check
  comes after the expansion, which has already removed the twins).

ParMBE family (``parmbe_work``, per-vertex subproblems, lists restricted to
N(v)): ``skip``: 0 = no skip flags, 1 = the engine's skip flags.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from baselines._imbea_kernel import _cttz, _popcnt, _sort_by_key
from baselines._parmbe_kernel import (
    _count_two_hop,
    _elem,
    _reserve,
    _reserve_slots,
    _sort_slots,
    _split_two_hop,
)
from mbebench.fingerprint import combine_sides_nb
from mbebench.jitcache import keyed

COUNTERS = (
    "tasks",  # first-level subtrees entered (N2 scanned)
    "killed",  # ... found non-maximal at the first level
    "nodes",  # candidates tried below the first level
    "nonmax",  # ... whose biclique was not maximal
    "bicliques",
    "n2_scan",  # elements: N(u) for u in N(x0), counting |N(w) ∩ N(x0)|
    "local_build",  # elements: second pass filling rows / restricted lists
    "zero_words",  # words: rows zeroed per task
    "lprime",  # L' construction: words ANDed / elements marked
    "qcheck",  # maximality by Q: words read
    "qverts",  # ... Q vertices visited
    "expand",  # expansion / child tail: words read (bitset) or elements (lists)
    "pverts",  # ... P / tail vertices visited
    "closure",  # maximality by closure: global-list elements read
    "sort",  # candidate selection: keys sorted
    "p1",  # first-level P' sizes, summed
    "q1",  # first-level Q' sizes, summed
    "report",  # L' elements hashed for the fingerprint
    "qcheck_q1",  # part of qcheck spent on first-level Q' (lower-rank) vertices
    "qcheck_max",  # part of qcheck spent at maximal nodes (a full scan of Q)
    "closure_max",  # part of closure spent at maximal nodes
)
NCTR = len(COUNTERS)
(
    C_TASKS,
    C_KILLED,
    C_NODES,
    C_NONMAX,
    C_BICLIQUES,
    C_N2,
    C_BUILD,
    C_ZERO,
    C_LPRIME,
    C_QCHECK,
    C_QVERTS,
    C_EXPAND,
    C_PVERTS,
    C_CLOSURE,
    C_SORT,
    C_P1,
    C_Q1,
    C_REPORT,
    C_QCHECK1,
    C_QCHECKMAX,
    C_CLOSUREMAX,
) = range(NCTR)


@keyed
@njit(cache=True)
def _closure_le(l_off, l_idx, gl, n, target, buf):
    """(|∩_{i<n} N(gl[i])| <= target, elements read), lists intersected from
    the shortest one; stops once the running intersection is down to target
    (it never drops below: R' is always inside it)."""
    best = 0
    bd = l_off[gl[0] + 1] - l_off[gl[0]]
    for i in range(1, n):
        y = gl[i]
        dy = l_off[y + 1] - l_off[y]
        if dy < bd:
            bd = dy
            best = i
    work = n
    if bd <= target:
        return True, work
    s = l_off[gl[best]]
    for t in range(bd):
        buf[t] = l_idx[s + t]
    m = bd
    work += bd
    for i in range(n):
        if i == best:
            continue
        y = gl[i]
        p = l_off[y]
        s1 = l_off[y + 1]
        nm = 0
        if s1 - p > 16 * m:
            lg = 1
            while (1 << lg) < s1 - p:
                lg += 1
            work += m * lg
            for t in range(m):
                x = buf[t]
                a = p
                b = s1
                while a < b:
                    mid = (a + b) >> 1
                    if l_idx[mid] < x:
                        a = mid + 1
                    else:
                        b = mid
                p = a
                if p < s1 and l_idx[p] == x:
                    buf[nm] = x
                    nm += 1
        else:
            p0 = p
            for t in range(m):
                x = buf[t]
                while p < s1 and l_idx[p] < x:
                    p += 1
                if p < s1 and l_idx[p] == x:
                    buf[nm] = x
                    nm += 1
            work += (p - p0) + m
        m = nm
        if m <= target:
            return True, work
    return m <= target, work


@keyed
@njit(cache=True)
def _grow(a, need):
    if need <= a.size:
        return a
    b = np.empty(max(need, 2 * a.size), dtype=a.dtype)
    b[: a.size] = a
    return b


@keyed
@njit(cache=True)
def imbea_work(
    c_off, c_idx, l_off, l_idx, cand_is_left, rank, tasks, wmode, check, buildq, twin, ctr
):
    """The engine's run_tasks (count mode) with the switches of the module
    docstring; returns (count, fingerprint)."""
    n_cand = c_off.size - 1
    n_l = l_off.size - 1
    max_deg = 0
    max_ldeg = 1
    for v in range(n_cand):
        max_deg = max(max_deg, c_off[v + 1] - c_off[v])
    for u in range(n_l):
        max_ldeg = max(max_ldeg, l_off[u + 1] - l_off[u])
    W = max(1, (max_deg + 63) // 64)
    cnt = np.zeros(n_cand, dtype=np.int64)
    loc = np.full(n_cand, -1, dtype=np.int32)
    n2list = np.empty(max(n_cand, 1), dtype=np.int32)
    glob = np.empty(max(n_cand, 1), dtype=np.int32)
    isq1 = np.zeros(max(n_cand, 1), dtype=np.uint8)  # local id is a first-level Q' vertex
    levels = min(max_deg + 2, 8)
    lbits = np.zeros(levels * W, dtype=np.uint64)
    lnz = np.empty(levels * W, dtype=np.int32)
    ints = np.zeros((8, levels), dtype=np.int64)
    sumr = np.zeros(levels, dtype=np.uint64)
    cntsort = np.zeros(max_deg + 2, dtype=np.int64)
    rows = np.zeros(1024 * W, dtype=np.uint64)
    pbuf = np.empty(4096, dtype=np.int32)
    pkey = np.empty(4096, dtype=np.int32)
    qbuf = np.empty(4096, dtype=np.int32)
    twbuf = np.empty(4096, dtype=np.int32)
    tmp_p = np.empty(max(n_cand, 1), dtype=np.int32)
    tmp_k = np.empty(max(n_cand, 1), dtype=np.int32)
    wloc = np.empty(max(max_deg, 1), dtype=np.uint64)
    lpos = np.empty(max(max_deg, 1), dtype=np.int32)
    gl = np.empty(max(max_deg, 1), dtype=np.int32)
    cbuf = np.empty(max(max_ldeg, 1), dtype=np.int32)

    count = np.int64(0)
    fp = np.uint64(0)
    PS, PP, PE, QS, QE, NNZ, RL = 0, 1, 2, 3, 4, 5, 6
    l_is_left = not cand_is_left

    for ti in range(tasks.size):
        x0 = tasks[ti]
        d = c_off[x0 + 1] - c_off[x0]
        if d == 0:
            continue
        rx = rank[x0]
        ctr[C_TASKS] += 1
        n2 = 0
        base0 = c_off[x0]
        for t in range(d):
            u = c_idx[base0 + t]
            ctr[C_N2] += l_off[u + 1] - l_off[u]
            for e in range(l_off[u], l_off[u + 1]):
                w = l_idx[e]
                if w == x0:
                    continue
                if cnt[w] == 0:
                    n2list[n2] = w
                    n2 += 1
                cnt[w] += 1
        maximal = True
        for i in range(n2):
            w = n2list[i]
            if cnt[w] == d and rank[w] < rx:
                maximal = False
                break
        if not maximal:
            ctr[C_KILLED] += 1
            for i in range(n2):
                cnt[n2list[i]] = 0
            continue
        s_r = _elem(x0, cand_is_left)
        s_l = np.uint64(0)
        for t in range(d):
            u = c_idx[base0 + t]
            wloc[t] = _elem(u, l_is_left)
            lpos[t] = u
            s_l += wloc[t]
        rsz = 1
        m = 0
        np_ = 0
        nq = 0
        for i in range(n2):
            w = n2list[i]
            if cnt[w] == d:
                s_r += _elem(w, cand_is_left)
                rsz += 1
            elif rank[w] > rx:
                loc[w] = m
                glob[m] = w
                m += 1
                np_ += 1
            elif buildq:
                loc[w] = m
                glob[m] = w
                m += 1
                nq += 1
        count += 1
        ctr[C_REPORT] += d
        fp += combine_sides_nb(s_r, s_l, cand_is_left)
        ctr[C_P1] += np_
        ctr[C_Q1] += nq
        if np_ == 0:
            for i in range(n2):
                w = n2list[i]
                cnt[w] = 0
                loc[w] = -1
            continue
        Wr = W if wmode == 0 else (d + 63) >> 6
        if rows.size < m * Wr:
            rows = np.zeros(max(m * Wr, 2 * rows.size), dtype=np.uint64)
        else:
            rows[: m * Wr] = 0
        ctr[C_ZERO] += m * Wr
        for t in range(d):
            u = c_idx[base0 + t]
            word = t >> 6
            bit = np.uint64(1) << np.uint64(t & 63)
            ctr[C_BUILD] += l_off[u + 1] - l_off[u]
            for e in range(l_off[u], l_off[u + 1]):
                w = l_idx[e]
                lw = loc[w]
                if lw >= 0:
                    rows[lw * Wr + word] |= bit
        pbuf = _grow(pbuf, 2 * m + 16)
        pkey = _grow(pkey, 2 * m + 16)
        qbuf = _grow(qbuf, 2 * m + 16)
        twbuf = _grow(twbuf, m + 16)
        pn = 0
        qn = 0
        for i in range(m):
            w = glob[i]
            if rank[w] > rx:
                pbuf[pn] = i
                pkey[pn] = cnt[w]
                pn += 1
            else:
                qbuf[qn] = i
                qn += 1
            isq1[i] = rank[w] < rx
        if check != 0:
            qn = 0  # the closure test needs no Q
        for i in range(n2):
            w = n2list[i]
            cnt[w] = 0
            loc[w] = -1
        _sort_by_key(pbuf, pkey, 0, pn, d, tmp_p, tmp_k, cntsort)
        ctr[C_SORT] += pn
        nw = (d + 63) >> 6
        for j in range(nw):
            lbits[j] = ~np.uint64(0)
            lnz[j] = j
        if d & 63:
            lbits[nw - 1] = (np.uint64(1) << np.uint64(d & 63)) - np.uint64(1)
        ints[PS, 0] = 0
        ints[PP, 0] = 0
        ints[PE, 0] = pn
        ints[QS, 0] = 0
        ints[QE, 0] = qn
        ints[NNZ, 0] = nw
        ints[RL, 0] = rsz
        sumr[0] = s_r
        k = 0
        while k >= 0:
            pp = ints[PP, k]
            pe = ints[PE, k]
            if pp == pe:
                k -= 1
                continue
            x = pbuf[pp]
            nlp = pkey[pp]
            pp += 1
            ints[PP, k] = pp
            ctr[C_NODES] += 1
            if k + 2 > sumr.size:
                nlev = 2 * sumr.size
                lbits2 = np.zeros(nlev * W, dtype=np.uint64)
                lbits2[: lbits.size] = lbits
                lbits = lbits2
                lnz2 = np.empty(nlev * W, dtype=np.int32)
                lnz2[: lnz.size] = lnz
                lnz = lnz2
                ints2 = np.zeros((8, nlev), dtype=np.int64)
                ints2[:, : sumr.size] = ints
                ints = ints2
                sumr2 = np.zeros(nlev, dtype=np.uint64)
                sumr2[: sumr.size] = sumr
                sumr = sumr2
            kb = k * W
            cb = kb + W
            xb = x * Wr
            nnz = 0
            ctr[C_LPRIME] += ints[NNZ, k]
            for j in range(ints[NNZ, k]):
                wi = lnz[kb + j]
                val = lbits[kb + wi] & rows[xb + wi]
                if val:
                    lbits[cb + wi] = val
                    lnz[cb + nnz] = wi
                    nnz += 1
            qs = ints[QS, k]
            qe = ints[QE, k]
            qbase = qe + (pe - pp) + 1
            if qbuf.size < qbase + (qe - qs) + 1:
                qbuf = _grow(qbuf, qbase + (qe - qs) + 1)
            qn = qbase
            checked = False
            maximal = True
            if check == 0 and twin != 2:
                maximal, qn = _q_scan(qbuf, qs, qe, qbase, rows, Wr, lbits, lnz, cb, nnz, isq1, ctr)
                checked = True
                if not maximal:
                    qbuf[qe] = x
                    ints[QE, k] = qe + 1
                    ctr[C_NONMAX] += 1
                    continue
            # -- expansion over the rest of P
            s_r = sumr[k] + _elem(glob[x], cand_is_left)
            rsz = ints[RL, k] + 1
            pbase = pe
            if pbuf.size < pbase + (pe - pp) + 1:
                pbuf = _grow(pbuf, pbase + (pe - pp) + 1)
                pkey = _grow(pkey, pbuf.size)
            pn = pbase
            wr = pp
            ntw = 0
            ctr[C_EXPAND] += (pe - pp) * nnz
            ctr[C_PVERTS] += pe - pp
            for i in range(pp, pe):
                v = pbuf[i]
                kv = pkey[i]
                vb = v * Wr
                c = 0
                for j in range(nnz):
                    wi = lnz[cb + j]
                    c += _popcnt(rows[vb + wi] & lbits[cb + wi])
                if c == nlp:
                    s_r += _elem(glob[v], cand_is_left)
                    rsz += 1
                    if twin != 0 and kv == nlp:
                        twbuf[ntw] = v
                        ntw += 1
                        continue
                elif c > 0:
                    pbuf[pn] = v
                    pkey[pn] = c
                    pn += 1
                pbuf[wr] = v
                pkey[wr] = kv
                wr += 1
            ints[PE, k] = wr
            if not checked:
                if check == 0:
                    maximal, qn = _q_scan(
                        qbuf, qs, qe, qbase, rows, Wr, lbits, lnz, cb, nnz, isq1, ctr
                    )
                else:
                    g = 0
                    for j in range(nnz):
                        wi = lnz[cb + j]
                        val = lbits[cb + wi]
                        while val:
                            t = _cttz(val)
                            gl[g] = lpos[(wi << 6) + t]
                            g += 1
                            val &= val - np.uint64(1)
                    maximal, work = _closure_le(l_off, l_idx, gl, g, rsz, cbuf)
                    ctr[C_CLOSURE] += work
                    if maximal:
                        ctr[C_CLOSUREMAX] += work
            if check == 0:
                for i in range(ntw):
                    qbuf[qe] = twbuf[i]
                    qe += 1
                qbuf[qe] = x
                qe += 1
                ints[QE, k] = qe
            if not maximal:
                ctr[C_NONMAX] += 1
                continue
            s_l = np.uint64(0)
            for j in range(nnz):
                wi = lnz[cb + j]
                val = lbits[cb + wi]
                while val:
                    t = _cttz(val)
                    s_l += wloc[(wi << 6) + t]
                    val &= val - np.uint64(1)
            ctr[C_REPORT] += nlp
            count += 1
            fp += combine_sides_nb(s_r, s_l, cand_is_left)
            if pn > pbase:
                _sort_by_key(pbuf, pkey, pbase, pn, nlp, tmp_p, tmp_k, cntsort)
                ctr[C_SORT] += pn - pbase
                k += 1
                ints[PS, k] = pbase
                ints[PP, k] = pbase
                ints[PE, k] = pn
                ints[QS, k] = qbase
                ints[QE, k] = qn if check == 0 else qbase
                ints[NNZ, k] = nnz
                ints[RL, k] = rsz
                sumr[k] = s_r
    ctr[C_BICLIQUES] += count
    return count, fp


@keyed
@njit(cache=True, inline="always")
def _q_scan(qbuf, qs, qe, qbase, rows, Wr, lbits, lnz, cb, nnz, isq1, ctr):
    """The engine's maximality check: (maximal, end of the child's Q)."""
    qn = qbase
    words = 0
    words1 = 0
    for i in range(qs, qe):
        v = qbuf[i]
        vb = v * Wr
        full = True
        some = False
        q1 = np.int64(isq1[v])
        for j in range(nnz):
            words += 1
            words1 += q1
            wi = lnz[cb + j]
            a = rows[vb + wi]
            lw_ = lbits[cb + wi]
            if lw_ & ~a:
                full = False
                if some:
                    break
            if a & lw_:
                some = True
                if not full:
                    break
        if full:
            ctr[C_QCHECK] += words
            ctr[C_QCHECK1] += words1
            ctr[C_QVERTS] += i - qs + 1
            return False, qn
        if some:
            qbuf[qn] = v
            qn += 1
    ctr[C_QCHECK] += words
    ctr[C_QCHECK1] += words1
    ctr[C_QCHECKMAX] += words
    ctr[C_QVERTS] += qe - qs
    return True, qn


@keyed
@njit(cache=True)
def _closure_global(vo, vi, ui, base, adj, lo, ln, target, buf):
    """ParMBE's closure test (_parmbe_kernel._closure_is) with the elements
    read counted: (holds, elements)."""
    best = lo
    bd = vo[ui[base + adj[lo]] + 1] - vo[ui[base + adj[lo]]]
    for e in range(lo + 1, lo + ln):
        y = ui[base + adj[e]]
        dy = vo[y + 1] - vo[y]
        if dy < bd:
            bd = dy
            best = e
    work = ln
    if bd <= target:
        return True, work
    yb = ui[base + adj[best]]
    s = vo[yb]
    for t in range(bd):
        buf[t] = vi[s + t]
    m = bd
    work += bd
    for e in range(lo, lo + ln):
        if e == best:
            continue
        y = ui[base + adj[e]]
        p = vo[y]
        s1 = vo[y + 1]
        nm = 0
        if s1 - p > 16 * m:
            lg = 1
            while (1 << lg) < s1 - p:
                lg += 1
            work += m * lg
            for t in range(m):
                x = buf[t]
                a = p
                b = s1
                while a < b:
                    mid = (a + b) >> 1
                    if vi[mid] < x:
                        a = mid + 1
                    else:
                        b = mid
                p = a
                if p < s1 and vi[p] == x:
                    buf[nm] = x
                    nm += 1
        else:
            p0 = p
            for t in range(m):
                x = buf[t]
                while p < s1 and vi[p] < x:
                    p += 1
                if p < s1 and vi[p] == x:
                    buf[nm] = x
                    nm += 1
            work += (p - p0) + m
        m = nm
        if m <= target:
            return True, work
    return m <= target, work


@keyed
@njit(cache=True)
def parmbe_work(uo, ui, vo, vi, rank, verts, u_is_left, skipmode, ctr):
    """The engine's run_tasks for whole subproblems (K = 1) with counters and
    the ``skip`` switch; returns (count, fingerprint)."""
    n_u = uo.shape[0] - 1
    maxdv = 1
    for y in range(vo.shape[0] - 1):
        maxdv = max(maxdv, vo[y + 1] - vo[y])
    cnt = np.zeros(n_u, np.int32)
    slot = np.full(n_u, -1, np.int32)
    touched = np.empty(n_u, np.int32)
    buf = np.empty(maxdv, np.int32)
    count = np.int64(0)
    fp = np.uint64(0)
    v_is_left = not u_is_left
    maxd = 1
    for t in range(verts.shape[0]):
        v = verts[t]
        maxd = max(maxd, uo[v + 1] - uo[v])
    mark = np.zeros(maxd, np.int64)
    token = np.int64(0)
    velem = np.empty(maxd, np.uint64)
    vcap = 1024
    vid = np.empty(vcap, np.int32)
    aoff = np.empty(vcap, np.int64)
    alen = np.empty(vcap, np.int32)
    skip = np.zeros(vcap, np.uint8)
    acap = 4096
    adj = np.empty(acap, np.int32)
    fcap = maxd + 2
    f_sumx = np.empty(fcap, np.uint64)
    f_nx = np.empty(fcap, np.int64)
    f_p0 = np.empty(fcap, np.int64)
    f_np = np.empty(fcap, np.int64)
    f_i = np.empty(fcap, np.int64)
    f_vtop = np.empty(fcap, np.int64)
    f_atop = np.empty(fcap, np.int64)
    f_atot = np.empty(fcap, np.int64)

    for t in range(verts.shape[0]):
        v = verts[t]
        base = uo[v]
        d = uo[v + 1] - base
        if d == 0:
            continue
        ctr[C_TASKS] += 1
        for j in range(d):
            y = ui[base + j]
            ctr[C_N2] += vo[y + 1] - vo[y]
        ntouched = _count_two_hop(v, uo, ui, vo, vi, cnt, touched)
        killed, npp, tot, sum_x, nx = _split_two_hop(v, d, rank, cnt, touched, ntouched, u_is_left)
        rv = rank[v]
        if killed:
            ctr[C_KILLED] += 1
            for idx in range(ntouched):
                cnt[touched[idx]] = 0
            continue
        sum_v = np.uint64(0)
        for j in range(d):
            velem[j] = _elem(ui[base + j], v_is_left)
            sum_v += velem[j]
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
        ctr[C_P1] += npp
        if npp > 0:
            for j in range(d):
                y = ui[base + j]
                ctr[C_BUILD] += vo[y + 1] - vo[y]
                for e in range(vo[y], vo[y + 1]):
                    si = slot[vi[e]]
                    if si >= 0:
                        adj[aoff[si] + alen[si]] = j
                        alen[si] += 1
        for idx in range(ntouched):
            u = touched[idx]
            cnt[u] = 0
            slot[u] = -1
        count += 1
        ctr[C_REPORT] += d
        fp += combine_sides_nb(sum_x, sum_v, u_is_left)
        if npp == 0:
            continue
        _sort_slots(vid, aoff, alen, 0, npp)
        ctr[C_SORT] += npp
        depth = 0
        f_sumx[0] = sum_x
        f_nx[0] = nx
        f_p0[0] = 0
        f_np[0] = npp
        f_i[0] = 0
        f_vtop[0] = npp
        f_atop[0] = tot
        f_atot[0] = tot
        while depth >= 0:
            i = f_i[depth]
            if i >= f_np[depth]:
                depth -= 1
                continue
            f_i[depth] = i + 1
            p0 = f_p0[depth]
            ws = p0 + i
            if skip[ws]:
                continue
            ctr[C_NODES] += 1
            lo = aoff[ws]
            ln = alen[ws]
            token += 1
            ctr[C_LPRIME] += ln
            for e in range(lo, lo + ln):
                mark[adj[e]] = token
            vtop = f_vtop[depth]
            atop = f_atop[depth]
            pend = p0 + f_np[depth]
            need_v = vtop + (pend - ws)
            vid, aoff, alen, skip, vcap = _reserve_slots(vid, aoff, alen, skip, vcap, need_v)
            adj, acap = _reserve(adj, acap, atop + f_atot[depth])
            sum_x = f_sumx[depth] + _elem(vid[ws], u_is_left)
            nx = f_nx[depth] + 1
            cp0 = vtop
            a0 = atop
            ctr[C_PVERTS] += pend - ws - 1
            for s in range(ws + 1, pend):
                al = alen[s]
                so = aoff[s]
                ctr[C_EXPAND] += al
                c = 0
                for e in range(so, so + al):
                    x = adj[e]
                    if mark[x] == token:
                        adj[atop + c] = x
                        c += 1
                if c == ln:
                    sum_x += _elem(vid[s], u_is_left)
                    nx += 1
                    if skipmode and al == ln:
                        skip[s] = 1
                elif c > 0:
                    vid[vtop] = vid[s]
                    aoff[vtop] = atop
                    alen[vtop] = c
                    skip[vtop] = 0
                    vtop += 1
                    atop += c
            ok, work = _closure_global(vo, vi, ui, base, adj, lo, ln, nx, buf)
            ctr[C_CLOSURE] += work
            if ok:
                ctr[C_CLOSUREMAX] += work
            if not ok:
                ctr[C_NONMAX] += 1
                continue
            sv = np.uint64(0)
            for e in range(lo, lo + ln):
                sv += velem[adj[e]]
            ctr[C_REPORT] += ln
            count += 1
            fp += combine_sides_nb(sum_x, sv, u_is_left)
            np2 = vtop - cp0
            if np2 > 0:
                _sort_slots(vid, aoff, alen, cp0, vtop)
                ctr[C_SORT] += np2
                depth += 1
                f_sumx[depth] = sum_x
                f_nx[depth] = nx
                f_p0[depth] = cp0
                f_np[depth] = np2
                f_i[depth] = 0
                f_vtop[depth] = vtop
                f_atop[depth] = atop
                f_atot[depth] = atop - a0
    ctr[C_BICLIQUES] += count
    return count, fp
