"""Building blocks of the iMBEA search (:mod:`baselines._imbea_kernel`): bit
intrinsics, the element hashes, the per-task workspace, growing arrays, the
counting sort of a level's candidates and the collect-mode output."""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.core import types
from numba.extending import intrinsic

from baselines._sort import insertion_sort
from mbebench.fingerprint import left_elem_nb, right_elem_nb
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
        insertion_sort(pkey, lo, hi, (pbuf,))
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
