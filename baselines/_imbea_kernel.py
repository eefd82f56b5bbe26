"""Numba kernels of the serial iMBEA engine (see :mod:`baselines.imbea`).

Terminology follows Algorithm 1 of the cuMBE paper: candidates ``x`` are taken
from the *candidate side* (``P``, ``Q`` and ``R`` are sets of candidate-side
vertices) and ``L`` is a set of vertices of the other side (the *L side*).

The search is iMBEA (Zhang et al. 2014) run one first-level subtree at a time:

* the first level processes the candidate side in ascending degree order
  (:func:`mbebench.order.candidate_order`, which also finds the twins)
  (|N(x) ∩ L| with L = the whole L side); the first-level node of ``x`` has
  ``L' = N(x)``, ``Q`` = the candidates before ``x`` in that order and ``P`` =
  those after it, both restricted to the 2-hop neighbourhood N2(x) (vertices
  with an empty intersection would be dropped from P'/Q' anyway);
* inside a subtree everything is local: the vertices of N(x) are numbered
  0..d-1 and every vertex of N2(x) gets a bitset row over those positions, so
  that ``N(v) ∩ L'`` is an AND + popcount over the words where ``L'`` is
  non-zero;
* the search below the first level is an explicit stack of levels.  Each
  level owns a slice of ``pbuf``/``pkey`` (its P, ordered by ascending
  |N(v) ∩ L|, with the cursor ``pp``), a slice of ``qbuf`` (its Q, which grows
  as candidates are tried) and its L bitset.  A child's slices lie above its
  parent's; the parent's Q leaves room for everything still in its P.

iMBEA's pruning: after trying ``x`` (when the biclique is maximal), every
``v`` of P with N(v) ∩ L = N(x) ∩ L (fully adjacent to L' *and* with the same
key as ``x``) is moved from P to Q together with ``x``, since choosing it
would only rebuild the same L'.  At the first level the same rule says a
candidate whose neighbourhood equals that of an earlier candidate starts no
subtree (it would be non-maximal at once); those twins are found up front.

Biclique hash: sums of element hashes of R (candidate side) and of L' (L side),
passed to ``combine_sides_nb`` with the candidate side's orientation.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.core import types
from numba.extending import intrinsic

from mbebench.fingerprint import combine_sides_nb, left_elem_nb, right_elem_nb
from mbebench.jitcache import keyed


@intrinsic
def _popcnt(typingctx, x):
    sig = types.int64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@intrinsic
def _cttz(typingctx, x):
    sig = types.int64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], context.get_constant(types.boolean, True))

    return sig, codegen


# --------------------------------------------------------------------------
# preprocessing


@keyed
@njit(cache=True)
def elem_weights(n_left, n_right):
    """left_elem / right_elem of every vertex (the per-vertex fingerprint terms)."""
    wl = np.empty(n_left, dtype=np.uint64)
    for u in range(n_left):
        wl[u] = left_elem_nb(u)
    wr = np.empty(n_right, dtype=np.uint64)
    for v in range(n_right):
        wr[v] = right_elem_nb(v)
    return wl, wr


# --------------------------------------------------------------------------
# the search


@keyed
@njit(cache=True)
def _grow_i32(a, need):
    if need <= a.size:
        return a
    b = np.empty(max(need, 2 * a.size), dtype=a.dtype)
    b[: a.size] = a
    return b


@keyed
@njit(cache=True)
def new_workspace(n_cand, max_deg):
    """Scratch arrays reused by every first-level task (sizes grow on demand)."""
    W = max(1, (max_deg + 63) // 64)
    cnt = np.zeros(n_cand, dtype=np.int64)  # |N(w) ∩ N(x)| during a task
    loc = np.full(n_cand, -1, dtype=np.int32)  # global -> local id
    n2list = np.empty(max(n_cand, 1), dtype=np.int32)
    glob = np.empty(max(n_cand, 1), dtype=np.int32)  # local -> global id
    # per-level arrays start small and grow with the depth actually reached
    # (the depth is at most the largest candidate degree, rarely near it)
    levels = min(max_deg + 2, 8)
    lbits = np.zeros(levels * W, dtype=np.uint64)
    lnz = np.empty(levels * W, dtype=np.int32)
    ints = np.zeros((8, levels), dtype=np.int64)  # ps, pp, pe, qs, qe, nnz, rl, unused
    sumr = np.zeros(levels, dtype=np.uint64)
    cntsort = np.zeros(max_deg + 2, dtype=np.int64)
    return cnt, loc, n2list, glob, lbits, lnz, ints, sumr, cntsort


@keyed
@njit(cache=True)
def _collect_r(ro, lo_, rv, nb, rbuf, rl):
    """Collect mode: room for biclique ``nb`` in both offset arrays, and its R side."""
    if nb + 2 > ro.size:
        ro2 = np.zeros(2 * ro.size, dtype=np.int64)
        ro2[: ro.size] = ro
        ro = ro2
        lo2 = np.zeros(2 * lo_.size, dtype=np.int64)
        lo2[: lo_.size] = lo_
        lo_ = lo2
    rv = _grow_i32(rv, ro[nb] + rl)
    for i in range(rl):
        rv[ro[nb] + i] = rbuf[i]
    ro[nb + 1] = ro[nb] + rl
    return ro, lo_, rv


@keyed
@njit(cache=True)
def _sort_by_key(pbuf, pkey, lo, hi, maxkey, tmp_p, tmp_k, cntsort):
    """Sort pbuf[lo:hi] by pkey ascending (keys in 1..maxkey)."""
    n = hi - lo
    if n <= 24:
        for i in range(lo + 1, hi):
            v = pbuf[i]
            k = pkey[i]
            j = i - 1
            while j >= lo and pkey[j] > k:
                pbuf[j + 1] = pbuf[j]
                pkey[j + 1] = pkey[j]
                j -= 1
            pbuf[j + 1] = v
            pkey[j + 1] = k
        return
    for k in range(maxkey + 1):
        cntsort[k] = 0
    for i in range(lo, hi):
        cntsort[pkey[i]] += 1
    s = 0
    for k in range(maxkey + 1):
        c = cntsort[k]
        cntsort[k] = s
        s += c
    for i in range(lo, hi):
        k = pkey[i]
        p = cntsort[k]
        cntsort[k] = p + 1
        tmp_p[p] = pbuf[i]
        tmp_k[p] = k
    for i in range(n):
        pbuf[lo + i] = tmp_p[i]
        pkey[lo + i] = tmp_k[i]


@keyed
@njit(cache=True)
def run_tasks(
    c_off,
    c_idx,
    l_off,
    l_idx,
    wc,
    wl,
    cand_is_left,
    rank,
    tasks,
    collect,
):
    """Enumerate the first-level subtrees of the candidates in ``tasks``.

    ``c_off/c_idx``: candidate-side CSR (neighbours are L-side ids);
    ``l_off/l_idx``: L-side CSR; ``wc``/``wl``: element hashes of candidate /
    L-side vertices; ``rank``: position of every candidate in the first-level
    order (Q of a task = earlier candidates, P = later ones).  ``tasks`` are
    candidate ids; each one is processed independently of the others, so any
    partition of the started candidates over workers gives the full result.

    Returns (count, fingerprint, nodes, per-task counts, collect arrays): when
    ``collect`` is true, biclique i has candidate-side vertices
    ``rv[ro[i]:ro[i+1]]`` and L-side vertices ``lv[lo_[i]:lo_[i+1]]``.
    """
    n_cand = c_off.size - 1
    max_deg = 0
    for v in range(n_cand):
        dv = c_off[v + 1] - c_off[v]
        if dv > max_deg:
            max_deg = dv
    W = max(1, (max_deg + 63) // 64)
    cnt, loc, n2list, glob, lbits, lnz, ints, sumr, cntsort = new_workspace(n_cand, max_deg)
    rows = np.zeros(1024 * W, dtype=np.uint64)
    pbuf = np.empty(4096, dtype=np.int32)
    pkey = np.empty(4096, dtype=np.int32)
    qbuf = np.empty(4096, dtype=np.int32)
    tmp_p = np.empty(max(n_cand, 1), dtype=np.int32)
    tmp_k = np.empty(max(n_cand, 1), dtype=np.int32)
    rbuf = np.empty(max(n_cand, 1), dtype=np.int32)  # R stack (collect mode)
    wloc = np.empty(max(max_deg, 1), dtype=np.uint64)  # L-side hash by position
    lpos = np.empty(max(max_deg, 1), dtype=np.int32)  # L-side id by position

    # collect-mode output
    ro = np.zeros(1, dtype=np.int64)
    lo_ = np.zeros(1, dtype=np.int64)
    rv = np.empty(0, dtype=np.int32)
    lv = np.empty(0, dtype=np.int32)
    if collect:
        ro = np.zeros(1024, dtype=np.int64)
        lo_ = np.zeros(1024, dtype=np.int64)
        rv = np.empty(4096, dtype=np.int32)
        lv = np.empty(4096, dtype=np.int32)

    count = np.int64(0)
    fp = np.uint64(0)
    nodes = np.int64(0)
    task_counts = np.zeros(tasks.size, dtype=np.int64)

    PS, PP, PE, QS, QE, NNZ, RL = 0, 1, 2, 3, 4, 5, 6

    for ti in range(tasks.size):
        x0 = tasks[ti]
        count_before = count
        d = c_off[x0 + 1] - c_off[x0]
        if d == 0:
            continue
        rx = rank[x0]
        nodes += 1
        # ---- first level: common-neighbour counts over N2(x0)
        n2 = 0
        base0 = c_off[x0]
        for t in range(d):
            u = c_idx[base0 + t]
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
            for i in range(n2):
                cnt[n2list[i]] = 0
            continue
        # ---- emit the first-level biclique (N(x0), closure)
        s_r = wc[x0]
        s_l = np.uint64(0)
        for t in range(d):
            u = c_idx[base0 + t]
            wloc[t] = wl[u]
            lpos[t] = u
            s_l += wl[u]
        rl = 0
        if collect:
            rbuf[0] = x0
            rl = 1
        m = 0  # local ids: candidates of P' and Q'
        for i in range(n2):
            w = n2list[i]
            if cnt[w] == d:
                # fully adjacent: earlier ones were excluded above, so w is later
                s_r += wc[w]
                if collect:
                    rbuf[rl] = w
                    rl += 1
            else:
                loc[w] = m
                glob[m] = w
                m += 1
        count += 1
        fp += combine_sides_nb(s_r, s_l, cand_is_left)
        if collect:
            nb = count - 1
            ro, lo_, rv = _collect_r(ro, lo_, rv, nb, rbuf, rl)
            lv = _grow_i32(lv, lo_[nb] + d)
            for t in range(d):
                lv[lo_[nb] + t] = lpos[t]
            lo_[nb + 1] = lo_[nb] + d
        # P' = later, partially adjacent; Q' = earlier (all have cnt > 0)
        np_ = 0
        for i in range(m):
            if rank[glob[i]] > rx:
                np_ += 1
        if np_ == 0:
            for i in range(n2):
                w = n2list[i]
                cnt[w] = 0
                loc[w] = -1
            task_counts[ti] = count - count_before
            continue
        # ---- local bitset rows over the positions of N(x0)
        if rows.size < m * W:
            rows = np.zeros(max(m * W, 2 * rows.size), dtype=np.uint64)
        else:
            rows[: m * W] = 0
        for t in range(d):
            u = c_idx[base0 + t]
            word = t >> 6
            bit = np.uint64(1) << np.uint64(t & 63)
            for e in range(l_off[u], l_off[u + 1]):
                w = l_idx[e]
                lw = loc[w]
                if lw >= 0:
                    rows[lw * W + word] |= bit
        # level 0
        pbuf = _grow_i32(pbuf, 2 * m + 16)
        pkey = _grow_i32(pkey, 2 * m + 16)
        qbuf = _grow_i32(qbuf, 2 * m + 16)
        pn = 0
        qn = 0
        qs0 = 0
        for i in range(m):
            w = glob[i]
            if rank[w] > rx:
                pbuf[pn] = i
                pkey[pn] = cnt[w]
                pn += 1
            else:
                qbuf[qn] = i
                qn += 1
        for i in range(n2):
            w = n2list[i]
            cnt[w] = 0
            loc[w] = -1
        _sort_by_key(pbuf, pkey, 0, pn, d, tmp_p, tmp_k, cntsort)
        nw = (d + 63) >> 6
        for j in range(nw):
            lbits[j] = ~np.uint64(0)
            lnz[j] = j
        if d & 63:
            lbits[nw - 1] = (np.uint64(1) << np.uint64(d & 63)) - np.uint64(1)
        ints[PS, 0] = 0
        ints[PP, 0] = 0
        ints[PE, 0] = pn
        ints[QS, 0] = qs0
        ints[QE, 0] = qn
        ints[NNZ, 0] = nw
        ints[RL, 0] = rl
        sumr[0] = s_r
        # ---- the subtree, level by level
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
            nodes += 1
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
            cb = kb + W  # level k+1 slot: L'
            xb = x * W
            nnz = 0
            for j in range(ints[NNZ, k]):
                wi = lnz[kb + j]
                val = lbits[kb + wi] & rows[xb + wi]
                if val:
                    lbits[cb + wi] = val
                    lnz[cb + nnz] = wi
                    nnz += 1
            # -- maximality check against Q
            qs = ints[QS, k]
            qe = ints[QE, k]
            qbase = qe + (pe - pp) + 1
            if qbuf.size < qbase + (qe - qs) + 1:
                qbuf = _grow_i32(qbuf, qbase + (qe - qs) + 1)
            qn = qbase
            maximal = True
            for i in range(qs, qe):
                v = qbuf[i]
                vb = v * W
                full = True
                some = False
                for j in range(nnz):
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
                    maximal = False
                    break
                if some:
                    qbuf[qn] = v
                    qn += 1
            if not maximal:
                qbuf[qe] = x
                ints[QE, k] = qe + 1
                continue
            # -- maximal expansion over the rest of P
            s_r = sumr[k] + wc[glob[x]]
            rl = ints[RL, k]
            if collect:
                rbuf[rl] = glob[x]
                rl += 1
            pbase = pe
            if pbuf.size < pbase + (pe - pp) + 1:
                pbuf = _grow_i32(pbuf, pbase + (pe - pp) + 1)
                pkey = _grow_i32(pkey, pbuf.size)
            pn = pbase
            wr = pp
            for i in range(pp, pe):
                v = pbuf[i]
                kv = pkey[i]
                vb = v * W
                c = 0
                for j in range(nnz):
                    wi = lnz[cb + j]
                    c += _popcnt(rows[vb + wi] & lbits[cb + wi])
                if c == nlp:
                    s_r += wc[glob[v]]
                    if collect:
                        rbuf[rl] = glob[v]
                        rl += 1
                    if kv == nlp:
                        # N(v) ∩ L == N(x) ∩ L: move v to Q with x (iMBEA)
                        qbuf[qe] = v
                        qe += 1
                        continue
                elif c > 0:
                    pbuf[pn] = v
                    pkey[pn] = c
                    pn += 1
                pbuf[wr] = v
                pkey[wr] = kv
                wr += 1
            ints[PE, k] = wr
            qbuf[qe] = x
            qe += 1
            ints[QE, k] = qe
            # -- report (L', R')
            s_l = np.uint64(0)
            for j in range(nnz):
                wi = lnz[cb + j]
                val = lbits[cb + wi]
                while val:
                    t = _cttz(val)
                    s_l += wloc[(wi << 6) + t]
                    val &= val - np.uint64(1)
            count += 1
            fp += combine_sides_nb(s_r, s_l, cand_is_left)
            if collect:
                nb = count - 1
                ro, lo_, rv = _collect_r(ro, lo_, rv, nb, rbuf, rl)
                lv = _grow_i32(lv, lo_[nb] + nlp)
                p = lo_[nb]
                for j in range(nnz):
                    wi = lnz[cb + j]
                    val = lbits[cb + wi]
                    while val:
                        t = _cttz(val)
                        lv[p] = lpos[(wi << 6) + t]
                        p += 1
                        val &= val - np.uint64(1)
                lo_[nb + 1] = p
            # -- descend
            if pn > pbase:
                _sort_by_key(pbuf, pkey, pbase, pn, nlp, tmp_p, tmp_k, cntsort)
                k += 1
                ints[PS, k] = pbase
                ints[PP, k] = pbase
                ints[PE, k] = pn
                ints[QS, k] = qbase
                ints[QE, k] = qn
                ints[NNZ, k] = nnz
                ints[RL, k] = rl
                sumr[k] = s_r
        task_counts[ti] = count - count_before
    nbk = count if collect else 0
    return count, fp, nodes, task_counts, ro[: nbk + 1], rv, lo_[: nbk + 1], lv
