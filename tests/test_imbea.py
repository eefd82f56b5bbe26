"""Serial iMBEA against the brute-force oracle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baselines import imbea
from mbebench import oracle
from mbebench.csr import from_edges
from mbebench.fingerprint import fingerprint_py

SIDES = ("auto", "left", "right")


def _graph(edges, n_left, n_right):
    left = [a for a, _ in edges]
    right = [b for _, b in edges]
    return from_edges(left, right, n_left, n_right)


def _check(g, side):
    expected = oracle.maximal_bicliques(g)
    got = imbea.bicliques(g, side)
    assert got == expected
    res = imbea.run(g, side=side)
    assert (res.count, res.fingerprint) == (len(expected), fingerprint_py(expected))
    assert res.count == len(expected)
    assert res.stats["side"] in ("left", "right")
    return res


@st.composite
def bipartite(draw):
    n_left = draw(st.integers(0, 12))
    n_right = draw(st.integers(0, 12))
    density = draw(st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    mask = rng.random((n_left, n_right)) < density
    a, b = np.nonzero(mask)
    # duplicate some edges: from_edges must drop them
    dup = rng.random(a.size) < 0.3
    a = np.concatenate([a, a[dup]])
    b = np.concatenate([b, b[dup]])
    perm = rng.permutation(a.size)
    return from_edges(a[perm], b[perm], n_left, n_right)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bipartite(), st.sampled_from(SIDES))
def test_random_graphs_match_oracle(g, side):
    _check(g, side)


@pytest.mark.parametrize("side", SIDES)
def test_empty_graphs(side):
    for n_left, n_right in [(0, 0), (3, 0), (0, 4), (5, 7)]:
        g = _graph([], n_left, n_right)
        res = imbea.run(g, side=side)
        assert (res.count, res.fingerprint) == (0, 0)
        assert imbea.bicliques(g, side) == set()


@pytest.mark.parametrize("side", SIDES)
def test_single_edge(side):
    g = _graph([(2, 1)], 4, 3)  # plus isolated vertices on both sides
    assert imbea.bicliques(g, side) == {(frozenset({2}), frozenset({1}))}
    _check(g, side)


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("center_left", [True, False])
def test_star(side, center_left):
    leaves = range(6)
    edges = [(0, v) for v in leaves] if center_left else [(v, 0) for v in leaves]
    g = _graph(edges, 1, 6) if center_left else _graph(edges, 6, 1)
    want = (frozenset({0}), frozenset(leaves))
    if not center_left:
        want = (want[1], want[0])
    assert imbea.bicliques(g, side) == {want}
    _check(g, side)


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("m,n", [(1, 1), (1, 5), (4, 1), (3, 3), (5, 8), (70, 3), (3, 70)])
def test_complete(side, m, n):
    edges = [(a, b) for a in range(m) for b in range(n)]
    g = _graph(edges, m + 2, n + 1)  # isolated vertices on both sides
    assert imbea.bicliques(g, side) == {(frozenset(range(m)), frozenset(range(n)))}
    res = imbea.run(g, side=side)
    assert res.count == 1


@pytest.mark.parametrize("side", SIDES)
def test_duplicate_edges_and_containment(side):
    # N(left 0) = {0,1,2,3} contains N(left 1) = {1,2} and N(left 2) = {2,3};
    # right 4 is adjacent to every left vertex; duplicates everywhere.
    edges = [(0, 0), (0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (2, 2), (2, 3)]
    edges += [(u, 4) for u in range(4)] + [(3, 5)]
    edges = edges + edges[::2]
    g = _graph(edges, 4, 6)
    got = imbea.bicliques(g, side)
    want = {
        (frozenset({0}), frozenset({0, 1, 2, 3, 4})),
        (frozenset({0, 1}), frozenset({1, 2, 4})),
        (frozenset({0, 2}), frozenset({2, 3, 4})),
        (frozenset({0, 1, 2}), frozenset({2, 4})),
        (frozenset({0, 1, 2, 3}), frozenset({4})),
        (frozenset({3}), frozenset({4, 5})),
    }
    assert got == want
    _check(g, side)


@pytest.mark.parametrize("side", SIDES)
def test_twins_on_candidate_side(side):
    # left 0..3 share one neighbourhood, left 4..5 another, overlapping
    edges = [(u, v) for u in range(4) for v in (0, 1, 2)]
    edges += [(u, v) for u in (4, 5) for v in (1, 2, 3)]
    edges += [(6, 3)]
    g = _graph(edges, 7, 4)
    _check(g, side)


@pytest.mark.parametrize("seed", [0, 1])
def test_sides_agree_on_medium_graph(seed):
    rng = np.random.default_rng(seed)
    mask = rng.random((200, 200)) < 0.05
    a, b = np.nonzero(mask)
    g = from_edges(a, b, 200, 200)
    r_left = imbea.run(g, side="left")
    r_right = imbea.run(g, side="right")
    assert r_left.count > 200
    assert (r_left.count, r_left.fingerprint) == (r_right.count, r_right.fingerprint)
    assert r_left.stats["nodes"] > 0 and r_left.algo_seconds >= 0
    # swapping the CSR sides mirrors the bicliques: same count, different fingerprint
    r_swap = imbea.run(g.swapped(), side="left")
    assert r_swap.count == r_left.count


def test_tasks_are_independent():
    """Any split of the first-level tasks sums to the whole (ParMBE relies on it)."""
    rng = np.random.default_rng(7)
    a, b = np.nonzero(rng.random((60, 40)) < 0.15)
    g = from_edges(a, b, 60, 40)
    for side in ("left", "right"):
        prep, tasks = imbea.prepare(g, side)
        whole = imbea.enumerate_tasks(prep, tasks)
        parts = [imbea.enumerate_tasks(prep, tasks[i::3]) for i in range(3)]
        assert sum(int(p[0]) for p in parts) == int(whole[0])
        assert sum(int(p[1]) for p in parts) % 2**64 == int(whole[1])
        rev = imbea.enumerate_tasks(prep, tasks[::-1].copy())
        assert (int(rev[0]), int(rev[1])) == (int(whole[0]), int(whole[1]))


@pytest.mark.parametrize("side", ["left", "right"])
def test_twin_tasks_are_redundant(side):
    """Starting a subtree at every candidate (twins and isolated ones included)
    changes nothing: the first-level maximality check rejects the twins."""
    edges = [(u, v) for u in range(4) for v in (0, 1, 2)]
    edges += [(u, v) for u in (4, 5, 6) for v in (1, 2, 3)] + [(7, 0), (8, 0), (9, 4)]
    g = _graph(edges, 11, 6)
    for h in (g, g.swapped()):
        prep, tasks = imbea.prepare(h, side)
        n_cand = h.n_left if side == "left" else h.n_right
        assert tasks.size < n_cand
        every = np.arange(n_cand, dtype=np.int32)
        whole = imbea.enumerate_tasks(prep, every)
        want = oracle.count_and_fingerprint(h)
        assert (int(whole[0]), int(whole[1])) == want


def test_bad_side():
    with pytest.raises(ValueError):
        imbea.run(_graph([(0, 0)], 1, 1), side="top")


@pytest.mark.parametrize("side", ["left", "right"])
def test_crown_graph_deep_search(side):
    """K_{n,n} minus a perfect matching: 2^n - 2 maximal bicliques and a search
    about n levels deep (past the kernel's initial per-level allocation)."""
    n = 12
    edges = [(a, b) for a in range(n) for b in range(n) if a != b]
    g = _graph(edges, n, n)
    res = _check(g, side)
    assert res.count == 2**n - 2
