"""Where a task's data lives in its worker's arena, and how much arena a task needs.

Written once, compiled twice: the host (``numba.njit``) sizes the arenas and
decides which tasks need a whole thread block's arena, and the kernel
(``cuda.jit(device=True)``) places the same arrays at the same offsets.  See
:func:`compile_with`.

A first-level task is the subproblem of one candidate vertex ``v`` (paper
§III-C, restricted as in ParMBE): ``L = N(v)`` with local ids ``0..d-1``
(positions in v's sorted neighbour list) and one *slot* per vertex ``u`` of the
2-hop neighbourhood that can still join a biclique (higher rank than v; every
other 2-hop vertex as well in the noRS variant, whose Q is explicit).  A slot
owns its list ``N(u) ∩ N(v)`` in local ids.  Everything is bounded by the
task's wedge count ``W`` (2-hop paths leaving v towards slots), never by
|U| or |V|:

    persistent   SG SO SL KEY TAG   n_b words each  (slot: global id, list offset,
                                                      root list length, cached key, key tag)
                 LST                t_b words       (the slots' lists)
    build        HK HC              cap_h each      (open-addressing hash: global id -> count/slot)
                 PRE ST             d + 1, d        (wedge prefix sums, list starts)
    search       PARR AUX AUX2      n_b each        (candidate order, counts, compaction)
                 DL                 d               (deepest level whose L holds a local id)
                 CB                 2 * min(dv, CB_CAP) + 2  (maximality check: the running
                                                    intersection of L''s neighbour lists;
                                                    dv = the largest degree in N(v))
                 LV                 depth_b * NF    (level table, 64-bit sums inside)
                 Q                  qcap            (noRS: explicit Q stack)

The build and search parts overlap: the hash is dead once the lists exist.

The *compact* layout (:func:`compile_with` ``compact=True``, a kernel build of its own that
the engine launches only when memory is short: ``cumbe.engine``) needs less (at most 2
words more, where the level table's alignment falls the other way): TAG lies in
the search view under the dead hash (it is first written once the lists exist), and the
hash has 2 n_b entries, not the next power of two (``fetch`` scales its hash by a
multiply).  The plain build keeps the layout above: the same code in it ran slower uncapped
(measured in the memory-caps benchmark).
"""

from __future__ import annotations

import functools
import types

import numpy as np

from mbebench import envvars
from mbebench.jitcache import keyed

# per-level fields of the level table (int32 words; F_SUM is a 64-bit word pair)
F_PC, F_KL, F_LSLOT, F_LASTMIN, F_NID, F_NX, F_X, F_QS, F_QE = range(9)
F_SUM = 10  # a 64-bit word pair (even offset)
NF = 12  # even, so that every level's F_SUM pair is 8-byte aligned

# task bounds (index into task_bound)
B_NB, B_TB, B_DEPTH, B_CAPH, B_QCAP, B_CB = range(6)
NBOUNDS = 6

# arena fields (index into field_offset); K_END is the task's arena need
(K_SG, K_SO, K_SL, K_KEY, K_TAG, K_LST, K_HK, K_HC, K_PRE, K_ST,
 K_PARR, K_AUX, K_AUX2, K_DL, K_CB, K_LV, K_Q, K_END) = range(18)
NFIELDS = 18
FIELD_NAMES = ("SG", "SO", "SL", "KEY", "TAG", "LST", "HK", "HC", "PRE", "ST",
               "PARR", "AUX", "AUX2", "DL", "CB", "LV", "Q", "END")

QCAP_FACTOR = 4  # noRS: Q stack words per slot (overflow is an error, never a count)
# Longest neighbour list the maximality check copies; past it the check runs without a
# buffer (slower, and only when every vertex of L' has a longer list).
CB_CAP = 8192
# Tests only: a smaller cap in numba's CUDA simulator, so that the unbuffered path runs on
# graphs small enough for the oracle (tests/test_cumbe_unbuffered_check.py).  Read once,
# at import, by host and kernel alike; ignored on a GPU, whose builds stay as they are.
CB_CAP_ENV = "MBEBENCH_TEST_CB_CAP"
if envvars.get(CB_CAP_ENV) and envvars.simulating():
    CB_CAP = int(envvars.get(CB_CAP_ENV))
# The kernel keeps a task's field offsets and sizes in 32-bit shared memory: a task may
# need at most this many arena words (a 2-hop neighbourhood of about 2e8 wedges).
MAX_NEED = 2**31 - 1
# the layout the module's own (Python) functions use; compile_with sets it per build
COMPACT = False


def next_pow2(x):
    p = 16
    while p < x:
        p *= 2
    return p


def task_bound(k, d, w, n_higher, dv, rs):
    """Bound ``k`` of a task with ``d`` neighbours and ``w`` wedges; ``n_higher``
    bounds the slot count from the vertex side (vertices of higher rank), ``dv`` is
    the largest degree among the neighbours."""
    nb = w
    if rs and n_higher < nb:
        nb = n_higher
    if k == B_NB:
        return nb
    if k == B_TB:
        return w
    if k == B_DEPTH:
        # L strictly shrinks and P strictly shrinks along a path
        m = d
        if nb < m:
            m = nb
        return m + 2
    if k == B_CAPH:
        if COMPACT:
            c = 2 * nb  # load factor <= 1/2, any size (fetch scales the hash to it)
            if c < 16:
                c = 16
            return c
        return next_pow2(2 * nb)  # load factor <= 1/2: probing stays short
    if k == B_QCAP:
        if rs:
            return 0
        return QCAP_FACTOR * nb + 64
    if k == B_CB:
        c = dv
        if c > CB_CAP:
            c = CB_CAP
        return 2 * c + 2
    return 0


def _even(x):
    return x + (x & 1)


def field_offset(k, d, nb, tb, depth, caph, qcap, cb):
    """Offset (int32 words from the arena start) of field ``k``; ``K_END`` is the need."""
    o_sg = 0
    if COMPACT:
        # TAG lies in the search view (first, at o_re): 4 persistent fields, not 5
        o_lst = 4 * nb
        o_re = _even(o_lst + tb)
        if k <= K_TAG:
            return o_sg + k * nb + (k // K_TAG) * (o_re - 4 * nb)
    else:
        o_lst = 5 * nb
        o_re = _even(o_lst + tb)
        if k <= K_TAG:
            return o_sg + k * nb
    if k == K_LST:
        return o_lst
    # build view
    o_hk = o_re
    o_hc = o_hk + caph
    o_pre = o_hc + caph
    o_st = o_pre + d + 1
    build_end = o_st + d
    if k == K_HK:
        return o_hk
    if k == K_HC:
        return o_hc
    if k == K_PRE:
        return o_pre
    if k == K_ST:
        return o_st
    # search view
    o_parr = o_re
    if COMPACT:
        o_parr = o_re + nb  # after TAG
    o_aux = o_parr + nb
    o_aux2 = o_aux + nb
    o_dl = o_aux2 + nb
    o_cb = o_dl + d
    o_lv = _even(o_cb + cb)
    o_q = o_lv + depth * NF
    search_end = o_q + qcap
    if k == K_PARR:
        return o_parr
    if k == K_AUX:
        return o_aux
    if k == K_AUX2:
        return o_aux2
    if k == K_DL:
        return o_dl
    if k == K_CB:
        return o_cb
    if k == K_LV:
        return o_lv
    if k == K_Q:
        return o_q
    end = build_end
    if search_end > end:
        end = search_end
    return _even(end)


def task_need(d, w, n_higher, dv, rs):
    """Arena words the task needs (what the kernel will lay out)."""
    return field_offset(K_END, d, task_bound(B_NB, d, w, n_higher, dv, rs),
                        task_bound(B_TB, d, w, n_higher, dv, rs),
                        task_bound(B_DEPTH, d, w, n_higher, dv, rs),
                        task_bound(B_CAPH, d, w, n_higher, dv, rs),
                        task_bound(B_QCAP, d, w, n_higher, dv, rs),
                        task_bound(B_CB, d, w, n_higher, dv, rs))


_FUNCS = ("next_pow2", "task_bound", "_even", "field_offset", "task_need")


def compile_with(jit, compact: bool = False) -> types.SimpleNamespace:
    """The layout functions compiled with ``jit`` (they call each other's compiled
    versions), so host and device place the same arrays at the same offsets; ``compact``:
    the compact layout (module docstring; a constant, so the other one is compiled out)."""
    scope = dict(globals())
    scope["COMPACT"] = bool(compact)
    out = {}
    for name in _FUNCS:
        fn = types.FunctionType(globals()[name].__code__, scope, name)
        out[name] = scope[name] = jit(fn)
    return types.SimpleNamespace(**out)


@functools.cache
def _host(compact: bool) -> types.SimpleNamespace:
    """The layout functions compiled for the host, on first use: importing this module does
    not import numba (the launch from a cached cubin, :mod:`cumbe.cubin`, reads its
    constants only)."""
    import numba

    return compile_with(numba.njit(cache=False), compact=compact)


def __getattr__(name: str):
    # ``host`` and ``host_compact`` (tests), compiled on first use
    if name in ("host", "host_compact"):
        return _host(name == "host_compact")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def field_table(d, nb, tb, depth, caph, qcap, cb, compact: bool = False) -> dict:
    """Every field's offset, by name (tests and error messages)."""
    fo = _host(bool(compact)).field_offset
    return {n: int(fo(i, d, nb, tb, depth, caph, qcap, cb)) for i, n in enumerate(FIELD_NAMES)}


def bounds(d, w, n_higher, dv, rs: bool, compact: bool = False) -> tuple:
    """A task's bounds (n_b, t_b, depth, cap_h, q_cap, cb) in the given layout."""
    tb_ = _host(bool(compact)).task_bound
    return tuple(int(tb_(k, d, w, n_higher, dv, rs)) for k in range(NBOUNDS))


def needs(deg, wedges, n_higher, dv, rs: bool, compact: bool = False) -> np.ndarray:
    """Arena words per task (vectorised over tasks), in the plain or the compact layout."""
    return _needs_jit()(np.asarray(deg, np.int64), np.asarray(wedges, np.int64),
                        np.asarray(n_higher, np.int64), np.asarray(dv, np.int64), bool(rs),
                        bool(compact))


def _needs(deg, wedges, n_higher, dv, rs, compact):
    out = np.empty(deg.shape[0], np.int64)
    for i in range(deg.shape[0]):
        if compact:
            out[i] = _task_need_compact(deg[i], wedges[i], n_higher[i], dv[i], rs)
        else:
            out[i] = _task_need_host(deg[i], wedges[i], n_higher[i], dv[i], rs)
    return out


@functools.cache
def _needs_jit():
    """:func:`_needs` compiled, or loaded from numba's cache (the callees are compiled into
    it; keyed: an edit of this module, which the cache key would not see through the
    callees, is a fresh compile).  The callees are bound as globals first: numba reads
    them when it compiles."""
    import numba

    globals().update(_task_need_host=_host(False).task_need,
                     _task_need_compact=_host(True).task_need)
    return keyed(numba.njit(cache=True)(_needs))
