"""ParMBE's branch test (:mod:`baselines._parmbe_kernel`): is |Γ(Γ')| = |X'|?

The engine's test intersects the global lists of Γ' from the shortest one (:func:`_closure_size`,
:func:`_closure_is`, also iMBEA's closure check); two more serve the work analysis only
(``_parmbe_kernel.build``'s switches): the same test vertex by vertex
(:func:`_closure_is_vmajor`), and one cached witness tried first (:func:`_contains_all`).
Work counters as in :mod:`baselines._work`: every update under ``ctr is not None``.
"""

from __future__ import annotations

from numba import njit

from baselines import _work as work_counters
from mbebench.jitcache import keyed


@keyed
@njit(cache=True, nogil=True, inline="always")
def _lower_bound(arr, a, b, x):
    """The first position in the sorted arr[a:b] whose value is not below x (b if none)."""
    while a < b:
        mid = (a + b) >> 1
        if arr[mid] < x:
            a = mid + 1
        else:
            b = mid
    return a


@keyed
@njit(cache=True, nogil=True, inline="always")
def _log2_ceil(n):
    """The steps of a binary search over n elements, as the work counters count them (>= 1)."""
    lg = 1
    while (1 << lg) < n:
        lg += 1
    return lg


@keyed
@njit(cache=True, nogil=True, inline="always")
def _shortest(vo, ui, base, adj, lo, ln):
    """(position in adj, length) of the shortest global list among Γ' = adj[lo:lo+ln]."""
    best = lo
    bd = vo[ui[base + adj[lo]] + 1] - vo[ui[base + adj[lo]]]
    for e in range(lo + 1, lo + ln):
        y = ui[base + adj[e]]
        dy = vo[y + 1] - vo[y]
        if dy < bd:
            bd = dy
            best = e
    return best, bd


# what the vertex-by-vertex test passes as its list count when the shortest list did not
# settle it: it reads no list one by one, so closure_at0..2 do not count it
_NOT_BY_LISTS = 3


@keyed
@njit(cache=True, nogil=True, inline="always")
def _count_test(ctr, bd, work, ok, lists):
    ctr[work_counters.C_CTESTS] += 1
    if lists < _NOT_BY_LISTS:
        ctr[work_counters.C_CAT0 + lists] += 1
    if bd > 32:
        ctr[work_counters.C_CLONG] += 1
    ctr[work_counters.C_CLOSURE] += work
    if ok:
        ctr[work_counters.C_CLOSUREMAX] += work


@keyed
@njit(cache=True, nogil=True)
def _closure_is(vo, vi, ui, base, adj, lo, ln, target, buf, ctr):
    """True iff |∩_{j ∈ adj[lo:lo+ln]} N(ui[base + j])| == target (:func:`_closure_size`)."""
    return _closure_size(vo, vi, ui, base, adj, lo, ln, target, buf, ctr, vo, False) <= target


@keyed
@njit(cache=True, nogil=True)
def _closure_size(vo, vi, ui, base, adj, lo, ln, target, buf, ctr, uo, degcut):
    """|∩_{j ∈ adj[lo:lo+ln]} N(ui[base + j])| if it is above ``target`` (then ``buf`` holds
    the intersection), else a size at most ``target``.

    The intersection always holds at least ``target`` vertices (X, w and the
    absorbed tail vertices), so we stop as soon as it is down to ``target``.
    ``ctr`` (None, or the counters of :mod:`baselines._work`): the elements
    read go to ``closure``, and to ``closure_max`` when the test holds; the test to
    ``closure_tests``, the lists it intersects to ``closure_lists``, and to
    ``closure_long`` if its shortest list holds more than 32 vertices (a warp's lanes).
    ``degcut`` (the work analysis's model; ``uo``: the other side's offsets): the shortest
    list's vertices with fewer than |Γ'| neighbours are left out before any lookup (none of
    them contains Γ'); counted as on the GPU, whose lists are sorted by degree: a binary
    search, then the rest of the list.
    """
    best, bd = _shortest(vo, ui, base, adj, lo, ln)
    if ctr is not None:
        # a scan that stops once a chunk of 32 holds a list no longer than the target (the
        # test then holds: the list is the target's vertices), against the whole scan
        stop = ln
        for e in range(lo, lo + ln):
            y = ui[base + adj[e]]
            if vo[y + 1] - vo[y] <= target:
                stop = min(ln, ((e - lo) // 32 + 1) * 32)
                break
        ctr[work_counters.C_CSCAN] += ln
        ctr[work_counters.C_CSCANSTOP] += stop
    # ``work`` feeds the counters only: every update is inside ``ctr is not None``,
    # which numba prunes for the engine (an unguarded one costs the engine time)
    work = ln
    lists = 0
    group_end = 0  # (the 32-lane model's current round ends after this many lists)
    ge_gpu = 0
    ge_mid = 0
    ge_wide = 0
    m = bd
    if bd > target:
        yb = ui[base + adj[best]]
        s = vo[yb]
        if degcut:
            m = 0
            for t in range(bd):
                x = vi[s + t]
                if uo[x + 1] - uo[x] >= ln:
                    buf[m] = x
                    m += 1
            if ctr is not None:
                work += _log2_ceil(bd) + m
                ctr[work_counters.C_CCHUNKS] += (m + 31) // 32
                ctr[work_counters.C_CDEGCUT] += bd - m
        else:
            for t in range(bd):
                buf[t] = vi[s + t]
            if ctr is not None:
                work += bd
                ctr[work_counters.C_CCHUNKS] += (bd + 31) // 32
        for e in range(lo, lo + ln):
            if degcut and m <= target:
                break
            if e == best:
                continue
            y = ui[base + adj[e]]
            p = vo[y]
            s1 = vo[y + 1]
            p0 = p
            nm = 0
            if s1 - p > 16 * m:
                if ctr is not None:
                    work += m * _log2_ceil(s1 - p)
                for t in range(m):
                    x = buf[t]
                    # binary search for x in vi[p:s1]
                    p = _lower_bound(vi, p, s1, x)
                    if p < s1 and vi[p] == x:
                        buf[nm] = x
                        nm += 1
            else:
                for t in range(m):
                    x = buf[t]
                    while p < s1 and vi[p] < x:
                        p += 1
                    if p < s1 and vi[p] == x:
                        buf[nm] = x
                        nm += 1
                if ctr is not None:
                    work += (p - p0) + m
            if ctr is not None:
                ctr[work_counters.C_CTRIED] += m
                ctr[work_counters.C_CCHUNKS] += (m + 31) // 32
                ctr[work_counters.C_CTRIEDR] += target
                if lists >= group_end:  # a new round: as many lists as the vertices left fit
                    ctr[work_counters.C_CROUNDS] += 1
                    group_end = lists + max(1, 32 // max(m - target, 1))
                sl = max(m - target, 1)
                lg = 0 if sl == 1 else _log2_ceil(sl)  # (the helper's floor is 1)
                if lists >= ge_gpu:
                    ctr[work_counters.C_RGPU] += 1
                    ge_gpu = lists + (32 >> lg if sl <= 32 else 1)
                if lists >= ge_mid:
                    ctr[work_counters.C_RMID] += 1
                    ge_mid = lists + (32 >> lg if sl <= 32 else (2 if sl <= 64 else 1))
                if lists >= ge_wide:
                    ctr[work_counters.C_RWIDE] += 1
                    ge_wide = lists + (128 >> lg if sl <= 128 else 1)
            m = nm
            if ctr is not None:
                ctr[work_counters.C_CLISTS] += 1
                lists += 1
            if m <= target:
                break
    if ctr is not None:
        _count_test(ctr, bd, work, m <= target, lists)
    return m


@keyed
@njit(cache=True, nogil=True)
def _contains_all(uo, ui, u, base, adj, lo, ln, ctr):
    """Whether N(u) holds every vertex ui[base + j] of Γ' (j in adj[lo:lo+ln]): one binary
    search each, in u's sorted list."""
    a0 = uo[u]
    a1 = uo[u + 1]
    for e in range(lo, lo + ln):
        x = ui[base + adj[e]]
        if ctr is not None:
            ctr[work_counters.C_WCOST] += _log2_ceil(a1 - a0)
        a = _lower_bound(ui, a0, a1, x)
        if a >= a1 or ui[a] != x:
            return False
    return True


@keyed
@njit(cache=True, nogil=True)
def _closure_is_vmajor(vo, vi, ui, base, adj, lo, ln, target, ctr):
    """:func:`_closure_is` vertex by vertex: each vertex x of the shortest list is looked up
    in the other lists (binary search) until one lacks it; a vertex in all of them is a
    survivor, and ``target`` + 1 survivors end the test (not maximal) before the rest of
    the lists are read.  Work analysis only (``build(vmajor=True)``)."""
    best, bd = _shortest(vo, ui, base, adj, lo, ln)
    work = ln
    surv = 0
    if bd > target:
        yb = ui[base + adj[best]]
        s = vo[yb]
        for t in range(bd):
            x = vi[s + t]
            work += 1
            inall = True
            for e in range(lo, lo + ln):
                if e == best:
                    continue
                y = ui[base + adj[e]]
                if ctr is not None:
                    work += _log2_ceil(vo[y + 1] - vo[y])
                a = _lower_bound(vi, vo[y], vo[y + 1], x)
                if a >= vo[y + 1] or vi[a] != x:
                    inall = False
                    break
            if inall:
                surv += 1
                if surv > target:
                    break
    ok = bd <= target or surv <= target
    if ctr is not None:
        _count_test(ctr, bd, work, ok, 0 if bd <= target else _NOT_BY_LISTS)
    return ok


@keyed
@njit(cache=True, nogil=True)
def _witness_is_left(vo, vi, ui, base, adj, lo, ln, rank, rv, qmark, buf, ctr):
    """The work analysis's model of a test that knows P (docs/dense-cores.md, lead 7):
    L' is maximal iff no witness contains it, a witness being a vertex ranked below the task's
    root ``rv`` or a candidate already tried on the node's path (``qmark`` > 0); R', x and the
    remaining candidates leave at once.  Intersects only the shortest list's witnesses with
    the other lists, stopping once none is left.  True iff one contains L' (not maximal)."""
    best, bd = _shortest(vo, ui, base, adj, lo, ln)
    yb = ui[base + adj[best]]
    m = 0
    for t in range(vo[yb], vo[yb + 1]):
        u = vi[t]
        if rank[u] < rv or qmark[u] > 0:
            buf[m] = u
            m += 1
    ctr[work_counters.C_PWCLASS] += bd
    for e in range(lo, lo + ln):
        if m == 0:
            break
        if e == best:
            continue
        y = ui[base + adj[e]]
        ctr[work_counters.C_PWTRIED] += m
        ctr[work_counters.C_PWLISTS] += 1
        nm = 0
        p = vo[y]
        for t in range(m):
            p = _lower_bound(vi, p, vo[y + 1], buf[t])
            if p < vo[y + 1] and vi[p] == buf[t]:
                buf[nm] = buf[t]
                nm += 1
        m = nm
    return m > 0
