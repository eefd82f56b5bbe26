"""cuMBE's host side without a GPU: preparation, arena layout, buffer spec, grid planner."""

from __future__ import annotations

import inspect
from dataclasses import replace

import numpy as np
import pytest

from cumbe import buffers
from cumbe import grid as grids
from cumbe import layout
from cumbe.prepare import prepare
from mbebench.csr import from_edges


def random_graph(rng, nl, nr, p):
    adj = rng.random((nl, nr)) < p
    left, right = np.nonzero(adj)
    return from_edges(left, right, nl, nr)


# ---------------------------------------------------------------- preparation


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("rs", [True, False])
def test_prepare_renumbers_by_rank_and_counts_wedges(seed, rs):
    rng = np.random.default_rng(seed)
    g = random_graph(rng, int(rng.integers(2, 30)), int(rng.integers(2, 30)),
                     rng.uniform(0.05, 0.5))
    p = prepare(g, "auto", rs)
    cand = (g.left_offsets, g.left_indices) if p.cand_left else (g.right_offsets, g.right_indices)
    deg = np.diff(cand[0])
    # rank order: (degree, id), and each renumbered row is the original one
    assert list(p.orig) == sorted(range(deg.size), key=lambda u: (deg[u], u))
    for r, u in enumerate(p.orig):
        assert list(p.adjU[p.offU[r]:p.offU[r + 1]]) == list(cand[1][cand[0][u]:cand[0][u + 1]])
    # other-side lists hold ranks, sorted
    for y in range(p.n_v):
        row = p.adjV[p.offV[y]:p.offV[y + 1]]
        assert list(row) == sorted(row)
        assert {int(p.orig[r]) for r in row} == {
            u for u in range(deg.size) if y in cand[1][cand[0][u]:cand[0][u + 1]]}
    # wedges per task, by brute force
    nbr = [set(p.adjU[p.offU[r]:p.offU[r + 1]].tolist()) for r in range(p.n_u)]
    for t, r in enumerate(p.tasks):
        exp = sum(1 for y in nbr[r] for u in p.adjV[p.offV[y]:p.offV[y + 1]] if (u > r or not rs))
        assert p.task_wedges[t] == exp
        assert p.task_deg[t] == len(nbr[r])


def test_twins_start_no_task():
    # left 0, 1, 2 share {0, 1}; left 3 has {1, 2}: only the lowest-ranked twin starts
    g = from_edges([0, 0, 1, 1, 2, 2, 3, 3], [0, 1, 0, 1, 0, 1, 1, 2], 4, 3)
    p = prepare(g, "left")
    assert p.n_twins == 2
    assert sorted(int(p.orig[r]) for r in p.tasks) == [0, 3]


def test_tasks_come_largest_first():
    rng = np.random.default_rng(3)
    p = prepare(random_graph(rng, 40, 30, 0.2))
    work = p.task_wedges + p.task_deg
    assert list(work) == sorted(work, reverse=True)


# ---------------------------------------------------------------- arena layout


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("rs", [True, False])
@pytest.mark.parametrize("d,w,nhi,dv", [(1, 0, 5, 1), (3, 10, 2, 4), (50, 400, 1000, 90),
                                        (7, 3, 0, 20000), (343, 2123, 37, 111)])
def test_layout_fields_do_not_overlap_and_fit_the_need(rs, d, w, nhi, dv, compact):
    lay = layout.host_compact if compact else layout.host
    b = [lay.task_bound(k, d, w, nhi, dv, rs) for k in range(layout.NBOUNDS)]
    assert tuple(b) == layout.bounds(d, w, nhi, dv, rs, compact)
    nb, tb, depth, caph, qcap, cb = b
    off = layout.field_table(d, nb, tb, depth, caph, qcap, cb, compact)
    sizes = {"SG": nb, "SO": nb, "SL": nb, "KEY": nb, "TAG": nb, "LST": tb, "HK": caph,
             "HC": caph, "PRE": d + 1, "ST": d, "PARR": nb, "AUX": nb, "AUX2": nb, "DL": d,
             "CB": cb, "LV": depth * layout.NF, "Q": qcap}
    need = off["END"]
    assert need == lay.task_need(d, w, nhi, dv, rs)
    assert need == layout.needs([d], [w], [nhi], [dv], rs, compact)[0]
    assert cb == 2 * min(dv, layout.CB_CAP) + 2
    assert need % 2 == 0 and off["LV"] % 2 == 0  # 64-bit level sums stay aligned
    # the compact layout's TAG is first written once the lists exist: it lies in the search
    # view, over the build's dead hash
    persistent = ["SG", "SO", "SL", "KEY", "LST"] + ([] if compact else ["TAG"])
    search = ["PARR", "AUX", "AUX2", "DL", "CB", "LV", "Q"] + (["TAG"] if compact else [])
    for view in (["HK", "HC", "PRE", "ST"], search):
        spans = sorted((off[n], off[n] + sizes[n]) for n in persistent + view if sizes[n])
        for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
            assert a1 <= b0
        assert spans[-1][1] <= need
    if compact:
        assert caph >= max(2 * nb, 16)
        assert need <= layout.host.task_need(d, w, nhi, dv, rs) + 2  # the alignment's 2
    else:
        assert caph >= 2 * nb and caph & (caph - 1) == 0
    assert depth >= min(d, nb) + 2


# ---------------------------------------------------------------- buffer spec


def test_kernel_arguments_are_the_buffer_spec():
    from cumbe import kernel as kernels

    for variant in [dict(), dict(rs=False), dict(es=False, instr=True)]:
        kern = kernels.build(threads=64, cache=False, **variant)  # compiled lazily: no GPU needed
        names = tuple(inspect.signature(kern.py_func).parameters)
        assert names == buffers.NAMES == kernels.KERNEL_ARGS


def test_nbytes_is_the_sum_of_the_allocations():
    from cumbe import kernel as kernels

    class cuda:  # host arrays stand in for device ones
        to_device = staticmethod(np.array)
        device_array = staticmethod(lambda shape, dtype: np.empty(shape, dtype))

    plan = buffers.Plan(n_u=10, n_v=7, n_edges=23, n_tasks=9, k=5, blocks=3, warps=2,
                        arena_words=40)
    host = {"offU": np.zeros(11, np.int64), "adjU": np.zeros(23, np.int32),
            "offV": np.zeros(8, np.int64), "adjV": np.zeros(23, np.int32),
            "orig": np.zeros(10, np.int32), "tasks": np.zeros(9, np.int32),
            "task_piece": np.zeros((9, 2), np.int32), "prm": np.zeros(kernels.NPARAMS, np.int64),
            "hubs": np.full(1, -1, np.int32)}
    arrays = buffers.allocate(plan, host, cuda)
    assert set(arrays) == set(buffers.NAMES)
    host_side = {b.name for b in buffers.SPEC if b.role == "view"}  # no device bytes of its own
    assert host_side == {"arena64"}
    total = sum(a.nbytes for n, a in arrays.items() if n not in host_side)
    assert total == buffers.nbytes(plan)
    assert not arrays["res"].any() and not arrays["prog"].any()  # the kernel only adds to them
    assert arrays["arena64"].nbytes == arrays["arena"].nbytes
    grow = buffers.nbytes(replace(plan, arena_words=41)) - buffers.nbytes(plan)
    assert grow == buffers.bytes_per_arena_word(plan)
    with pytest.raises(ValueError, match="prm"):
        buffers.allocate(plan, {**host, "prm": np.zeros(kernels.NPARAMS + 1, np.int64)}, cuda)


class _Dev(np.ndarray):
    """A host array standing in for a device one."""

    def copy_to_device(self, a):
        self[...] = a


class _CountingCuda:
    """Host arrays for device ones; counts the allocations."""

    def __init__(self):
        self.allocs = 0

    def to_device(self, a):
        self.allocs += 1
        return np.array(a).view(_Dev)

    def device_array(self, shape, dtype):
        self.allocs += 1
        return np.empty(shape, dtype).view(_Dev)


def test_kept_buffers_are_reused_with_their_room_and_within_the_budget():
    """A device worker's shards (cumbe.kept): the second launch allocates nothing, a smaller
    one takes views, a larger one allocates what grew, and a budget that the kept buffers
    would overflow makes them go (so that a memory cap stays a cap)."""
    from cumbe import kernel as kernels
    from cumbe.kept import Kept

    plan = buffers.Plan(n_u=10, n_v=7, n_edges=23, n_tasks=9, k=5, blocks=3, warps=2,
                        arena_words=40)
    host = {"offU": np.zeros(11, np.int64), "adjU": np.zeros(23, np.int32),
            "offV": np.zeros(8, np.int64), "adjV": np.zeros(23, np.int32),
            "orig": np.zeros(10, np.int32), "tasks": np.arange(9, dtype=np.int32),
            "task_piece": np.zeros((9, 2), np.int32), "prm": np.zeros(kernels.NPARAMS, np.int64),
            "hubs": np.full(1, -1, np.int32)}
    cuda, kept = _CountingCuda(), Kept()
    first = buffers.allocate(plan, host, cuda, kept, 10**9)
    made = cuda.allocs
    assert made == len([b for b in buffers.SPEC if b.role != "view"])
    assert kept.held_bytes() == buffers.nbytes(plan)
    first["res"][:] = 7  # a launch's results
    small = replace(plan, n_tasks=5, arena_words=20)
    fewer = {**host, "tasks": np.arange(5, dtype=np.int32) + 3,
             "task_piece": np.ones((5, 2), np.int32)}
    again = buffers.allocate(small, fewer, cuda, kept, 10**9)
    assert cuda.allocs == made  # views of what is kept
    assert not again["res"].any()  # zeroed again
    assert list(again["tasks"]) == [3, 4, 5, 6, 7] and again["task_piece"].shape == (5, 2)
    assert again["arena"].shape == (2 * small.half_words,)
    assert again["arena64"].nbytes == again["arena"].nbytes
    assert again["adjU"] is first["adjU"]  # the graph stays where it is
    big = replace(plan, arena_words=80)
    buffers.allocate(big, host, cuda, kept, 10**9)
    assert cuda.allocs == made + 1  # the arena grew; nothing else
    # a budget below what reuse would hold: every kept buffer goes, the run allocates exactly
    buffers.allocate(small, fewer, cuda, kept, buffers.nbytes(small))
    assert kept.held_bytes() == buffers.nbytes(small)
    # another graph (host arrays): its own copies
    other = {**fewer, "adjU": np.ones(23, np.int32)}
    n = cuda.allocs
    assert list(buffers.allocate(small, other, cuda, kept, 10**9)["adjU"]) == [1] * 23
    assert cuda.allocs == n + 1


def test_a_jobs_shards_check_their_preparation_once(monkeypatch):
    """The check that a preparation is the graph's (it reads the whole graph) runs on a
    job's first shard only; another preparation is checked again, and a wrong one refused."""
    from cumbe import consts, single_device
    from cumbe.kept import Kept
    from cumbe.prepare import take
    from cumbe.spec import RunOptions

    g = from_edges(np.array([0, 0, 1, 2, 2]), np.array([0, 1, 1, 0, 2]), 3, 3)
    prep = single_device.prepare_for(g, side="left")
    calls = []
    real = single_device.choose_side
    monkeypatch.setattr(single_device, "choose_side", lambda *a: calls.append(a) or real(*a))
    kept = Kept()
    state = single_device._Run(g, RunOptions(side="left"), "G", True, None, consts, kept=kept)
    for i in range(prep.tasks.size):
        p, _, _ = single_device._prepare(state, take(prep, np.array([i])))
        assert list(p.tasks) == [prep.tasks[i]]
    assert len(calls) == 1
    other = single_device.prepare_for(g, side="right")
    with pytest.raises(ValueError, match="not this graph's preparation"):
        single_device._prepare(state, other)
    assert len(calls) == 2


# ---------------------------------------------------------------- grid planner


BASE = buffers.Plan(n_u=1000, n_v=800, n_edges=5000, n_tasks=900, k=24, blocks=1, warps=4,
                    arena_words=2)


def test_grid_all_tasks_fit_warps():
    needs = np.array([100, 40, 8])
    c = grids.choose(needs, BASE, 100, 10**9)
    assert c.plan.blocks == 100 and c.plan.arena_words == 100 and c.block_tasks == 0
    assert c.reason == "" and c.bytes == buffers.nbytes(c.plan) <= 10**9


def test_grid_keeps_every_task_on_a_warp_with_fewer_blocks():
    # 100 blocks with 3,000-word warp arenas (the largest task block-wide) or 30 blocks whose
    # warps hold 10,000 words: 120 warps for the largest tasks against 100 blocks -> warps
    needs = np.array([10_000, 3_000, 500, 10])
    budget = buffers.nbytes(replace(BASE, blocks=100, arena_words=3_000))
    c = grids.choose(needs, BASE, 100, budget)
    assert c.block_tasks == 0 and c.plan.arena_words == 10_000
    assert c.plan.blocks == grids._most_blocks(BASE, 10_000, 100, budget)
    assert 25 <= c.plan.blocks < 100 and c.plan.blocks * c.plan.warps >= 100
    assert c.bytes <= budget and "every warp" in c.reason
    # one block more would not fit
    assert buffers.nbytes(replace(c.plan, blocks=c.plan.blocks + 1)) > budget


def test_grid_takes_more_blocks_when_few_tasks_run_block_wide():
    # the budget of the test above; ten 10,000-word tasks hold a fifth of the work: 100 blocks
    # with them block-wide beat about 30 blocks with every task on a warp (the old rule,
    # "warps if at least as many as the wide plan's blocks", took the warps)
    needs = np.array([10_000] * 10 + [1_000] * 400)
    budget = buffers.nbytes(replace(BASE, blocks=100, arena_words=3_000))
    warp_only = grids._most_blocks(BASE, 10_000, 100, budget)
    assert warp_only * BASE.warps >= 100 and warp_only * (1 + 6 * 0.2) < 100
    c = grids.choose(needs, BASE, 100, budget)
    assert c.plan.blocks == 100 and c.block_tasks == 10 and c.plan.arena_words >= 3_000
    assert "block-wide" in c.reason and c.bytes <= budget
    # the same grid, but the big tasks hold most of the work: every task on a warp
    heavy = np.array([10_000] * 10 + [10] * 400)
    assert grids.choose(heavy, BASE, 100, budget).block_tasks == 0
    # one big task, 2 % of the work: a block-wide phase is not worth its fixed cost
    light = np.array([10_000] + [1_000] * 400)
    assert grids.choose(light, BASE, 100, budget).block_tasks == 0


def test_grid_shrinks_when_a_block_cannot_hold_the_largest_task():
    needs = np.array([400_000, 10])
    budget = buffers.nbytes(replace(BASE, blocks=7, arena_words=100_000))
    c = grids.choose(needs, BASE, 100, budget)
    assert 1 <= c.plan.blocks <= 7 and c.plan.arena_words * 4 >= 400_000
    assert c.bytes <= budget and "device memory" in c.reason
    # block-wide: 7 blocks for the largest task, against 1 block (4 warps) with every task
    # on a warp
    assert c.block_tasks == 1 and c.plan.blocks > 4


def _work(wedges, butterflies):
    return grids.Work(np.asarray(wedges, np.int64), np.asarray(butterflies, np.int64))


def test_choose_layout_weighs_the_search_under_the_block_wide_tasks():
    # ten big tasks, a fifth of the wedges.  When they hold as small a share of the
    # butterflies (hubs: wedges, little search) the rule's plan stands: 100 blocks with them
    # block-wide.  When they hold nearly all the butterflies (dense blocks: deep search, slow
    # block-wide) the model takes a grid whose warps hold them
    needs = np.array([10_000] * 10 + [1_000] * 400)
    budget = buffers.nbytes(replace(BASE, blocks=100, arena_words=3_000))
    rule = grids.choose(needs, BASE, 100, budget)
    assert rule.plan.blocks == 100 and rule.block_tasks == 10
    hubs, comp = grids.choose_layout(needs, lambda: needs, BASE, 100, budget,
                                  _work(needs, [1] * 410))
    assert hubs == rule and not comp
    dense, comp = grids.choose_layout(needs, lambda: needs, BASE, 100, budget,
                                   _work(needs, [10**6] * 10 + [1] * 400))
    assert dense.block_tasks == 0 and dense.plan.arena_words == 10_000 and not comp
    assert dense.plan.blocks == grids._most_blocks(BASE, 10_000, 100, budget) < 100
    assert dense.bytes <= budget and "every warp" in dense.reason
    # the work and the compact needs are asked for only when memory is short
    roomy, comp = grids.choose_layout(needs, lambda: pytest.fail("compact asked for"), BASE, 100,
                                   10**9, lambda: pytest.fail("work asked for"))
    assert roomy.reason == "" and roomy.plan.blocks == 100 and not comp


def test_choose_layout_never_runs_a_critical_task_block_wide():
    # a hub's task with nearly all the wedges and no butterflies, and nine dense tasks with
    # the butterflies: block-wide, the dense ones are dear and the hub costs the model
    # nothing, so the model alone would run the hub block-wide on about 60 blocks; but the
    # whole block-wide phase would wait for it, so only the grids that keep it on a warp
    # are rated
    needs = np.array([20_000] + [10_000] * 9 + [1_000] * 400)
    budget = buffers.nbytes(replace(BASE, blocks=100, arena_words=6_000))
    work = _work([10**7] + [100] * 9 + [10] * 400, [0] + [10**6] * 9 + [1] * 400)
    c, _ = grids.choose_layout(needs, lambda: needs, BASE, 100, budget, work)
    assert c.block_tasks == 0 and c.plan.arena_words == 20_000


def test_grid_model_time():
    # fewer blocks cost time; so does a larger share of butterflies block-wide, and of
    # wedges with as many butterflies less (the penalty never goes below none)
    assert grids.model_time(100, 100, 0, 0) < grids.model_time(50, 100, 0, 0)
    assert grids.model_time(100, 100, 0.1, 0.1) < grids.model_time(100, 100, 0.3, 0.1)
    assert grids.model_time(100, 100, 0.0, 0.9) == grids.model_time(100, 100, 0, 0)
    assert grids.model_time(100, 100, 0, 0) == pytest.approx(grids.A + grids.B0)


def test_grid_candidates_fit_and_hold_the_largest_task():
    needs = np.array([40_000, 9_000, 3_000] + [500] * 300)
    budget = buffers.nbytes(replace(BASE, blocks=60, arena_words=9_000))
    cands = grids._candidates(needs, BASE, 100, budget, 40_000)
    assert cands[0][0] <= 100 and len(cands) > 5
    for nb, aw in cands:
        assert buffers.nbytes(replace(BASE, blocks=nb, arena_words=aw)) <= budget
        assert aw * BASE.warps >= 40_000 and aw <= 40_000 and aw % 2 == 0
    assert (grids._most_blocks(BASE, 40_000, 100, budget), 40_000) in cands


def test_choose_layout_takes_the_compact_layout_where_it_pays():
    needs = np.array([10_000] * 10 + [1_000] * 400)
    compact = needs * 8 // 10
    dense = _work(needs, [10**6] * 10 + [1] * 400)
    # memory for one block of the compact layout's largest task, not the plain one's
    budget = grids.smallest_bytes(compact, BASE)
    with pytest.raises(grids.DoesNotFit):
        grids.choose(needs, BASE, 100, budget)
    c, comp = grids.choose_layout(needs, lambda: compact, BASE, 100, budget, dense)
    assert comp and c.plan.blocks == 1 and c.plan.arena_words * BASE.warps >= 8_000
    with pytest.raises(grids.DoesNotFit) as e:
        grids.choose_layout(needs, lambda: compact, BASE, 100, budget - 8, dense)
    assert e.value.need == grids.smallest_bytes(compact, BASE)  # the smaller need is named
    # deep block-wide tasks: the compact layout's warps hold them on more blocks
    budget = buffers.nbytes(replace(BASE, blocks=40, arena_words=10_000))
    c, comp = grids.choose_layout(needs, lambda: compact, BASE, 100, budget, dense)
    assert comp and c.block_tasks == 0 and c.plan.arena_words == 8_000
    assert c.plan.blocks > grids._most_blocks(BASE, 10_000, 100, budget)
    # hubs: the rule's plan, in the plain layout (the compact build is the slower one)
    c, comp = grids.choose_layout(needs, lambda: compact, BASE, 100, budget,
                               _work(needs, [1] * 410))
    assert not comp and c == grids.choose(needs, BASE, 100, budget)


def test_grid_refuses_when_one_block_cannot_fit():
    with pytest.raises(grids.DoesNotFit) as ei:
        grids.choose(np.array([10**9]), BASE, 100, 10**6)
    assert ei.value.need > 10**6


def test_budget_applies_the_cap():
    assert grids.budget(80 * 2**30, 24 * 2**30) < 24 * 2**30 < grids.budget(80 * 2**30, None)


# ---------------------------------------------------------------- kernel build switches

_BUILD_PROBE = """
import json
from cumbe import kernel as kernels

class Codegen:  # what numba's index key asks of a codegen
    def magic_tuple(self):
        return ("codegen",)

k = kernels.build()
key = k._cache._index_key((), Codegen()) if hasattr(k._cache, "_index_key") else None
print(json.dumps({"cache": type(k._cache).__name__, "lineinfo": k.targetoptions["lineinfo"],
                  "sim": kernels.SIM, "key": repr(key)}))
"""


def _probe_build(extra_env: dict) -> dict:
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items()
           if k != "NUMBA_ENABLE_CUDASIM" and not k.startswith("CUMBE_")}
    env.update(extra_env)
    out = subprocess.run([sys.executable, "-c", _BUILD_PROBE], env=env, capture_output=True,
                         text=True, timeout=120, check=True,
                         cwd=Path(__file__).resolve().parents[1]).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_the_launch_bound_is_a_build_parameter_with_its_own_key(monkeypatch):
    """``blocks_per_sm`` compiles the kernel for that many blocks an SM (the jit option numba
    passes to ptxas), as a build of its own in the memo and the disk cache; 0 is the default
    768 threads an SM; the developers' CUMBE_MIN_BLOCKS still wins over both."""
    from cumbe import kernel as kernels

    if kernels.SIM:
        pytest.skip("numba's CUDA simulator is forced on in this environment")
    monkeypatch.delenv("CUMBE_MIN_BLOCKS", raising=False)
    monkeypatch.setattr(kernels, "_CACHE", {})
    plain, eight = kernels.build(), kernels.build(blocks_per_sm=8)
    assert plain.targetoptions["launch_bounds"] == (128, 6)
    assert eight.targetoptions["launch_bounds"] == (128, 8)
    assert kernels.build(blocks_per_sm=0) is plain and kernels.build(blocks_per_sm=8) is eight
    assert kernels.blocks_per_sm(256) == 3 and kernels.blocks_per_sm(128, 8) == 8
    monkeypatch.setenv("CUMBE_MIN_BLOCKS", "5")
    assert kernels.blocks_per_sm(128, 8) == 5


def test_blocks_per_sm_is_checked_against_the_sm_before_anything_runs():
    from cumbe.spec import run_options

    assert run_options().blocks_per_sm == 0
    assert run_options(blocks_per_sm=8, threads=128).blocks_per_sm == 8
    for bad in ({"blocks_per_sm": 9, "threads": 256}, {"blocks_per_sm": -1},
                {"blocks_per_sm": 33, "threads": 32}):
        with pytest.raises(ValueError, match="blocks_per_sm"):
            run_options(**bad)


def test_a_run_launches_the_build_of_its_launch_bound():
    from cumbe import engine, single_device
    from cumbe.spec import run_options

    prep = engine.prepare_for(from_edges([0, 0, 1, 1, 2, 2], [0, 1, 1, 2, 0, 2], 3, 3))
    plain = single_device.build_switches(run_options(), prep, False)
    assert "blocks_per_sm" not in plain  # the default build's cubin cache key as before
    assert single_device.build_switches(run_options(blocks_per_sm=8), prep, False) == {
        **plain, "blocks_per_sm": 8}


def test_the_check_in_rounds_is_a_build_of_its_own_and_needs_the_reverse_scan():
    from cumbe import engine, single_device
    from cumbe.spec import run_options

    prep = engine.prepare_for(from_edges([0, 0, 1, 1, 2, 2], [0, 1, 1, 2, 0, 2], 3, 3))
    plain = single_device.build_switches(run_options(), prep, False)
    assert "rounds" not in plain  # the default build's cubin cache key as before
    # with hub rows (expected unless hub_divisor is 0), and the build a run without them
    # launches: the rounds build's own key, as before rows existed
    assert single_device.build_switches(run_options(rounds=True), prep, False) == {
        **plain, "rounds": True, "hubs": True}
    for no_rows in (single_device.build_switches(run_options(rounds=True), prep, False, False),
                    single_device.build_switches(run_options(rounds=True, hub_divisor=0), prep,
                                                 False)):
        assert no_rows == {**plain, "rounds": True}
    assert "hubs" not in single_device.build_switches(run_options(hub_divisor=8), prep, False)
    assert single_device.build_switches(run_options(variant="noES", rounds=True), prep,
                                        False)["rounds"] is True
    with pytest.raises(ValueError, match="rounds .* variant noRS"):
        run_options(variant="noRS", rounds=True)


def test_builds_under_a_switch_have_disk_cache_keys_of_their_own():
    """numba's disk cache keys on neither jit options nor the environment: a lineinfo build
    must not be served the plain build compiled before it (it was, on the device: no source
    lines), nor one register bound another's; each switch set, with its value, is in the
    key, and a switch set to 0 is no switch."""
    plain = _probe_build({})
    if plain["sim"]:
        pytest.skip("numba's CUDA simulator is forced on in this environment")
    assert plain["cache"] == "CUDACache" and plain["lineinfo"] is False
    lineinfo = _probe_build({"CUMBE_LINEINFO": "1"})
    assert lineinfo["cache"] == "CUDACache" and lineinfo["lineinfo"] is True
    keys = {plain["key"], lineinfo["key"], _probe_build({"CUMBE_NOINLINE": "1"})["key"],
            _probe_build({"CUMBE_MIN_BLOCKS": "4"})["key"],
            _probe_build({"CUMBE_MIN_BLOCKS": "6"})["key"],
            _probe_build({"CUMBE_DEBUGINFO": "1"})["key"]}
    assert len(keys) == 6, keys
    assert "CUMBE_MIN_BLOCKS', '6'" in _probe_build({"CUMBE_MIN_BLOCKS": "6"})["key"]
    assert _probe_build({"CUMBE_LINEINFO": "0"}) == plain


def test_a_task_past_the_32_bit_offsets_is_refused_with_one_line(monkeypatch):
    """The kernel keeps a task's offsets in 32-bit shared memory: a task past
    layout.MAX_NEED words would be laid out wrong, so run and smallest_memory_gib refuse
    the graph, naming it, the vertex and what to try (no real graph that large fits a test:
    the need of one task is raised instead)."""
    from cumbe import engine, single_device
    from cumbe import launch

    g = replace(from_edges([0, 0, 1, 1, 2, 2], [0, 1, 1, 2, 0, 2], 3, 3), path="big.csr")
    real = engine.task_needs

    def one_huge(prep, rs, compact=False):
        needs = real(prep, rs, compact).copy()
        needs[0] = layout.MAX_NEED + 1
        return needs

    prep = engine.prepare_for(g)
    single_device.check_task_words(real(prep, True), prep, "big.csr", "cuMBE")  # they pass
    # the check comes before the kernel is built: no device and no simulator needed
    monkeypatch.setattr(single_device, "sim_enabled", lambda: True)
    monkeypatch.setattr(single_device, "task_needs", one_huge)
    monkeypatch.setattr(engine, "task_needs", one_huge)
    for call in (lambda: engine.run(g, threads=32), lambda: engine.smallest_memory_gib(g)):
        with pytest.raises(launch.LaunchError) as e:
            call()
        msg = str(e.value)
        assert "\n" not in msg and msg.startswith("big.csr: the task of ")
        assert f"{layout.MAX_NEED + 1} arena words" in msg and "try: a CPU engine" in msg


def test_a_neighbour_list_past_32_bit_positions_is_refused_with_one_line():
    """The maximality check binary-searches a neighbour's list with 32-bit positions: a
    task reaching a list of more than layout.MAX_NEED entries is refused, naming the graph
    (the longest list a task reaches is raised instead: no such graph fits a test)."""
    from cumbe import engine, launch, single_device

    g = from_edges([0, 0, 1, 1, 2, 2], [0, 1, 1, 2, 0, 2], 3, 3)
    prep = engine.prepare_for(g)
    needs = engine.task_needs(prep, True)
    single_device.check_task_words(needs, prep, "big.csr", "cuMBE")  # it passes
    huge = replace(prep, task_dv=prep.task_dv.copy())
    huge.task_dv[-1] = layout.MAX_NEED + 1
    with pytest.raises(launch.LaunchError) as e:
        single_device.check_task_words(needs, huge, "big.csr", "cuMBE")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("big.csr: a ")
    assert f"has {layout.MAX_NEED + 1} neighbours" in msg and "try: a CPU engine" in msg


# ---------------------------------------------------------------- run options, cached preparation


def test_run_options_check_the_spec_limits_once():
    from cumbe.spec import RunOptions, run_options

    assert run_options() == RunOptions()
    assert run_options(k=3.0, threads=64).params()["k"] == 3
    for bad, words in ((dict(k=0), "k must be"), (dict(threads=48), "multiple of 32"),
                       (dict(threads=1024), "<= 512"), (dict(variant="x"), "unknown cuMBE"),
                       (dict(side="up"), "side must be one of"), (dict(blocks=-1), "blocks"),
                       (dict(idle_fraction=1.0), "idle_fraction"),
                       (dict(shard="2/2"), "shard must be"),
                       (dict(device_memory_gib=0.0), "at least 0.01")):
        with pytest.raises(ValueError, match=words):
            run_options(**bad)


def test_the_rounds_build_ends_a_stage_later_unless_told():
    """The idle fraction left unset: the rounds build's (IDLE_FRACTION_ROUNDS), the paper's
    thief (0) with the paper's check; a value given is kept either way."""
    from cumbe.spec import IDLE_FRACTION_ROUNDS, run_options

    assert 0 < IDLE_FRACTION_ROUNDS < 1
    assert run_options(rounds=True).idle_fraction == IDLE_FRACTION_ROUNDS
    assert run_options().idle_fraction == 0.0
    assert run_options(variant="noES", rounds=True).idle_fraction == IDLE_FRACTION_ROUNDS
    assert run_options(rounds=True, idle_fraction=0).idle_fraction == 0.0
    assert run_options(idle_fraction=0.5).idle_fraction == 0.5
    with pytest.raises(ValueError, match="rounds"):
        run_options(variant="noRS", rounds=True)


def _prep_fields(p):
    from dataclasses import fields

    return {f.name: getattr(p, f.name) for f in fields(p) if f.name != "needs"}


def _same_prep(a, b):
    fa, fb = _prep_fields(a), _prep_fields(b)
    assert fa.keys() == fb.keys()
    for k in fa:
        assert np.array_equal(fa[k], fb[k]), k


@pytest.mark.parametrize("rs", [True, False])
def test_the_preparation_is_cached_beside_the_csr_and_read_back(tmp_path, monkeypatch, rs):
    from cumbe import prepare as preparation
    from mbebench.csr import read_csr, write_csr

    monkeypatch.delenv(preparation.CACHE_ENV, raising=False)
    g0 = random_graph(np.random.default_rng(3), 30, 40, 0.2)
    write_csr(g0, tmp_path / "g.csr")
    g = read_csr(tmp_path / "g.csr")
    first = preparation.prepare_cached(g, "auto", rs)
    _same_prep(first, prepare(g, "auto", rs))
    rs_needs = layout.needs(first.task_deg, first.task_wedges, first.n_higher, first.task_dv, rs)
    assert np.array_equal(first.needs, rs_needs)
    files = list((tmp_path / preparation.CACHE_DIR).iterdir())
    assert len(files) == 1 and not list(tmp_path.glob("*.npz"))

    def no_prepare(*_a, **_k):
        raise AssertionError("prepared again although the cache holds it")

    monkeypatch.setattr(preparation, "prepare", no_prepare)
    again = preparation.prepare_cached(read_csr(tmp_path / "g.csr"), "auto", rs)
    _same_prep(again, first)
    assert np.array_equal(again.needs, first.needs)
    # a shard's selection keeps each task's need
    part, _ = preparation.shard_of(again, "1/3")
    need_of = dict(zip(first.tasks.tolist(), rs_needs.tolist()))
    assert part.needs.tolist() == [need_of[t] for t in part.tasks.tolist()]


def test_a_stale_or_corrupt_preparation_cache_is_ignored_and_rebuilt(tmp_path, monkeypatch):
    from cumbe import prepare as preparation
    from mbebench.csr import read_csr, write_csr

    monkeypatch.delenv(preparation.CACHE_ENV, raising=False)
    calls = {"n": 0}
    real = preparation.prepare

    def counted(*a, **k):
        calls["n"] += 1
        return real(*a, **k)

    monkeypatch.setattr(preparation, "prepare", counted)
    rng = np.random.default_rng(5)
    path = tmp_path / "g.csr"
    adj = rng.random((20, 25)) < 0.3
    left, right = np.nonzero(adj)
    write_csr(from_edges(left, right, 20, 25), path)
    preparation.prepare_cached(read_csr(path))
    (cached,) = (tmp_path / preparation.CACHE_DIR).iterdir()
    good = cached.read_bytes()
    # another graph of the same sizes under the same name (its right side renumbered): only
    # the key, the graph's content, tells them apart
    write_csr(from_edges(left, 24 - right, 20, 25), path)
    got = preparation.prepare_cached(read_csr(path))
    assert calls["n"] == 2
    _same_prep(got, real(read_csr(path)))
    # a truncated file, a flipped byte in an array, and garbage: each rebuilt, never trusted
    fresh = cached.read_bytes()
    mid = len(fresh) // 2  # inside an array
    for broken in (fresh[: len(fresh) // 2], fresh[:-200] + bytes(200),
                   fresh[:mid] + bytes([fresh[mid] ^ 0xFF]) + fresh[mid + 1:], b"not a zip"):
        cached.write_bytes(broken)
        got = preparation.prepare_cached(read_csr(path))
        _same_prep(got, real(read_csr(path)))
    assert calls["n"] == 6
    assert good != fresh and cached.read_bytes() == fresh  # rewritten whole after each


def test_an_unchecked_graph_is_checked_only_when_the_preparation_cache_misses(
        tmp_path, monkeypatch):
    """`python -m cumbe run` reads its graph without the payload's checksum: a cache hit
    uses the entry's arrays, none of the file's; a miss checks the file before preparing
    it, and a corrupt one is the one-line error naming the file."""
    import os

    from cumbe import prepare as preparation
    from mbebench import csr

    monkeypatch.delenv(preparation.CACHE_ENV, raising=False)
    rng = np.random.default_rng(8)
    path = tmp_path / "g.csr"
    left, right = np.nonzero(rng.random((20, 25)) < 0.3)
    csr.write_csr(from_edges(left, right, 20, 25), path)
    g = csr.read_csr(path, verify=False)
    assert not g.verified and not g.swapped().verified and csr.verified(g).verified
    want = preparation.prepare(csr.read_csr(path))
    _same_prep(preparation.prepare_cached(g), want)  # a miss: checked, then stored
    checked = []
    real = csr.verified
    monkeypatch.setattr(preparation, "verified", lambda x: checked.append(x) or real(x))
    # a byte of the payload flipped in place, the file's time kept: the hit needs no check
    st = path.stat()
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 1
    path.write_bytes(bytes(raw))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    _same_prep(preparation.prepare_cached(csr.read_csr(path, verify=False)), want)
    assert checked == []
    # the entry gone: the miss checks the file and names it
    for entry in (tmp_path / preparation.CACHE_DIR).iterdir():
        entry.unlink()
    with pytest.raises(csr.CSRError, match=f"{path}: CSR checksum mismatch"):
        preparation.prepare_cached(csr.read_csr(path, verify=False))
    assert len(checked) == 1


def test_the_preparation_cache_can_be_switched_off(tmp_path, monkeypatch):
    from cumbe import prepare as preparation
    from mbebench.csr import read_csr, write_csr

    monkeypatch.setenv(preparation.CACHE_ENV, "0")
    write_csr(random_graph(np.random.default_rng(1), 10, 10, 0.4), tmp_path / "g.csr")
    preparation.prepare_cached(read_csr(tmp_path / "g.csr"))
    assert not (tmp_path / preparation.CACHE_DIR).exists()


def test_engine_run_checks_its_parameters_before_anything_starts(monkeypatch):
    """Bad parameters fail at once, on one device or several, before a device, a worker
    process or the preparation is touched (the preparation would raise otherwise)."""
    from cumbe import engine, single_device

    def untouched(*_a, **_k):
        raise AssertionError("ran past the parameter check")

    monkeypatch.setattr(single_device, "run", untouched)
    g = from_edges([0, 1], [1, 0], 2, 2)
    for bad, words in ((dict(threads=48), "multiple of 32"), (dict(k=0), "k must be"),
                       (dict(variant="noXY"), "unknown cuMBE variant"),
                       (dict(shard="1/1"), "shard must be"),
                       (dict(devices=2, idle_fraction=2.0), "idle_fraction"),
                       (dict(devices="0,0"), "devices must be")):
        with pytest.raises(ValueError, match=words):
            engine.run(g, **bad)


def test_a_graph_in_memory_that_names_no_file_is_not_cached(tmp_path, monkeypatch):
    from cumbe import prepare as preparation

    monkeypatch.delenv(preparation.CACHE_ENV, raising=False)
    g = replace(random_graph(np.random.default_rng(2), 10, 10, 0.4), path=str(tmp_path / "x.csr"))
    _same_prep(preparation.prepare_cached(g), prepare(g))
    assert not (tmp_path / preparation.CACHE_DIR).exists()
