"""Every memory path of cuMBE runs in CI: block-wide tasks, block-wide tasks stealing from
each other, warp tasks stealing, the smallest memory a graph fits in, and the compact task
layout's build (warps and blocks, stealing), each against the
oracle (the CUDA simulator, one block of two warps; child processes, as in
test_cumbe_sim.py).  Each check asserts that its path really ran (block-wide tasks, more
tasks run than started = stolen pieces), so a broken path fails the count, and a path that
silently stopped running fails the assertion on the stats.  The child checks each run's count,
fingerprint and progress counters as it goes and stops at the first wrong one, so a broken
path fails the module within a run or two instead of after every path (issue 33)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Two graphs whose largest tasks do not fit a tight warp arena: a hub with a dense 2-hop
# neighbourhood, and a small random dense graph (deep trees, many published pieces).
CHILD = r"""
import json, sys
import numpy as np
from cumbe import engine as E
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
out = []
for gi, (l, r) in enumerate(graphs):
    g = from_edges(l, r, int(l.max()) + 1, int(r.max()) + 1)
    want = count_and_fingerprint(g)
    for variant in ("cuMBE", "noRS"):
        base = dict(variant=variant, threads=64, side="left", k=3)
        for name, extra in (
            ("block-wide", dict(warp_arena_words=block_arena(g, base))),
            ("block-wide-steal", dict(warp_arena_words=block_arena(g, base), eager_steal=1)),
            ("warp-steal", dict(eager_steal=1)),
            ("smallest", dict(device_memory_gib=E.smallest_memory_gib(g, variant, 64, 3, "left")
                              + 1e-6)),
            # every task in up to 3 pieces, in one launch (noRS: whole tasks)
            ("pieces", dict(prepared=split(E.prepare_for(g, variant, "left"), 1.0, 3))),
            ("pieces-steal", dict(prepared=split(E.prepare_for(g, variant, "left"), 1.0, 3),
                                  eager_steal=1)),
            ("pieces-block-wide-steal", dict(
                prepared=split(E.prepare_for(g, variant, "left"), 1.0, 2), eager_steal=1,
                warp_arena_words=block_arena(g, base))),
            # the compact task layout (its own build): warps and blocks, stealing
            ("compact-warp-steal", dict(compact_layout=True, eager_steal=1)),
            ("compact-block-wide-steal", dict(
                compact_layout=True, eager_steal=1,
                warp_arena_words=block_arena(g, {**base, "compact_layout": True}))),
        ):
            res = E.run(g, **base, **extra)
            out.append(dict(graph=gi, variant=variant, path=name, want=[want[0], want[1]],
                            got=[res.count, res.fingerprint], block_tasks=res.stats["block_tasks"],
                            tasks_run=res.stats["tasks_run"], n_tasks=res.stats["n_tasks"],
                            block_tasks_run=res.stats["block_tasks_run"],
                            blocks=res.stats["blocks"], progress=res.stats["progress_end"],
                            task_pieces=res.stats["task_pieces"], layout=res.stats["layout"]))
            # the first wrong path ends the child at once (the tests below check the rest)
            p = out[-1]["progress"]
            if out[-1]["got"] != out[-1]["want"] or (
                    not name.startswith("compact")
                    and (p["tasks"], p["bicliques"]) != (res.stats["n_tasks"], res.count)):
                print("WRONG PATH " + json.dumps(out[-1]), file=sys.stderr, flush=True)
                sys.exit(3)
    # below the smallest memory: a clear refusal naming the graph and what to try
    try:
        E.run(g, variant="cuMBE", threads=64, side="left", k=3,
              device_memory_gib=E.smallest_memory_gib(g, "cuMBE", 64, 3, "left") - 0.002)
        out.append(dict(graph=gi, path="below-smallest", error=None))
    except MemoryError as e:
        out.append(dict(graph=gi, path="below-smallest", error=str(e)))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def runs():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", CHILD], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=900)
    wrong = [ln for ln in p.stderr.splitlines() if ln.startswith("WRONG PATH ")]
    assert not wrong, wrong[0]
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def _paths(runs, name):
    got = [r for r in runs if r["path"] == name]
    assert len(got) == (4 if name != "below-smallest" else 2)
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
