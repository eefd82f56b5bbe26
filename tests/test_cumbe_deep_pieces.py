"""Tasks in pieces below the first level (issue 31 item 2): a piece (k0 of K0, k1 of K1)
keeps the level-0 branches with k0 (mod K0) candidates after them and, inside each, the
level-1 branches with k1 (mod K1) after them (cumbe.prepare.split, cumbe.kernel.search),
thieves applying the same rule at either level.  In the simulator every task of a crown, a union of
crowns and a random graph goes into K0 x K1 pieces, stolen from eagerly, and the count and
fingerprint must be the brute-force oracle's for every (K0, K1).  On the host: the split of
a union of crowns with one dominant crown leaves no item much above 1/8 of its bicliques
on 4 devices, and a queue of the shards (their true work known exactly for crowns)
reaches 3.6x (1.9x on 2), pipeline shards "i/4" alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cumbe.prepare import prepare, split, spread, task_costs
from mbebench import shard as sharding
from mbebench.csr import from_edges

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys
import numpy as np
from dataclasses import replace
from cumbe import engine as cumbe_engine
from cumbe.prepare import take
from cumbe.selfcheck import block_arena
from mbebench import shard as sharding
from mbebench.csr import from_edges
from mbebench.oracle import count_and_fingerprint


def union(ns):
    l, r, off = [], [], 0
    for n in ns:
        i, j = np.nonzero(~np.eye(n, dtype=bool))
        l.append(i + off)
        r.append(j + off)
        off += n
    return from_edges(np.concatenate(l), np.concatenate(r), off, off)


def pieces(prep, K0, K1):
    src, k, nk = sharding.split_pieces(prep.task_k, prep.task_nk, np.full(prep.tasks.size, K0))
    out = replace(take(prep, src), task_k=k, task_nk=nk)
    src, k1, nk1 = sharding.split_pieces(out.task_k1, out.task_nk1, np.full(src.size, K1))
    return replace(take(out, src), task_k1=k1, task_nk1=nk1)


rng = np.random.default_rng(3)
l, r = np.nonzero(rng.random((8, 8)) < 0.55)
graphs = {"crown6": union([6]), "crowns5-4-3": union([5, 4, 3]),
          "random": from_edges(l, r, 8, 8)}
out = []
for name, g in graphs.items():
    want = list(count_and_fingerprint(g))
    # eager 1: thieves take level-0 nodes (their own level 0 keeps the level-1 rule);
    # eager 2: victims publish only from level 1 down, so thieves take level-1 nodes too
    # wide: warp arenas too small for the largest tasks, which run block-wide
    for K0, K1, eager, wide in [(1, 2, 0, 0), (2, 3, 1, 0), (3, 2, 1, 0), (1, 2, 2, 0),
                                (2, 2, 2, 0), (2, 2, 1, 1)]:
        base = dict(variant="cuMBE", threads=64, side="left", k=3)
        prep = pieces(cumbe_engine.prepare_for(g, "cuMBE", "left"), K0, K1)
        res = cumbe_engine.run(g, **base, prepared=prep, eager_steal=eager,
                               **(dict(warp_arena_words=block_arena(g, base)) if wide else {}))
        out.append(dict(graph=name, K0=K0, K1=K1, eager=eager, wide=wide,
                        block_tasks=res.stats["block_tasks"], want=want,
                        got=[res.count, res.fingerprint], tasks_run=res.stats["tasks_run"],
                        n_tasks=res.stats["n_tasks"], task_pieces=res.stats["task_pieces"]))
        if out[-1]["got"] != want:  # the first wrong one ends the child
            print("WRONG " + json.dumps(out[-1]), file=sys.stderr, flush=True)
            sys.exit(3)
print(json.dumps(out))
"""


@pytest.mark.cudasim
def test_pieces_below_the_first_level_sum_to_the_oracle():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", CHILD], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=900)
    wrong = [ln for ln in p.stderr.splitlines() if ln.startswith("WRONG ")]
    assert not wrong, wrong[0]
    assert p.returncode == 0, p.stderr[-3000:]
    runs = json.loads(p.stdout.strip().splitlines()[-1])
    assert len(runs) == 18
    assert all(r["block_tasks"] > 0 for r in runs if r["wide"])  # block-wide pieces ran
    for r in runs:
        assert r["got"] == r["want"], r
        assert r["task_pieces"] == r["n_tasks"], r  # every task ran as a piece
    assert runs[0]["want"][0] == 2**6 - 2
    # thieves took pieces of pieces (eager stealing), on every graph, from both levels
    for g in ("crown6", "crowns5-4-3", "random"):
        for eager in (1, 2):
            assert any(r["tasks_run"] > r["n_tasks"] for r in runs
                       if r["graph"] == g and r["eager"] == eager)


# --- the host's split, against the crowns' exact bicliques per piece --------------------


def crown_union(ns):
    l, r, off = [], [], 0
    for n in ns:
        i, j = np.nonzero(~np.eye(n, dtype=bool))
        l.append(i + off)
        r.append(j + off)
        off += n
    return from_edges(np.concatenate(l), np.concatenate(r), off, off)


def crown_truth(prep, ns):
    """Each piece's bicliques in a union of crowns S_n (candidates on the left): task v
    of S_n, the p-th of its crown, has c0 = n - 1 - p level-0 candidates (ids are ranks: one
    degree), in vertex order; the branch with a after it holds {v, u} with any set of
    those a: 2**a bicliques, of which its level-1 branch with c after it holds 2**c and
    the branch's own node 1; the whole crown's side, in the first task's deepest path, is
    no biclique (its other side is empty)."""
    start = np.concatenate([[0], np.cumsum(ns)])
    out = np.zeros(prep.tasks.size)
    for i, t in enumerate(prep.tasks):
        v = int(prep.orig[t])
        comp = int(np.searchsorted(start, v, side="right") - 1)
        c0 = ns[comp] - 1 - (v - start[comp])
        k0, n0, k1, n1 = (int(x[i]) for x in (prep.task_k, prep.task_nk, prep.task_k1,
                                              prep.task_nk1))
        w = 1.0 if k0 == 0 and k1 == 0 else 0.0
        for a in range(k0, c0, n0):
            w += (k1 == 0) + sum(2.0**c for c in range(k1, a, n1))
        first = c0 == ns[comp] - 1 and (c0 - 1) % n0 == k0 and (c0 - 2) % n1 == k1
        out[i] = w - first
    return out


def queue(ns, devices, spd=4):
    """The device queue's split and shards of a crown union, and its makespan (a share of
    all bicliques) when every shard takes its true work, largest estimate first, each to
    the first device free."""
    prep = prepare(crown_union(ns), "left", True)
    tg = sharding.guided_targets(devices, spd)
    total = float(task_costs(prep).sum())
    p = split(prep, total * tg.max() / tg.sum(), tg.size, 4 * devices,
              sharding.deep_pieces(devices))
    truth = crown_truth(p, ns)
    want = sum(2.0**n - 2 for n in ns)
    assert truth.sum() == pytest.approx(want, rel=1e-12)  # the pieces partition the crowns
    costs = task_costs(p)
    a = sharding.assign_weighted(costs, tg, *spread(p))
    est = np.bincount(a, weights=costs, minlength=tg.size)
    true = np.bincount(a, weights=truth, minlength=tg.size) / want
    free = np.zeros(devices)
    for s in np.argsort(-est, kind="stable"):
        free[np.argmin(free)] += true[s]
    return truth.max() / want, free.max()


@pytest.mark.parametrize("ns", [[31, *range(29, 19, -1)], [31, 29, 28, 27]])
def test_a_dominant_crown_spreads_over_four_devices(ns):
    # the first task of S_31 holds half of it at 2/31 of its estimate: whole, or in
    # level-0 pieces only, one device would run >= 1/4 of the crown alone
    item, makespan = queue(ns, 4)
    assert item < 0.11
    assert 1 / makespan >= 3.6
    item, makespan = queue(ns, 2)
    assert item < 0.16 and 1 / makespan >= 1.9


@pytest.mark.parametrize("ns", [[31, *range(29, 19, -1)], [31, 29, 28, 27]])
def test_pipeline_shards_of_a_dominant_crown_split_the_same_way(ns):
    # shards "i/n" (one job each, e.g. under SLURM) have no queue: the slowest is the time
    from cumbe.prepare import shard_of

    prep = prepare(crown_union(ns), "left", True)
    want = sum(2.0**n - 2 for n in ns)
    for n, target in ((2, 1.85), (4, 3.6)):
        shares = [crown_truth(shard_of(prep, f"{i}/{n}")[0], ns).sum() / want for i in range(n)]
        assert sum(shares) == pytest.approx(1.0, rel=1e-12)
        assert 1 / max(shares) >= target, (n, shares)


def test_spread_puts_the_piece_with_the_first_branches_first():
    prep = prepare(crown_union([9, 5]), "left", True)
    p = split(prep, 1e18, 1, 1, 3)  # the costliest task (S_9's first) in 3 x 3 pieces
    first, weights = spread(p)
    assert first.size == 9 and set(p.task_nk1[first]) == {3}
    truth = crown_truth(p, [9, 5])
    # c0 = 8: its first level-0 branch has 7 after it (7 = 1 mod 3), that one's first
    # level-1 branch 6 (= 0 mod 3): piece (1, 0) is the heaviest, and it leads
    assert (p.task_k[first[0]], p.task_k1[first[0]]) == (1, 0)
    assert truth[first[0]] == truth[first].max()


def test_the_split_keeps_nors_tasks_whole():
    prep = prepare(crown_union([6, 4]), "left", False)
    assert split(prep, 1.0, 4, 8, 4) is prep
