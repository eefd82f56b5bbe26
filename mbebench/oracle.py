"""Brute-force maximal biclique enumeration: the ground truth for tests.

A pair (A, B) with A a set of left vertices and B a set of right vertices is a
maximal biclique iff both are non-empty, B = N(A) and A = N(B) (a closed pair).
We try every non-empty subset A of the smaller side, so this is exponential and
meant for graphs with at most ~16 vertices on one side.
"""

from __future__ import annotations

from mbebench.csr import CSRGraph
from mbebench.fingerprint import fingerprint_py

MAX_SIDE = 18


def maximal_bicliques(g: CSRGraph) -> set[tuple[frozenset[int], frozenset[int]]]:
    swap = g.n_left > g.n_right
    h = g.swapped() if swap else g
    if h.n_left > MAX_SIDE:
        raise ValueError(f"oracle limited to {MAX_SIDE} vertices on the smaller side")
    nbr_mask = [0] * h.n_left  # right-side neighbourhoods as bitmasks
    for u in range(h.n_left):
        for v in h.neighbors_left(u):
            nbr_mask[u] |= 1 << int(v)
    right_nbr = [0] * h.n_right
    for u in range(h.n_left):
        m = nbr_mask[u]
        while m:
            low = m & -m
            right_nbr[low.bit_length() - 1] |= 1 << u
            m ^= low
    full_right = (1 << h.n_right) - 1
    found = set()
    for a in range(1, 1 << h.n_left):
        b = full_right
        m = a
        while m and b:
            low = m & -m
            b &= nbr_mask[low.bit_length() - 1]
            m ^= low
        if not b:
            continue
        closure = (1 << h.n_left) - 1
        m = b
        while m:
            low = m & -m
            closure &= right_nbr[low.bit_length() - 1]
            m ^= low
        if closure != a:
            continue
        left = frozenset(i for i in range(h.n_left) if a >> i & 1)
        right = frozenset(i for i in range(h.n_right) if b >> i & 1)
        found.add((right, left) if swap else (left, right))
    return found


def count_and_fingerprint(g: CSRGraph) -> tuple[int, int]:
    bicliques = maximal_bicliques(g)
    return len(bicliques), fingerprint_py(bicliques)
