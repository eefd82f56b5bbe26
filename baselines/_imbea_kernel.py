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

One source, several builds: ``run_tasks`` is the engine's search, ``build()``
makes the same search with one design choice moved towards ParMBE's (for
the work analysis); the choices are constants of the compiled
code.  Work counters (:mod:`baselines._work`) are on when ``ctr`` is an array
and compiled out when it is ``None`` (the engine).

Why one module of about 550 lines: nearly all of it is one compiled function, the search
loop with its explicit stack of levels (the building blocks are already apart, in
:mod:`baselines._imbea_parts`); its state lives in the loop's locals, so cutting the loop
into functions would pass a dozen arrays and cursors around for no reader's gain.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from baselines import _work as work_counters
from baselines._imbea_parts import (
    _collect_r,
    _cttz,
    _grow_i32,
    _popcnt,
    _sort_by_key,
    new_workspace,
)
from baselines._parmbe_check import _closure_is
from mbebench.fingerprint import combine_sides_nb
from mbebench.jitcache import keyed

_BUILDS: dict = {}


def build(wmode=0, check=0, buildq=1, twin=1):
    """The search (``run_tasks``) for one setting of the work-analysis switches.

    The engine is the default setting; the others move one design choice of
    iMBEA towards ParMBE's, for the work analysis.  Each switch is a
    constant of the compiled code, so the engine's build has no trace of the
    others.  Memoised.

    * ``wmode``: 0 = bitset rows as wide as the largest candidate degree (the
      engine: every first-level task zeroes m x W words), 1 = as wide as this
      task's d = |N(x0)|;
    * ``check``: 0 = scan Q (the engine), 1 = closure: |∩_{y ∈ L'} N(y)| over
      the global neighbour lists of L', against |R'| (ParMBE's test, done
      after the expansion, which counts the absorbed vertices);
    * ``buildq``: 1 = the first-level local universe is P' ∪ Q' (all of N2(x0),
      the engine), 0 = P' only (only with ``check`` = 1: Q is never read);
    * ``twin``: 0 = no same-neighbourhood pruning, 1 = the engine's (after a
      *maximal* node, P vertices with N(v) ∩ L = N(x) ∩ L move to Q), 2 =
      ParMBE's (twins leave P at every node, maximal or not: a node that is
      not maximal is expanded too).  ``twin`` = 1 needs ``check`` = 0 (the closure check
      comes after the expansion, which has already removed the twins).
    """
    key = (int(wmode), int(check), int(buildq), int(twin))
    if key in _BUILDS:
        return _BUILDS[key]
    WMODE, CHECK, BUILDQ, TWIN = key
    if WMODE not in (0, 1) or CHECK not in (0, 1) or BUILDQ not in (0, 1) or TWIN not in (0, 1, 2):
        raise ValueError(f"no such iMBEA build: wmode, check, buildq, twin = {key}")
    if CHECK == 1 and TWIN == 1:
        raise ValueError("twin=1 needs check=0 (scan Q)")
    if CHECK == 0 and BUILDQ == 0:
        raise ValueError("check=0 (scan Q) needs buildq=1")

    # nogil: the progress thread (mbebench.progress) prints its lines while a search runs
    @keyed
    @njit(cache=True, nogil=True)
    def run_tasks(c_off, c_idx, l_off, l_idx, wc, wl, cand_is_left, rank, tasks, ks, nks, collect,
                  ctr):
        """Enumerate the first-level subtrees of the candidates in ``tasks``.

        ``c_off/c_idx``: candidate-side CSR (neighbours are L-side ids);
        ``l_off/l_idx``: L-side CSR; ``wc``/``wl``: element hashes of candidate /
        L-side vertices; ``rank``: position of every candidate in the first-level
        order (Q of a task = earlier candidates, P = later ones).  ``tasks`` are
        candidate ids; each one is processed independently of the others, so any
        partition of the started candidates over workers gives the full result.
        ``ctr``: None, or the work counters of :mod:`baselines._work` to add to.
        ``ks``/``nks``: task ``ti`` runs piece ``ks[ti]`` of ``nks[ti]`` of its subtree: every
        piece runs the level-0 nodes in full (the twins they move to Q and the Q they leave
        are what later level-0 nodes see, alike in every piece), but reports a level-0
        node and descends into it only for the level-0 branches i = ks (mod nks), in the
        level's order; piece 0 also reports the first-level biclique.  So the pieces of a
        task count its bicliques exactly once (a heavy task over several shards).

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
        # switch-only scratch: twins waiting for Q (twin=2), L' positions and
        # the closure's buffer (check=1), "is a first-level Q' vertex" (counters)
        twbuf = np.empty(4096 if TWIN == 2 else 1, dtype=np.int32)
        gpos = np.empty(max(max_deg, 1) if CHECK == 1 else 1, dtype=np.int32)
        max_ldeg = 1
        if CHECK == 1:
            for u in range(l_off.size - 1):
                max_ldeg = max(max_ldeg, l_off[u + 1] - l_off[u])
        cbuf = np.empty(max_ldeg, dtype=np.int32)
        isq1 = np.zeros(1, dtype=np.int64)
        if ctr is not None:
            isq1 = np.zeros(max(n_cand, 1), dtype=np.int64)

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
            kk = ks[ti]
            nk = nks[ti]
            b0 = 0  # level-0 branches so far: piece kk owns b0 = kk (mod nk)
            count_before = count
            d = c_off[x0 + 1] - c_off[x0]
            if d == 0:
                continue
            rx = rank[x0]
            nodes += 1
            if ctr is not None:
                ctr[work_counters.C_TASKS] += 1
            # ---- first level: common-neighbour counts over N2(x0)
            n2 = 0
            base0 = c_off[x0]
            for t in range(d):
                u = c_idx[base0 + t]
                if ctr is not None:
                    ctr[work_counters.C_N2] += l_off[u + 1] - l_off[u]
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
                if ctr is not None:
                    ctr[work_counters.C_KILLED] += 1
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
            elif CHECK == 1:  # the closure check compares with |R|
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
                    elif CHECK == 1:
                        rl += 1
                elif BUILDQ or rank[w] > rx:
                    loc[w] = m
                    glob[m] = w
                    m += 1
            if kk == 0:
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
            if ctr is not None:
                ctr[work_counters.C_REPORT] += d
                ctr[work_counters.C_P1] += np_
                ctr[work_counters.C_Q1] += m - np_
            if np_ == 0:
                for i in range(n2):
                    w = n2list[i]
                    cnt[w] = 0
                    loc[w] = -1
                task_counts[ti] = count - count_before
                continue
            # ---- local bitset rows over the positions of N(x0)
            Wr = W if WMODE == 0 else (d + 63) >> 6
            if rows.size < m * Wr:
                rows = np.zeros(max(m * Wr, 2 * rows.size), dtype=np.uint64)
            else:
                rows[: m * Wr] = 0
            if ctr is not None:
                ctr[work_counters.C_ZERO] += m * Wr
            for t in range(d):
                u = c_idx[base0 + t]
                word = t >> 6
                bit = np.uint64(1) << np.uint64(t & 63)
                if ctr is not None:
                    ctr[work_counters.C_BUILD] += l_off[u + 1] - l_off[u]
                for e in range(l_off[u], l_off[u + 1]):
                    w = l_idx[e]
                    lw = loc[w]
                    if lw >= 0:
                        rows[lw * Wr + word] |= bit
            # level 0
            pbuf = _grow_i32(pbuf, 2 * m + 16)
            pkey = _grow_i32(pkey, 2 * m + 16)
            qbuf = _grow_i32(qbuf, 2 * m + 16)
            if TWIN == 2:
                twbuf = _grow_i32(twbuf, m + 16)
            pn = 0
            qn = 0
            qs0 = 0
            for i in range(m):
                w = glob[i]
                if rank[w] > rx:
                    pbuf[pn] = i
                    pkey[pn] = cnt[w]
                    pn += 1
                elif CHECK == 0:  # the closure test needs no Q
                    qbuf[qn] = i
                    qn += 1
                if ctr is not None:
                    isq1[i] = rank[w] < rx
            for i in range(n2):
                w = n2list[i]
                cnt[w] = 0
                loc[w] = -1
            _sort_by_key(pbuf, pkey, 0, pn, d, tmp_p, tmp_k, cntsort)
            if ctr is not None:
                ctr[work_counters.C_SORT] += pn
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
                owned = True
                if k == 0:
                    owned = nk == 1 or b0 % nk == kk
                    b0 += 1
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
                xb = x * Wr
                nnz = 0
                if ctr is not None:
                    ctr[work_counters.C_NODES] += 1
                    ctr[work_counters.C_LPRIME] += ints[NNZ, k]
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
                if CHECK == 0:
                    # Q never holds this node's twins (they join Q below), so scanning before
                    # the expansion answers as after it; under ParMBE's rule (twin=2) a node
                    # that is not maximal still expands, as its twins leave P either way
                    words = 0  # counters only: every update is inside ``ctr is not None``
                    words1 = 0
                    nq = 0
                    for i in range(qs, qe):
                        v = qbuf[i]
                        vb = v * Wr
                        full = True
                        some = False
                        for j in range(nnz):
                            if ctr is not None:
                                words += 1
                                words1 += isq1[v]
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
                        if ctr is not None:
                            nq += 1
                        if full:
                            maximal = False
                            break
                        if some:
                            qbuf[qn] = v
                            qn += 1
                    if ctr is not None:
                        ctr[work_counters.C_QCHECK] += words
                        ctr[work_counters.C_QCHECK1] += words1
                        ctr[work_counters.C_QVERTS] += nq
                        if maximal:
                            ctr[work_counters.C_QCHECKMAX] += words
                    if not maximal and TWIN != 2:
                        qbuf[qe] = x
                        ints[QE, k] = qe + 1
                        if ctr is not None:
                            ctr[work_counters.C_NONMAX] += 1
                        continue
                # -- maximal expansion over the rest of P
                s_r = sumr[k] + wc[glob[x]]
                rl = ints[RL, k]
                if collect:
                    rbuf[rl] = glob[x]
                    rl += 1
                elif CHECK == 1:
                    rl += 1
                pbase = pe
                if pbuf.size < pbase + (pe - pp) + 1:
                    pbuf = _grow_i32(pbuf, pbase + (pe - pp) + 1)
                    pkey = _grow_i32(pkey, pbuf.size)
                pn = pbase
                wr = pp
                ntw = 0
                if ctr is not None:
                    ctr[work_counters.C_EXPAND] += (pe - pp) * nnz
                    ctr[work_counters.C_PVERTS] += pe - pp
                for i in range(pp, pe):
                    v = pbuf[i]
                    kv = pkey[i]
                    vb = v * Wr
                    c = 0
                    for j in range(nnz):
                        wi = lnz[cb + j]
                        c += _popcnt(rows[vb + wi] & lbits[cb + wi])
                    if c == nlp:
                        s_r += wc[glob[v]]
                        if collect:
                            rbuf[rl] = glob[v]
                            rl += 1
                        elif CHECK == 1:
                            rl += 1
                        if TWIN == 1 and kv == nlp:
                            # N(v) ∩ L == N(x) ∩ L: move v to Q with x (iMBEA)
                            qbuf[qe] = v
                            qe += 1
                            continue
                        if TWIN == 2 and kv == nlp:
                            # to Q with x below, maximal or not (ParMBE's rule)
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
                if CHECK == 1:
                    g = 0
                    for j in range(nnz):
                        wi = lnz[cb + j]
                        val = lbits[cb + wi]
                        while val:
                            gpos[g] = (wi << 6) + _cttz(val)
                            g += 1
                            val &= val - np.uint64(1)
                    # L' position t is the L-side vertex c_idx[base0 + t]
                    maximal = _closure_is(l_off, l_idx, c_idx, base0, gpos, 0, g, rl, cbuf, ctr)
                if CHECK == 0:
                    for i in range(ntw):
                        qbuf[qe] = twbuf[i]
                        qe += 1
                    qbuf[qe] = x
                    qe += 1
                    ints[QE, k] = qe
                if not maximal:
                    if ctr is not None:
                        ctr[work_counters.C_NONMAX] += 1
                    continue
                if not owned:  # another piece's level-0 branch: its Q and P work done
                    continue
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
                if ctr is not None:
                    ctr[work_counters.C_REPORT] += nlp
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
                    if ctr is not None:
                        ctr[work_counters.C_SORT] += pn - pbase
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
        if ctr is not None:
            ctr[work_counters.C_BICLIQUES] += count
        nbk = count if collect else 0
        return count, fp, nodes, task_counts, ro[: nbk + 1], rv, lo_[: nbk + 1], lv

    _BUILDS[key] = run_tasks
    return run_tasks


# the engine's search
run_tasks = build()
