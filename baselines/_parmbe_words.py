"""ParMBE's search on bit words (``_parmbe_kernel.build(dense=T)``, the work analysis's
model of a dense-core search for the GPU).

Once a node's Γ holds at most T <= 64 vertices y_0..y_{n-1}, each U vertex w adjacent to
one of them gets one word, B_w = {j : w ∈ N(y_j)}, for the whole subtree below: a Γ' there
is a word, a tail vertex's list is B_w & Γ (an AND and a popcount instead of a merge), and
the branch test's closure Γ(Γ') is the set of w with B_w ⊇ Γ'.  Every such w lies in the
list N(y_j) of each position j of Γ', and its word has at least |Γ'| bits; so each
position's list is kept heaviest word first, and the test reads one position's list (the
one with the fewest words of |Γ'| bits or more) down to the first lighter word, one word
test a vertex, instead of intersecting the lists of Γ' one after another.  The words are
built by reading N(y_j) for every position once (twice: the words, then the lists).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from baselines import _work as work_counters
from baselines._imbea_parts import _cttz, _popcnt
from mbebench.jitcache import keyed

MAXW = 64  # positions a word holds


@keyed
@njit(cache=True, nogil=True, inline="always")
def low_mask(n):
    """The word of positions 0..n-1."""
    if n >= 64:
        return ~np.uint64(0)
    return (np.uint64(1) << np.uint64(n)) - np.uint64(1)


@keyed
@njit(cache=True, nogil=True)
def build_words(ui, vo, vi, base, gam, n, wslot, wvert, wword, ylist, yoff, ycnt, hist, gcnt,
                ctr):
    """The words of the positions gam[0:n] (local ids: y_j = ui[base + gam[j]]).

    Fills wslot[w] (the slot of w, -1 elsewhere on entry), wvert[slot] = w, wword[slot] =
    B_w; for each position j, ylist[yoff[j]:yoff[j + 1]] the slots of N(y_j) whose word has
    two bits or more, heaviest first, and ycnt[j, p] = how many of N(y_j)'s words have p
    bits or more (p <= 1: all of N(y_j)); gcnt[p]: how many slots' words have p bits or more
    (the work counters' model of one list of all the words).  The arrays must hold
    sum |N(y_j)| entries.
    Returns the number of slots (their wslot entries are reset by :func:`clear_words`)."""
    nw = 0
    for j in range(n):
        y = ui[base + gam[j]]
        bit = np.uint64(1) << np.uint64(j)
        for e in range(vo[y], vo[y + 1]):
            w = vi[e]
            s = wslot[w]
            if s < 0:
                s = nw
                wslot[w] = s
                wvert[s] = w
                wword[s] = np.uint64(0)
                nw += 1
            wword[s] |= bit
    if ctr is not None:
        for p in range(MAXW + 2):
            gcnt[p] = 0
        for s in range(nw):
            gcnt[_popcnt(wword[s])] += 1
        for p in range(MAXW, -1, -1):
            gcnt[p] += gcnt[p + 1]
        ctr[work_counters.C_DWVERTS] += gcnt[2]
        ctr[work_counters.C_DUNION] += nw
    off = 0
    for j in range(n):
        y = ui[base + gam[j]]
        for p in range(MAXW + 2):
            hist[p] = 0
        for e in range(vo[y], vo[y + 1]):
            hist[_popcnt(wword[wslot[vi[e]]])] += 1
        # ycnt[j, p]: words of p bits or more; the list's heaviest-first positions from it
        acc = 0
        for p in range(MAXW + 1, -1, -1):
            acc += hist[p]
            ycnt[j, p] = acc
        yoff[j] = off
        for p in range(MAXW + 1, 1, -1):  # hist[p] becomes the next free place of weight p
            hist[p] = off + ycnt[j, p + 1] if p <= MAXW else off
        for e in range(vo[y], vo[y + 1]):
            s = wslot[vi[e]]
            pc = _popcnt(wword[s])
            if pc >= 2:
                ylist[hist[pc]] = s
                hist[pc] += 1
        off += ycnt[j, 2]
    yoff[n] = off
    if ctr is not None:
        ctr[work_counters.C_DROOTS] += 1
        ctr[work_counters.C_DENTRIES] += off
    return nw


@keyed
@njit(cache=True, nogil=True)
def words_of(ui, vo, vi, base, gam, n, wslot, wvert, wword, ylist, yoff, ycnt, hist, gcnt, ctr):
    """:func:`build_words` into wvert, wword, ylist, grown first if they cannot hold
    sum |N(y_j)| entries; returns (slots, wvert, wword, ylist)."""
    need = 0
    for j in range(n):
        y = ui[base + gam[j]]
        need += vo[y + 1] - vo[y]
    if need > wvert.shape[0]:
        cap = max(need, 2 * wvert.shape[0])
        wvert = np.empty(cap, np.int32)
        wword = np.empty(cap, np.uint64)
        ylist = np.empty(cap, np.int32)
    nw = build_words(ui, vo, vi, base, gam, n, wslot, wvert, wword, ylist, yoff, ycnt, hist,
                     gcnt, ctr)  # fmt: skip
    if ctr is not None:
        ctr[work_counters.C_DBUILD] += 2 * need
        ctr[work_counters.C_DPEAK] = max(ctr[work_counters.C_DPEAK], need)
    return nw, wvert, wword, ylist


@keyed
@njit(cache=True, nogil=True)
def clear_words(wslot, wvert, nw):
    for s in range(nw):
        wslot[wvert[s]] = -1


@keyed
@njit(cache=True, nogil=True)
def closure_exceeds(g, target, wword, ylist, yoff, ycnt, gcnt, ctr):
    """Whether more than ``target`` vertices w have B_w ⊇ g (g: a non-empty Γ' word), that
    is whether |Γ(Γ')| > |X'| (the branch is not kept)."""
    p = _popcnt(g)
    if ctr is not None:
        ctr[work_counters.C_DTESTS] += 1
        ctr[work_counters.C_DWORDS] += p
    if p == 1:
        return ycnt[_cttz(g), 1] > target
    if ctr is not None:
        ctr[work_counters.C_DGLOBAL] += gcnt[p]
    best = -1
    m = 0
    r = g
    while r:
        j = _cttz(r)
        r &= r - np.uint64(1)
        if best < 0 or ycnt[j, p] < m:
            best = j
            m = ycnt[j, p]
    if m <= target:
        return False
    c = 0
    s0 = yoff[best]
    for e in range(s0, s0 + m):
        if (wword[ylist[e]] & g) == g:
            c += 1
            if c > target:
                if ctr is not None:
                    ctr[work_counters.C_DWORDS] += e - s0 + 1
                    ctr[work_counters.C_DCHUNKS] += (e - s0) // 32 + 1
                return True
    if ctr is not None:
        ctr[work_counters.C_DWORDS] += m
        ctr[work_counters.C_DCHUNKS] += (m + 31) // 32
    return False
