"""Numba kernels of ParMBE's planner (:func:`baselines.parmbe_plan.plan_tasks`):
per-vertex cost estimates, first-level tail lengths and the task list.  The
tail rule itself is the search's (:func:`baselines._parmbe_kernel._split_two_hop`),
so the planner and the search cannot disagree on it."""

from __future__ import annotations

import numpy as np
from numba import njit

from baselines._parmbe_kernel import _count_two_hop, _split_two_hop
from mbebench.jitcache import keyed


@keyed
@njit(cache=True, nogil=True)
def tail_estimates(uo, ui, vo, vi, rank, lo, hi, est):
    """est[v] for lo <= v < hi: number of wedges v - y - u with rank(u) >
    rank(v) (a cheap upper bound of the work of the subproblem's first level,
    and of its tail length).  A range, so that callers can fill ``est`` from
    several threads."""
    for v in range(lo, hi):
        rv = rank[v]
        s = 0
        for e in range(uo[v], uo[v + 1]):
            y = ui[e]
            for f in range(vo[y], vo[y + 1]):
                if rank[vi[f]] > rv:
                    s += 1
        est[v] = s


@keyed
@njit(cache=True, nogil=True)
def tail_sizes(uo, ui, vo, vi, rank, verts, cnt, touched):
    """Per vertex of ``verts``: the length of its subproblem's first-level
    tail, or -1 if the subproblem is empty (X0 holds a lower-rank vertex)."""
    out = np.empty(verts.shape[0], np.int64)
    for t in range(verts.shape[0]):
        v = verts[t]
        d = uo[v + 1] - uo[v]
        nt = _count_two_hop(v, uo, ui, vo, vi, cnt, touched)
        # the side only enters the X0 hash sum, unused here
        killed, npp, _, _, _ = _split_two_hop(v, d, rank, cnt, touched, nt, True)
        for idx in range(nt):
            cnt[touched[idx]] = 0
        out[t] = -1 if killed or d == 0 else npp
    return out


@keyed
@njit(cache=True, nogil=True)
def build_tasks(verts, cost, kk, tau, max_chunk):
    """Tasks in the order of ``verts``: runs of unsplit vertices (kk == 1) of
    about ``tau`` cost and at most ``max_chunk`` vertices, and one task per
    piece k < K of a vertex split into K = kk pieces.

    Returns the items (vertex, k, K) in task order and the task bounds."""
    n_items = 0
    for i in range(verts.shape[0]):
        n_items += kk[i]
    tv = np.empty(n_items, np.int32)
    tk = np.empty(n_items, np.int32)
    tn = np.empty(n_items, np.int32)
    tc = np.empty(n_items, np.float64)
    m = 0
    for i in range(verts.shape[0]):
        for k in range(kk[i]):
            tv[m] = verts[i]
            tk[m] = k
            tn[m] = kk[i]
            tc[m] = cost[i]
            m += 1
    return tv, tk, tn, item_bounds(tn, tc, tau, max_chunk)


@keyed
@njit(cache=True, nogil=True)
def item_bounds(tn, cost, tau, max_chunk):
    """Task bounds over items (v, k, K) in dispatch order: a piece of a split
    subproblem (K > 1) is a task of its own, runs of whole subproblems are cut
    at about ``tau`` cost (``cost`` of their items) or ``max_chunk`` items."""
    n_items = tn.shape[0]
    bounds = np.empty(n_items + 1, np.int32)
    nt = 0
    acc = 0.0
    run = 0
    for m in range(n_items):
        if tn[m] > 1:
            if run > 0:
                nt += 1
                acc = 0.0
                run = 0
            bounds[nt] = m
            nt += 1
            continue
        if run == 0:
            bounds[nt] = m
        run += 1
        acc += cost[m]
        if acc >= tau or run >= max_chunk:
            nt += 1
            acc = 0.0
            run = 0
    if run > 0:
        nt += 1
    bounds[nt] = n_items
    return bounds[: nt + 1].copy()
