"""Serial iMBEA (Zhang et al., BMC Bioinformatics 2014) in Numba.

``run(graph, side=...)`` counts the maximal bicliques of ``graph`` (both
sides non-empty) and computes their fingerprint.  ``side`` names the CSR side
the candidates (P, Q, R) are taken from; the other side holds L.  The search
itself is in :mod:`baselines._imbea_kernel`.

``algo_seconds`` covers preprocessing (first-level order, twin filter, element
hashes) and the enumeration; the JIT compile (or cache load) is done first on a
tiny graph and reported as ``compile_seconds``.
"""

from __future__ import annotations

import time

import numpy as np

from baselines import _imbea_kernel as imbea_kernel
from baselines._imbea_parts import elem_weights
from baselines.imbea_spec import DEFAULT_SIDE
from mbebench import progress
from mbebench import shard as sharding
from mbebench.csr import CSRGraph, from_edges
from mbebench.engine import EngineResult
from mbebench.fingerprint_sum import add as add_fingerprint
from mbebench.order import candidate_order
from mbebench.side import candidates_on_left



def _ro(a, dtype) -> np.ndarray:
    """A read-only plain-ndarray view (one Numba signature for in-memory graphs
    and memory-mapped CSR files alike, so the warm-up compile covers both)."""
    a = np.ascontiguousarray(a, dtype=dtype).view(np.ndarray)
    a.flags.writeable = False
    return a


def _arrays(graph: CSRGraph, side: str):
    lo, li = _ro(graph.left_offsets, np.int64), _ro(graph.left_indices, np.int32)
    ro, ri = _ro(graph.right_offsets, np.int64), _ro(graph.right_indices, np.int32)
    if side == "left":
        return lo, li, ro, ri, True
    return ro, ri, lo, li, False


def prepare(graph: CSRGraph, side: str):
    """Everything the search needs, as a tuple of arrays (see ``enumerate_tasks``)."""
    c_off, c_idx, l_off, l_idx, cand_is_left = _arrays(graph, side)
    w_left, w_right = elem_weights(graph.n_left, graph.n_right)
    wc, wl = (w_left, w_right) if cand_is_left else (w_right, w_left)
    order, rank, start = candidate_order(c_off, c_idx)
    tasks = order[start[order]].astype(np.int32)
    return (c_off, c_idx, l_off, l_idx, wc, wl, cand_is_left, rank), tasks


def task_costs(prep, tasks: np.ndarray) -> np.ndarray:
    """Estimated cost of each task: its wedges (2-paths v - u - w, which building
    N2(v) walks) plus its degree."""
    c_off, c_idx, l_off = prep[0], prep[1], prep[2]
    per_edge = np.diff(l_off)[c_idx]  # degree of each candidate's neighbour
    acc = np.concatenate(([0], np.cumsum(per_edge, dtype=np.int64)))
    t = np.asarray(tasks, dtype=np.int64)
    return (acc[c_off[t + 1]] - acc[c_off[t]]) + (c_off[t + 1] - c_off[t])


def pieces(costs: np.ndarray, n: int) -> np.ndarray:
    """How many pieces each task is split into for ``n`` shards: a task costing more
    than one shard's share (total / n) goes into ceil(cost / share) pieces, at most n
    (:func:`baselines._imbea_kernel.build`'s ``ks``/``nks``: its level-0 branches dealt
    round-robin), so that one heavy task spreads over several shards; 1 otherwise."""
    c = np.asarray(costs, dtype=np.float64)
    return sharding.piece_counts(c, c.sum() / max(n, 1), n)


def shard_tasks(prep, tasks: np.ndarray, shard: str, with_costs: bool = False):
    """The work of ``shard`` ("i/n", :mod:`mbebench.shard`): items (tasks, ks, nks), task
    ``tasks[j]``'s piece ``ks[j]`` of ``nks[j]`` (:func:`pieces`; each piece costs its
    task's cost / nks), and its row stats (``shard_tasks``, ``total_tasks``: items); with
    ``with_costs``, the picked items' estimated costs as a third item."""
    i, n = sharding.parse(shard)
    tc = task_costs(prep, tasks)
    nk = pieces(tc, n)
    src, ik, inn = sharding.split_pieces(np.zeros(tc.size), np.ones(tc.size), nk)
    iv = np.asarray(tasks, dtype=np.int32)[src]
    costs = tc[src] / inn
    picked = sharding.select(costs, i, n)
    out = (iv[picked], ik[picked], inn[picked]), sharding.stats(shard, costs, picked)
    return (*out, costs[picked]) if with_costs else out


def _items(tasks):
    """(tasks, ks, nks) of a task array (each task whole) or of an items triple."""
    if isinstance(tasks, tuple):
        return tuple(np.ascontiguousarray(x, dtype=np.int32) for x in tasks)
    t = np.ascontiguousarray(tasks, dtype=np.int32)
    return t, np.zeros(t.size, np.int32), np.ones(t.size, np.int32)


def enumerate_tasks(prep, tasks, collect: bool = False):
    """Run the first-level subtrees of ``tasks`` (candidate ids, any subset of the
    started ones; each is independent), or of the items (tasks, ks, nks) of
    :func:`shard_tasks` (pieces of subtrees).  Returns the kernel's tuple
    (count, fingerprint, nodes, per-item counts, ro, rv, lo, lv)."""
    c_off, c_idx, l_off, l_idx, wc, wl, cand_is_left, rank = prep
    t, ks, nks = _items(tasks)
    return imbea_kernel.run_tasks(
        c_off,
        c_idx,
        l_off,
        l_idx,
        wc,
        wl,
        cand_is_left,
        rank,
        t,
        ks,
        nks,
        collect,
        None,  # no work counters (the work analysis passes them)
    )


# Progress (mbebench.progress): the search runs over chunks of tasks, and publishes its
# counters between two (the timer thread prints them while a chunk runs: the kernel releases
# the GIL).  A chunk is sized by the time per unit of estimated cost measured so far, to
# take about this share of the progress interval, so that the counters move between lines;
# the first is a small share of the cost (the rate is not known yet) and each may be at
# most GROWTH times the one before (the estimate is rough).  Every chunk costs one kernel
# call (its workspace is set up again: O(vertices)).
CHUNK_SHARE = 0.2
FIRST_CHUNK_COST = 1 / 1024
GROWTH = 4.0


def enumerate_with_progress(prep, tasks, costs: np.ndarray,
                            run: progress.Run) -> tuple[int, int, int]:
    """(count, fingerprint, nodes) of ``tasks`` (an array or items) as
    :func:`enumerate_tasks` gives them, publishing the counters to ``run`` between
    chunks (tasks done, their cost, the cost up to the end of the running chunk)."""
    tasks = _items(tasks)
    n_items = tasks[0].size
    if not run.enabled or n_items == 0:
        count, fp, nodes, *_ = enumerate_tasks(prep, tasks)
        return int(count), int(fp), int(nodes)
    acc = np.cumsum(np.asarray(costs, dtype=np.float64))
    total = float(acc[-1])
    target_s = max(CHUNK_SHARE * run.every_s, 0.01)
    chunk_cost = max(total * FIRST_CHUNK_COST, 1.0)
    count = fp = nodes = 0
    done, t0 = 0, time.perf_counter()
    while done < n_items:
        base = acc[done - 1] if done else 0.0
        end = int(np.searchsorted(acc, base + chunk_cost, side="right"))
        end = min(max(end, done + 1), n_items)
        run.update(done, base, count, cost_started=float(acc[end - 1]))
        c, f, n, *_ = enumerate_tasks(prep, tuple(x[done:end] for x in tasks))
        count += int(c)
        fp = add_fingerprint(fp, f)
        nodes += int(n)
        done = end
        run.update(done, float(acc[done - 1]), count)
        elapsed = time.perf_counter() - t0
        rate = float(acc[done - 1]) / elapsed if elapsed > 0 else 0.0  # cost per second
        want = rate * target_s if rate > 0 else chunk_cost * GROWTH
        chunk_cost = max(min(want, chunk_cost * GROWTH), 1.0)
    return count, fp, nodes


def _resolve(graph: CSRGraph, side: str) -> str:
    """``left`` or ``right``: the CSR side ``side`` (mbebench.side) puts the candidates on."""
    return "left" if candidates_on_left(graph, side) else "right"


def warm_up() -> float:
    """Compile (or load from cache) every kernel on a tiny graph; returns seconds."""
    t0 = time.perf_counter()
    g = from_edges([0, 0, 1, 1, 2], [0, 1, 1, 2, 2], 3, 4)
    for s in ("left", "right"):
        for collect in (False, True):
            prep, tasks = prepare(g, s)
            enumerate_tasks(prep, tasks, collect)
    return time.perf_counter() - t0


def bicliques(
    graph: CSRGraph, side: str = DEFAULT_SIDE, shard: str = sharding.WHOLE
) -> set[tuple[frozenset[int], frozenset[int]]]:
    """All maximal bicliques (of one shard) as (left ids, right ids) frozensets (for tests)."""
    side = _resolve(graph, side)
    prep, tasks = prepare(graph, side)
    tasks, _ = shard_tasks(prep, tasks, shard)
    count, _fp, _n, _tc, ro, rv, lo, lv = enumerate_tasks(prep, tasks, collect=True)
    out = set()
    for i in range(count):
        r = frozenset(int(v) for v in rv[ro[i] : ro[i + 1]])
        lset = frozenset(int(v) for v in lv[lo[i] : lo[i + 1]])
        out.add((r, lset) if side == "left" else (lset, r))
    if len(out) != count:
        raise AssertionError(f"iMBEA reported {count} bicliques but only {len(out)} distinct")
    return out


def run(graph: CSRGraph, side: str = DEFAULT_SIDE, shard: str = sharding.WHOLE) -> EngineResult:
    """Count and fingerprint the maximal bicliques of ``graph``, candidates from ``side``
    (``baselines.imbea_spec``: auto, left or right); ``shard`` "i/n": only the first-level
    tasks (and pieces of heavy ones, :func:`pieces`) of shard i of n (:mod:`mbebench.shard`).
    JIT compile (or cache load) first, timed apart as ``compile_seconds``."""
    side = _resolve(graph, side)
    sharding.parse(shard)  # a bad shard fails before the compile
    compile_s = warm_up()
    t0 = time.perf_counter()
    prep, tasks = prepare(graph, side)
    items, shard_stats, costs = shard_tasks(prep, tasks, shard, with_costs=True)
    with progress.work("imbea", items[0].size, float(costs.sum()), shard=shard,
                       costs=costs) as run:
        count, fp, nodes = enumerate_with_progress(prep, items, costs, run)
    algo_s = time.perf_counter() - t0
    return EngineResult(
        count=int(count),
        fingerprint=int(fp),
        algo_seconds=algo_s,
        compile_seconds=compile_s,
        stats={
            "side": side,
            "nodes": int(nodes),
            "worker_busy_s": [algo_s],
            "worker_tasks": [int(items[0].size)],
            **shard_stats,
        },
    )
