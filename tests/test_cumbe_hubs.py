"""The hub table (cumbe.hubs): its rows are exactly the lists they stand for, the longest
lists get them first, and the memory given is never exceeded."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from cumbe import hubs


def lists(rng, n_u, n_v, p):
    """CSR lists of the other side: vertex y's neighbours among n_u candidates, sorted."""
    m = rng.random((n_v, n_u)) < p[:, None]
    off = np.concatenate(([0], np.cumsum(m.sum(1)))).astype(np.int64)
    adj = np.concatenate([np.flatnonzero(r) for r in m] + [np.zeros(0, np.int64)])
    return m, off, adj.astype(np.int32)


@pytest.mark.parametrize("seed", range(6))
def test_every_row_is_its_list(seed):
    rng = np.random.default_rng(seed)
    n_u, n_v = int(rng.integers(1, 150)), int(rng.integers(1, 40))
    m, off, adj = lists(rng, n_u, n_v, rng.random(n_v))
    tab = hubs.table(off, adj, n_u, 2**20, divisor=2**30)  # every non-empty list
    assert hubs.rows(tab, n_v) == np.count_nonzero(m.any(1))
    for y in range(n_v):
        if tab[y] >= 0:
            assert [hubs.contains(tab, y, u) for u in range(n_u)] == m[y].tolist()


def test_the_divisor_and_the_budget_pick_the_longest_lists():
    rng = np.random.default_rng(7)
    n_u = 320  # ten words a row
    p = np.array([0.9, 0.01, 0.5, 0.02, 0.3, 0.0])
    m, off, adj = lists(rng, n_u, len(p), p)
    deg = m.sum(1)
    # divisor 1: a row no larger than its list, 10 entries or more
    tab = hubs.table(off, adj, n_u, 2**20, divisor=1)
    assert set(np.flatnonzero(tab[:len(p)] >= 0)) == set(np.flatnonzero(deg >= 10))
    # room for the map and two rows: the two longest lists
    tab = hubs.table(off, adj, n_u, 4 * (len(p) + 2 * 10), divisor=2**30)
    assert tab.nbytes <= 4 * (len(p) + 2 * 10)
    assert set(np.flatnonzero(tab[:len(p)] >= 0)) == set(np.argsort(-deg)[:2])
    # no room, or divisor 0: no table at all
    assert hubs.table(off, adj, n_u, 4 * len(p), divisor=2**30).size == 1
    assert hubs.table(off, adj, n_u, 2**20, divisor=0).size == 1


def test_the_share_weighs_lists_by_their_degree_squared():
    off = np.array([0, 3, 4, 5], np.int64)  # degrees 3, 1, 1
    adj = np.array([0, 1, 2, 0, 1], np.int32)
    tab = hubs.table(off, adj, 3, 2**20, divisor=1)  # 1 word a row: every list
    assert hubs.share(tab, off) == 1.0
    tab = hubs.table(off, adj, 3, 4 * (3 + 1), divisor=2**30)  # room for the longest only
    assert hubs.rows(tab, 3) == 1 and hubs.share(tab, off) == pytest.approx(9 / 11)
    assert hubs.share(hubs.NONE, off) == 0.0


def test_a_run_launches_the_rows_build_only_when_they_take_enough_lookups(monkeypatch):
    from cumbe import buffers, engine, grid, single_device
    from cumbe.spec import run_options
    from mbebench.csr import from_edges

    # one vertex of the other side joined to all 200 candidates, 199 joined to one each
    left = list(range(200)) + list(range(199))
    right = [0] * 200 + list(range(1, 200))
    prep = engine.prepare_for(from_edges(left, right, 200, 200), side="left")
    plan = buffers.Plan(prep.n_u, prep.n_v, int(prep.adjU.size), int(prep.tasks.size), 3, 1,
                        4, 64)
    planned = single_device._Planned(grid.GridChoice(plan, 0, "", 2**30, buffers.nbytes(plan)),
                                     False, 1, np.zeros(1))
    opts = run_options(rounds=True, hub_divisor=1)  # rows for lists of 7 or more: one
    assert hubs.wanted(opts)
    tab, got = hubs.for_grid(prep, planned.choice, opts.hub_divisor)
    assert hubs.rows(tab, prep.n_v) == 1 and got.plan.hub_words == tab.size
    assert got.bytes == buffers.nbytes(got.plan) > planned.choice.bytes
    # a grid that leaves no room: none, and a run with that budget never compiles the build
    # that reads them
    small = planned.choice.bytes
    assert not hubs.may_have_rows(prep, small, small, 1)
    assert hubs.may_have_rows(prep, small, small + 4 * (prep.n_v + 7), 1)
    assert hubs.for_grid(prep, replace(planned.choice, budget_bytes=small), 1)[0] is hubs.NONE
    # that row takes 200**2 / (200**2 + 199) of the lookups: under a least share above it, none
    monkeypatch.setattr(hubs, "LEAST_SHARE", 0.999)
    assert hubs.for_grid(prep, planned.choice, 1) == (hubs.NONE, planned.choice)
    assert not hubs.may_have_rows(prep, small, 2**30, 1)
    # nor without rounds, nor with divisor 0
    assert not hubs.wanted(run_options(hub_divisor=1))
    assert not hubs.wanted(run_options(rounds=True, hub_divisor=0))
