"""Estimated cost of the first-level tasks whose local graph is small: what the shards and
the devices' queue balance by when one task may hold a large share of the work.

A task's default cost is its wedges plus its degree (:func:`cumbe.prepare.task_costs`):
the work of its first level.  Below the first level the work can grow exponentially in
the local graph's density, and the wedge count does not see it: a crown S_n's first task
holds half of its 2^n - 2 maximal bicliques, yet its wedges rate it at about 2/n of the
crown, so a queue that trusts them never splits it and one device runs it alone.

For a task whose neighbourhood L fits one 64-bit word and whose local candidates are few
(:data:`MAX_L`, :data:`MAX_P`, :data:`MAX_Q`), :func:`task_costs` estimates the work of its
whole subtree: the sum over its search-tree nodes of the node's list work, |L'| plus
sum over the node's candidates y of |N(y) ∩ L'| (at the root: the degree plus the wedges,
the default cost, so both kinds of estimate share one unit).  The tree is the
enumeration's (candidates in the task's fixed level-0 order, a branch is kept when no
earlier candidate or lower-ranked vertex covers its L', candidates whose lists hold L'
join R); each level-0 branch's subtree is estimated by random paths (Knuth's estimator)
that choose a child with probability 0.1 uniform, 0.9 in proportion to 2^|P'| (the bound
on a subtree's size, met by a crown's: unbiased for any such choice, nearly exact on a
crown, where the work doubles with each candidate).  Seeded per task: every process
computes the same estimates.  Other tasks keep the default cost.
"""

from __future__ import annotations

import functools
import types

import numpy as np

from mbebench.jitcache import keyed

MAX_L = 64  # the task's degree: L' as one 64-bit word
MAX_P = 48  # level-0 candidates (higher ranked, not holding L)
MAX_Q = 64  # lower-ranked vertices sharing a neighbour (they decide maximality)
MAX_Q_VISITS = MAX_L * MAX_Q  # list entries of lower-ranked vertices read to gather the task
PROBES = 8  # random paths per level-0 branch
# the costliest tasks are estimated again with more paths: the estimate of a crown-like
# subtree is heavy-tailed (a few paths carry it), and these tasks decide the balance
REFINE_TASKS = 16
REFINE_PROBES = 128
UNIFORM = 0.1  # the share of a path's choice made uniformly (bounds every weight)
SEED = 20261127

# numba.prange once compiled (_jit); range for the module's import
prange = range


def _side(offU, adjU, offV, adjV, v, upper, most):
    """The candidates of the task of rank ``v`` on one side of it (``upper``: higher ranks,
    the P side; else lower, the Q side) as (ranks ascending, masks of N(y) ∩ L over L's
    positions), after a flag that is False when the side reads more than ``most`` list
    entries (and the arrays are empty)."""
    d = offU[v + 1] - offU[v]
    n = 0
    for p in range(d):
        x = adjU[offU[v] + p]
        # adjV's lists are sorted by rank: v splits each into its lower and higher part
        lo = np.searchsorted(adjV[offV[x]:offV[x + 1]], v)
        n += (offV[x + 1] - offV[x] - lo) if upper else lo
    if n > most:
        return False, np.empty(0, np.int64), np.empty(0, np.uint64)
    keys = np.empty(n, np.int64)  # rank * 64 + position in L: one sort groups by rank
    k = 0
    for p in range(d):
        x = adjU[offU[v] + p]
        lo = offV[x] + np.searchsorted(adjV[offV[x]:offV[x + 1]], v)
        a, b = (lo, offV[x + 1]) if upper else (offV[x], lo)
        for e in range(a, b):
            if adjV[e] != v:
                keys[k] = np.int64(adjV[e]) * 64 + p
                k += 1
    keys = np.sort(keys[:k])
    ranks = np.empty(k, np.int64)
    masks = np.zeros(k, np.uint64)
    m = -1
    for key in keys:
        y = key >> 6
        if m < 0 or ranks[m] != y:
            m += 1
            ranks[m] = y
        masks[m] |= np.uint64(1) << np.uint64(key & 63)
    return True, ranks[:m + 1], masks[:m + 1]


def _popc(x):
    c = 0
    while x:
        x &= x - np.uint64(1)
        c += 1
    return c


def _work(L, P):
    """A node's list work: |L'| plus, over its candidates y, |N(y) ∩ L'|."""
    f = _popc(L)
    for y in P:
        f += _popc(y & L)
    return f


def _covered(Lc, P, i, Q):
    """Whether candidate i's branch (its L' = ``Lc``) is not maximal: a vertex of ``Q`` or
    an earlier candidate holds all of L'."""
    for q in Q:
        if (q & Lc) == Lc:
            return True
    for j in range(i):
        if (P[j] & Lc) == Lc:
            return True
    return False


def _child(Lc, P, i, Q, out_p, out_q):
    """Candidate i's child: its candidates (the later ones that meet L' without holding
    it: those join R) into ``out_p``, its covering set (``Q`` and the earlier candidates,
    those that meet L') into ``out_q``; returns both counts."""
    npn = 0
    for j in range(i + 1, P.size):
        m = P[j] & Lc
        if m != 0 and m != Lc:
            out_p[npn] = P[j]
            npn += 1
    nq = 0
    for q in Q:
        if (q & Lc) != 0:
            out_q[nq] = q
            nq += 1
    for j in range(i):
        if (P[j] & Lc) != 0:
            out_q[nq] = P[j]
            nq += 1
    return npn, nq


def _sub_work(pm, qm, lmask, probes, branch_p, branch_q):
    """Estimated work of the subtree of a node (its L, candidates ``pm`` in order, covering
    set ``qm``), by ``probes`` random paths; ``branch_p``/``branch_q``: scratch."""
    total = 0.0
    for _ in range(probes):
        L = lmask
        P = pm.copy()
        Q = qm.copy()
        weight = 1.0
        est = 0.0
        while True:
            est += weight * _work(L, P)
            n = P.size
            if n == 0:
                break
            # each child's size exponent (|P'|), or -1 when it is not maximal
            sizes = np.full(n, -1, np.int64)
            nvalid = 0
            gsum = 0.0
            for i in range(n):
                Lc = L & P[i]
                if _covered(Lc, P, i, Q):
                    continue
                c = 0
                for j in range(i + 1, n):
                    m = P[j] & Lc
                    if m != 0 and m != Lc:
                        c += 1
                sizes[i] = c
                nvalid += 1
                gsum += 2.0 ** min(c, 60)
            if nvalid == 0:
                break
            r = np.random.random()
            acc = 0.0
            pick = -1
            prob = 0.0
            for i in range(n):
                if sizes[i] < 0:
                    continue
                p = UNIFORM / nvalid + (1.0 - UNIFORM) * (2.0 ** min(sizes[i], 60)) / gsum
                acc += p
                pick = i
                prob = p
                if r < acc:
                    break
            weight /= prob
            Lc = L & P[pick]
            npn, nq = _child(Lc, P, pick, Q, branch_p, branch_q)
            L = Lc
            P = branch_p[:npn].copy()
            Q = branch_q[:nq].copy()
        total += est
    return total / probes


def _estimate(offU, adjU, offV, adjV, tasks, probes, seed, cost, count, branch_cost):
    """cost[t]: the estimated work of task t (-1: not estimated); its level-0 branches'
    estimates, in the task's fixed order, at branch_cost[t, :count[t]]."""
    n_u = offU.shape[0] - 1
    nt = tasks.shape[0]
    for t in prange(nt):
        cost[t] = -1.0
        count[t] = 0
        v = tasks[t]
        d = offU[v + 1] - offU[v]
        if d < 1 or d > MAX_L:
            continue
        full = ~np.uint64(0) if d == 64 else (np.uint64(1) << np.uint64(d)) - np.uint64(1)
        # the P side first: most tasks of a large sparse graph stop here
        ok, ranks, masks = _side(offU, adjU, offV, adjV, v, True, MAX_P * MAX_L)
        if not ok:
            continue
        nP = 0
        for k in range(ranks.size):
            if masks[k] != full:  # a candidate holding all of L joins R
                nP += 1
        if nP > MAX_P:
            continue
        ok, qranks, qm = _side(offU, adjU, offV, adjV, v, False, MAX_Q_VISITS)
        if not ok or qm.size > MAX_Q:
            continue
        nQ = qm.size
        pm = np.empty(nP, np.uint64)
        key = np.empty(nP, np.int64)
        a = 0
        for k in range(ranks.size):
            if masks[k] != full:
                pm[a] = masks[k]
                # the fixed level-0 order: |N(y) ∩ L|, then the vertex
                key[a] = _popc(masks[k]) * (n_u + 1) + ranks[k]
                a += 1
        o = np.argsort(key)
        pm = pm[o]
        np.random.seed(seed + v)
        branch_p = np.empty(nP + 1, np.uint64)
        branch_q = np.empty(nP + nQ + 1, np.uint64)
        total = float(_work(full, pm))
        sp = np.empty(nP, np.uint64)
        sq = np.empty(nP + nQ, np.uint64)
        for i in range(nP):
            Lc = full & pm[i]
            w = 0.0
            if not _covered(Lc, pm, i, qm):
                npn, nq = _child(Lc, pm, i, qm, sp, sq)
                if npn == 0:  # a leaf: its own list work, nothing to sample
                    branch_cost[t, i] = _popc(Lc)
                    total += _popc(Lc)
                    continue
                w = _sub_work(sp[:npn].copy(), sq[:nq].copy(), Lc, probes, branch_p, branch_q)
            branch_cost[t, i] = w
            total += w
        count[t] = nP
        cost[t] = total


@functools.cache
def _jit() -> types.SimpleNamespace:
    """The numba functions above, compiled or loaded from numba's cache on first use."""
    import numba

    globals()["prange"] = numba.prange
    jit = numba.njit(cache=True)
    g = globals()
    for name in ("_side", "_popc", "_work", "_covered", "_child", "_sub_work"):
        g[name] = keyed(jit(g[name]))
    return types.SimpleNamespace(
        estimate=keyed(numba.njit(cache=True, parallel=True)(_estimate)))


def candidates(prep) -> np.ndarray:
    """Indices of the tasks whose local graph may be small enough to estimate (a bound from
    the preparation's counts; :func:`task_costs` checks the rest)."""
    d = prep.task_deg
    return np.flatnonzero((d >= 1) & (d <= MAX_L) & (prep.task_wedges <= MAX_P * d))


def task_costs(prep) -> tuple[np.ndarray, dict]:
    """Every task's estimated work (its default cost, wedges + degree, where the estimate
    does not apply) and, for each estimated task (by index), the estimates of its level-0
    branches in its fixed order.  Tasks in pieces are estimated whole."""
    cost = (prep.task_wedges + prep.task_deg).astype(np.float64)
    sel = candidates(prep)
    if sel.size == 0:
        return cost, {}
    est = np.empty(sel.size, np.float64)
    count = np.zeros(sel.size, np.int64)
    branch = np.zeros((sel.size, MAX_P), np.float64)
    _jit().estimate(prep.offU, prep.adjU, prep.offV, prep.adjV,
                    np.ascontiguousarray(prep.tasks[sel], dtype=np.int64), PROBES, SEED, est,
                    count, branch)
    top = np.argsort(-est, kind="stable")[:REFINE_TASKS]
    top = top[est[top] >= 0]
    if top.size:
        e2 = np.empty(top.size, np.float64)
        c2 = np.zeros(top.size, np.int64)
        b2 = np.zeros((top.size, MAX_P), np.float64)
        _jit().estimate(prep.offU, prep.adjU, prep.offV, prep.adjV,
                        np.ascontiguousarray(prep.tasks[sel[top]], dtype=np.int64),
                        REFINE_PROBES, SEED + 1, e2, c2, b2)
        est[top], count[top], branch[top] = e2, c2, b2
    ok = est >= 0
    cost[sel[ok]] = np.maximum(est[ok], cost[sel[ok]])
    return cost, {int(sel[k]): branch[k, :count[k]].copy() for k in np.flatnonzero(ok)}
