"""Every memory path of cuMBE runs in CI: block-wide tasks, block-wide tasks stealing from
each other, warp tasks stealing, the smallest memory a graph fits in, and the compact task
layout's build (warps and blocks, stealing), each against the
oracle (the CUDA simulator, one block of two warps; child processes, as in
test_cumbe_sim.py).  Each check asserts that its path really ran (block-wide tasks, more
tasks run than started = stolen pieces), so a broken path fails the count, and a path that
silently stopped running fails the assertion on the stats.  The child checks each run's count,
fingerprint and progress counters as it goes, one path at a time, and whether the path
really ran (block-wide, stolen pieces) as soon as it has, and stops at the first wrong one:
a broken path fails the module within its own runs, not after every path (issue 33)."""

from __future__ import annotations

import json

import pytest
from simulated import run_simulated

# Two graphs whose largest tasks do not fit a tight warp arena: a hub with a dense 2-hop
# neighbourhood, and a small random dense graph (deep trees, many published pieces).
CHILD = r"""
import json, sys
import numpy as np
from cumbe import engine as cumbe_engine
from cumbe.prepare import split
from cumbe.selfcheck import block_arena
from mbebench.csr import from_edges
from mbebench.oracle import count_and_fingerprint

rng = np.random.default_rng(7)
graphs = []
m = rng.random((7, 9)) < 0.6
m[0, :] = True  # a hub: its task is the largest
graphs.append(np.nonzero(m))
m = rng.random((8, 8)) < 0.55
graphs.append(np.nonzero(m))
graphs = [from_edges(l, r, int(l.max()) + 1, int(r.max()) + 1) for l, r in graphs]
wants = [count_and_fingerprint(g) for g in graphs]


# each path's extra parameters, made only when the path runs; the paths the catalogue's
# breaks (tools/mutations.toml) hit first come first
PATHS = {
    # every task in up to 3 pieces, in one launch (noRS: whole tasks)
    "pieces-steal": lambda g, v, base: dict(
        prepared=split(cumbe_engine.prepare_for(g, v, "left"), 1.0, 3), eager_steal=1),
    "block-wide-steal": lambda g, v, base: dict(warp_arena_words=block_arena(g, base),
                                                eager_steal=1),
    "pieces": lambda g, v, base: dict(
        prepared=split(cumbe_engine.prepare_for(g, v, "left"), 1.0, 3)),
    "warp-steal": lambda g, v, base: dict(eager_steal=1),
    "block-wide": lambda g, v, base: dict(warp_arena_words=block_arena(g, base)),
    "smallest": lambda g, v, base: dict(
        device_memory_gib=cumbe_engine.smallest_memory_gib(g, v, 64, 3, "left") + 1e-6),
    "pieces-block-wide-steal": lambda g, v, base: dict(
        prepared=split(cumbe_engine.prepare_for(g, v, "left"), 1.0, 2), eager_steal=1,
        warp_arena_words=block_arena(g, base)),
    # the compact task layout (its own build): warps and blocks, stealing
    "compact-warp-steal": lambda g, v, base: dict(compact_layout=True, eager_steal=1),
    "compact-block-wide-steal": lambda g, v, base: dict(
        compact_layout=True, eager_steal=1,
        warp_arena_words=block_arena(g, {**base, "compact_layout": True})),
}


def wrong(why, what):
    # the first wrong path ends the child at once (the tests below check the rest)
    print(f"WRONG PATH {why}: {json.dumps(what)}", file=sys.stderr, flush=True)
    sys.exit(3)


WIDE = ("block-wide", "block-wide-steal", "compact-block-wide-steal")  # every run block-wide
# what shows that a stealing path stole: some run of it ran more than it started with
STOLE = {"warp-steal": ("tasks_run", "n_tasks"),
         "block-wide-steal": ("block_tasks_run", "block_tasks"),
         "pieces-steal": ("tasks_run", "n_tasks"),
         "pieces-block-wide-steal": ("tasks_run", "n_tasks"),
         "compact-warp-steal": ("tasks_run", "n_tasks"),
         "compact-block-wide-steal": ("block_tasks_run", "block_tasks")}
out = []
# one path at a time, so that a path is judged as soon as it ran: on both graphs, one in cuMBE
# and one in noRS, the two swapped from one path to the next (every path runs both graphs and
# both variants; the simulator's time is most of CI's, so not all four pairs)
for pi, (name, extra) in enumerate(PATHS.items()):
    mine = []
    for gi, g in enumerate(graphs):
        for variant in [("cuMBE", "noRS")[(gi + pi) % 2]]:
            base = dict(variant=variant, threads=64, side="left", k=3)
            res = cumbe_engine.run(g, **base, **extra(g, variant, base))
            mine.append(dict(graph=gi, variant=variant, path=name,
                             want=[wants[gi][0], wants[gi][1]],
                             got=[res.count, res.fingerprint],
                             block_tasks=res.stats["block_tasks"],
                             tasks_run=res.stats["tasks_run"], n_tasks=res.stats["n_tasks"],
                             block_tasks_run=res.stats["block_tasks_run"],
                             blocks=res.stats["blocks"], progress=res.stats["progress_end"],
                             task_pieces=res.stats["task_pieces"], layout=res.stats["layout"]))
            r, p = mine[-1], mine[-1]["progress"]
            if r["got"] != r["want"]:
                wrong("count or fingerprint", r)
            if not name.startswith("compact") and (p["tasks"], p["bicliques"]) != (
                    r["n_tasks"], r["got"][0]):
                wrong("progress counters", r)
            if name in WIDE and r["block_tasks"] < 1:
                wrong("no block-wide task", r)
    if name in STOLE and not any(r[STOLE[name][0]] > r[STOLE[name][1]] for r in mine):
        wrong("nothing stolen", mine)
    out += mine
for gi, g in enumerate(graphs):
    # below the smallest memory: a clear refusal naming the graph and what to try
    try:
        cumbe_engine.run(g, variant="cuMBE", threads=64, side="left", k=3,
              device_memory_gib=cumbe_engine.smallest_memory_gib(g, "cuMBE", 64, 3, "left") - 0.002)
        out.append(dict(graph=gi, path="below-smallest", error=None))
    except MemoryError as e:
        out.append(dict(graph=gi, path="below-smallest", error=str(e)))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def runs():
    p = run_simulated(CHILD, 2400)
    wrong = [ln for ln in p.stderr.splitlines() if ln.startswith("WRONG PATH ")]
    assert not wrong, wrong[0]
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def _paths(runs, name):
    got = [r for r in runs if r["path"] == name]
    assert len(got) == 2
    if name != "below-smallest":
        assert {r["variant"] for r in got} == {"cuMBE", "noRS"}, got
    return got


@pytest.mark.cudasim
@pytest.mark.parametrize("path", ["block-wide", "block-wide-steal", "warp-steal", "smallest"])
def test_every_memory_path_matches_the_oracle(runs, path):
    for r in _paths(runs, path):
        assert r["got"] == r["want"], r


@pytest.mark.cudasim
@pytest.mark.parametrize("path", ["pieces", "pieces-steal", "pieces-block-wide-steal"])
def test_tasks_in_pieces_sum_to_the_oracle(runs, path):
    # a piece runs its task's level-0 nodes but keeps only its share of their branches
    # (cumbe.prepare.split), its own and the ones thieves take from it; noRS keeps tasks whole
    for r in _paths(runs, path):
        assert r["got"] == r["want"], r
        assert (r["task_pieces"] > 0) == (r["variant"] == "cuMBE"), r
        p = r["progress"]
        assert (p["tasks"], p["cost"], p["bicliques"]) == (r["n_tasks"], p["of_cost"],
                                                           r["got"][0]), r
    if "steal" in path:  # pieces of pieces were stolen
        assert any(r["tasks_run"] > r["n_tasks"] for r in _paths(runs, path)
                   if r["variant"] == "cuMBE")


@pytest.mark.cudasim
@pytest.mark.parametrize("path", ["compact-warp-steal", "compact-block-wide-steal"])
def test_the_compact_layout_matches_the_oracle(runs, path):
    for r in _paths(runs, path):
        assert r["got"] == r["want"] and r["layout"] == "compact", r
    assert any(r["tasks_run"] > r["n_tasks"] for r in _paths(runs, path))  # pieces stolen
    if "block-wide" in path:
        assert all(r["block_tasks"] >= 1 for r in _paths(runs, path))
        assert any(r["block_tasks_run"] > r["block_tasks"] for r in _paths(runs, path))
    for name in ("warp-steal", "block-wide-steal", "smallest"):  # the plain layout, uncapped
        assert all(r["layout"] == "plain" for r in _paths(runs, name))


@pytest.mark.cudasim
def test_the_block_wide_paths_really_run_block_wide(runs):
    for r in _paths(runs, "block-wide") + _paths(runs, "block-wide-steal"):
        assert r["block_tasks"] >= 1, r


@pytest.mark.cudasim
def test_the_stealing_paths_really_steal(runs):
    # every stolen piece counts as a task run on top of the first-level tasks; block-wide
    # pieces count in the block-wide phase's tally too
    assert any(r["tasks_run"] > r["n_tasks"] for r in _paths(runs, "warp-steal"))
    assert any(r["block_tasks_run"] > r["block_tasks"] for r in _paths(runs, "block-wide-steal"))
    for r in _paths(runs, "block-wide"):  # without the test switch: no piece is published
        assert r["block_tasks_run"] >= r["block_tasks"], r


@pytest.mark.cudasim
def test_the_progress_counters_end_at_every_task_and_biclique(runs):
    # a task counts once, when its owner's part ends (stolen or not), and every biclique
    # once, by whoever found it: at the kernel's end the counters are the whole run
    for name in ("block-wide", "block-wide-steal", "warp-steal", "smallest"):
        for r in _paths(runs, name):
            p = r["progress"]
            assert (p["tasks"], p["cost"], p["bicliques"]) == (r["n_tasks"], p["of_cost"],
                                                               r["got"][0]), r
            assert p["of_tasks"] == r["n_tasks"] and p["of_cost"] > 0, r


@pytest.mark.cudasim
def test_below_the_smallest_memory_is_a_clear_refusal(runs):
    for r in _paths(runs, "below-smallest"):
        msg = r["error"]
        assert msg and "cuMBE needs" in msg and "try:" in msg and "\n" not in msg, r


def test_block_barrier_carries_cta_fences():
    """GPU-only guard: without the fences the block-wide barrier did not order memory on an
    H100 (docs/gpu.md, "The block-wide fault"); the simulator cannot show that, so the source
    of the barrier is checked here."""
    import inspect

    src = inspect.getsource(__import__("cumbe.kernel", fromlist=["x"])._block_sync_impl)
    body = [ln.strip() for ln in src.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    i = body.index("bsync()")
    assert "cuda.threadfence_block()" in body[:i] and "cuda.threadfence_block()" in body[i:]
