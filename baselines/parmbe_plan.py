"""ParMBE's plan (:mod:`baselines.parmbe`): the side to split on, the degree
ranks, and the tasks in dispatch order, made in the parent before any task runs.

* vertices most expensive first (estimate: wedges v - y - u with rank(u) >
  rank(v), computed by ``processes`` threads), in tasks of about
  total/(processes * TASKS_PER_PROCESS) estimated work;
* nested-parallelism equivalent: a subproblem whose first-level tail is longer
  than ``split_threshold``, or whose estimate alone exceeds one task's share,
  is planned as K tasks that each run the first-level branches i ≡ k (mod K),
  at the subproblem's place in the order.

:class:`_Prepared` (one oriented graph, its ranks and scratch arrays) is what
the parent plans on and what every worker and the serial run execute tasks on.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from baselines.parmbe_aot import kernels
from baselines.parmbe_spec import DEFAULT_SIDE
from mbebench import shard as sharding
from mbebench.csr import CSRGraph, from_edges
from mbebench.side import candidates_on_left

DEFAULT_SPLIT_THRESHOLD = 2048
DEFAULT_MAX_SPLIT = 64
# Tasks per process.  The order (most expensive first) already keeps the end
# of the schedule to small tasks; more tasks only add per-task costs, fewer
# let a misestimated heavy task end late (replaying measured per-vertex times
# of the paper's graphs, 16-64 came close to the ideal schedule at 16
# processes, 8 did not).
TASKS_PER_PROCESS = 32
MAX_CHUNK_VERTICES = 1024


def _ro(a: np.ndarray, dtype) -> np.ndarray:
    """Read-only, C-contiguous, base-class view (one numba signature for
    memory-mapped and in-memory graphs)."""
    b = np.ascontiguousarray(np.asarray(a), dtype=dtype)
    if b.flags.writeable:
        b = b.view()
        b.flags.writeable = False
    return b


def choose_side(graph: CSRGraph, side: str = DEFAULT_SIDE) -> bool:
    """True if we split on the CSR's left side (``side`` as in :mod:`mbebench.side`)."""
    return candidates_on_left(graph, side)


def oriented(graph: CSRGraph, u_is_left: bool):
    lo, li = _ro(graph.left_offsets, np.int64), _ro(graph.left_indices, np.int32)
    ro, ri = _ro(graph.right_offsets, np.int64), _ro(graph.right_indices, np.int32)
    return (lo, li, ro, ri) if u_is_left else (ro, ri, lo, li)


def degree_rank(uo: np.ndarray) -> np.ndarray:
    """rank[u] = position of u in the order by (degree, id)."""
    deg = np.diff(uo)
    order = np.argsort(deg, kind="stable")  # ties keep id order
    rank = np.empty(deg.size, dtype=np.int32)
    rank[order] = np.arange(deg.size, dtype=np.int32)
    return rank


class Plan:
    """Tasks in dispatch order.  Task i is the items bounds[i]:bounds[i+1] of
    (verts, ks, nks): run the subproblem of verts[j], first-level branches
    i ≡ ks[j] (mod nks[j]).  ``task_costs``: each task's estimated cost (the sum of
    its items' cost[v] / K), for the progress lines (:mod:`mbebench.progress`)."""

    def __init__(self, verts, ks, nks, bounds, n_split=0, n_presplit=0, shard_stats=None,
                 task_costs=None):
        self.verts, self.ks, self.nks, self.bounds = verts, ks, nks, bounds
        self.n_split = int(n_split)  # subproblems split for their tail length
        self.n_presplit = int(n_presplit)  # ... for their estimated cost alone
        self.n_tasks = len(bounds) - 1
        self.shard_stats = shard_stats or {}  # mbebench.shard.stats: the row's shard keys
        self.task_costs = (np.zeros(self.n_tasks, np.float32) if task_costs is None
                           else np.asarray(task_costs, np.float32))

    def task(self, i: int):
        a, b = self.bounds[i], self.bounds[i + 1]
        return self.verts[a:b], self.ks[a:b], self.nks[a:b]

    def to_bytes(self) -> bytes:
        head = np.array([self.n_tasks, len(self.verts)], np.int32)
        parts = (head, self.bounds, self.verts, self.ks, self.nks)
        return (b"".join(np.ascontiguousarray(x, np.int32).tobytes() for x in parts)
                + np.ascontiguousarray(self.task_costs, np.float32).tobytes())

    @classmethod
    def from_file(cls, path: str) -> Plan:
        a = np.fromfile(path, dtype=np.int32)
        nt, ni = int(a[0]), int(a[1])
        o = 2 + nt + 1
        e = o + 3 * ni
        return cls(a[o : o + ni], a[o + ni : o + 2 * ni], a[o + 2 * ni : e], a[2:o],
                   task_costs=a[e : e + nt].view(np.float32))


def _task_costs(tv, tn, vcost, bounds) -> np.ndarray:
    """Each task's estimated cost: its items' cost of the vertex over its pieces."""
    if len(bounds) < 2:
        return np.zeros(0, np.float32)
    items = vcost[tv] / np.maximum(tn, 1)
    return np.add.reduceat(items, np.asarray(bounds[:-1], np.int64)).astype(np.float32)


def plan_tasks(
    prep: _Prepared,
    processes: int,
    split_threshold: int = DEFAULT_SPLIT_THRESHOLD,
    max_split: int = DEFAULT_MAX_SPLIT,
    threads: ThreadPoolExecutor | None = None,
    tasks_per_process: int = TASKS_PER_PROCESS,
    shard: str = sharding.WHOLE,
) -> Plan:
    """Vertices with at least one neighbour, most expensive first, in tasks of
    about tau = total/(processes * tasks_per_process) estimated work.

    A subproblem becomes K > 1 tasks (first-level branches i ≡ k mod K, one
    task each, at its place in the order) if its first-level tail is longer
    than ``split_threshold`` (K = 2 * ceil(tail / split_threshold), 2 to
    ``max_split``), or if its estimate alone exceeds tau (K = estimate / tau, at
    most ``max_split``): as one task, a subproblem bigger than a process's
    share bounds the run's time from below however early it starts.

    ``shard`` "i/n" (n > 1): only shard i's items (:func:`_shard_plan`).
    """
    _, sn = sharding.parse(shard)

    est = prep.estimates(threads, processes)
    deg = np.diff(prep.uo)
    active = np.flatnonzero(deg > 0)
    cost = est[active].astype(np.float64) + deg[active]  # + setup cost
    order = np.argsort(-cost, kind="stable")  # ties keep id order
    verts = active[order].astype(np.int32)
    cost = cost[order]
    est = est[verts]
    # Sharded, the split by cost is relative to the shards, never to this
    # process's pool: every shard must derive the same items, whatever
    # ``processes`` it runs with.
    parts = processes if sn == 1 else sn
    tau = max(cost.sum() / (max(parts, 1) * max(tasks_per_process, 1)), 1.0)
    max_split = max(max_split, 1)

    kk = np.ones(verts.size, np.int32)
    # est bounds the tail length (each tail vertex closes at least one wedge),
    # so the exact length is counted only where it may exceed the threshold.
    n_split = 0
    if split_threshold >= 0:
        ci = np.flatnonzero(est > split_threshold)
        if ci.size:
            tail = prep.tail_sizes(verts[ci])  # -1: empty subproblem
            ci = ci[tail > split_threshold]
            want = 2 * np.ceil(tail[tail > split_threshold] / max(split_threshold, 1))
            kk[ci] = np.minimum(max_split, np.maximum(2, want))
            n_split = int(np.count_nonzero(kk > 1))
    # By cost: at most est pieces (there are no more first-level branches).
    by_cost = np.flatnonzero(cost > tau)
    k_cost = np.minimum(np.ceil(cost[by_cost] / tau), np.maximum(est[by_cost], 1))
    k_cost = np.minimum(k_cost, max_split).astype(np.int32)
    n_presplit = int(np.count_nonzero((k_cost > 1) & (kk[by_cost] == 1)))
    kk[by_cost] = np.maximum(kk[by_cost], k_cost)
    if sn > 1:
        return _shard_plan(verts, cost, est, kk, shard, processes, max_split, tasks_per_process,
                           n_split, n_presplit)
    tv, tk, tn, bounds = kernels().build_tasks(verts, cost, kk, tau, MAX_CHUNK_VERTICES)
    items = np.repeat(cost / kk, kk)
    vcost = np.zeros(deg.size, np.float64)
    vcost[verts] = cost
    return Plan(tv, tk, tn, bounds, n_split, n_presplit,
                sharding.stats(shard, items, np.arange(items.size)),
                _task_costs(tv, tn, vcost, bounds))


def _shard_plan(verts, cost, est, kk, shard, processes, max_split, tasks_per_process,
                n_split, n_presplit) -> Plan:
    """Shard ``shard``'s part of the whole run's items (vertex v, piece k of K),
    each item costing cost[v] / K: the pieces of a split subproblem (its
    first-level branches i = k mod K) are units of their own, so one heavy
    subproblem spreads over several shards.

    Inside the shard, a piece bigger than one process's share is split again
    (branches i = k mod K are the branches i = k + jK mod mK, j < m: still a
    partition, and only k = 0 reports the subproblem's top biclique), then the
    items are grouped into tasks as in the unsharded plan."""
    si, sn = sharding.parse(shard)
    kk = kk.astype(np.int64)
    tv = np.repeat(verts, kk)
    tn = np.repeat(kk, kk)
    tk = np.arange(tv.size) - np.repeat(np.cumsum(kk) - kk, kk)
    ic = np.repeat(cost / kk, kk)
    iest = np.repeat(est, kk)
    picked = sharding.select(ic, si, sn)
    stats = sharding.stats(shard, ic, picked)
    tv, tk, tn, ic, iest = tv[picked], tk[picked], tn[picked], ic[picked], iest[picked]

    tau = max(ic.sum() / (max(processes, 1) * max(tasks_per_process, 1)), 1.0)
    # at most max_split pieces of a subproblem, and no more than its est
    # first-level branches (each closes at least one wedge)
    m = np.minimum(np.ceil(ic / tau), np.maximum(max_split // tn, 1))
    m = np.maximum(np.minimum(m, np.ceil(np.maximum(iest, 1) / tn)), 1).astype(np.int64)
    j = np.arange(int(m.sum())) - np.repeat(np.cumsum(m) - m, m)
    tv, tk, tn, ic = (np.repeat(tv, m), np.repeat(tk, m) + j * np.repeat(tn, m),
                      np.repeat(tn * m, m), np.repeat(ic / m, m))
    order = np.argsort(-ic, kind="stable")  # most expensive first, as unsharded
    tv, tk, tn, ic = tv[order], tk[order], tn[order], ic[order]
    bounds = kernels().item_bounds(tn.astype(np.int32), ic, tau, MAX_CHUNK_VERTICES)
    task_costs = (np.add.reduceat(ic, np.asarray(bounds[:-1], np.int64))
                  if len(bounds) > 1 else np.zeros(0))
    return Plan(tv.astype(np.int32), tk.astype(np.int32), tn.astype(np.int32), bounds,
                n_split, n_presplit, stats, task_costs)


def new_scratch(uo, vo):
    """The per-graph scratch arrays of the search (``run_tasks``: ``cnt`` all zeros,
    ``slot`` all -1, ``touched``, ``buf``; :mod:`baselines._parmbe_kernel` says why they are
    the caller's) and of the planner's ``tail_sizes``.  Plain numpy, here rather than
    beside the kernels, so that a run with the ahead-of-time kernels never imports numba."""
    n_u = uo.shape[0] - 1
    maxdv = int(np.diff(vo).max()) if vo.shape[0] > 1 else 1
    return (
        np.zeros(n_u, np.int32),
        np.full(n_u, -1, np.int32),
        np.empty(n_u, np.int32),
        np.empty(max(maxdv, 1), np.int32),
    )


class _Prepared:
    """One oriented graph with its ranks and scratch arrays, as used by the
    kernel."""

    def __init__(self, graph: CSRGraph, u_is_left: bool):
        self.uo, self.ui, self.vo, self.vi = oriented(graph, u_is_left)
        self.u_is_left = bool(u_is_left)
        self.rank = degree_rank(self.uo)
        self._scratch = None

    def scratch(self):
        if self._scratch is None:
            self._scratch = new_scratch(self.uo, self.vo)
        return self._scratch

    def estimates(self, threads: ThreadPoolExecutor | None = None, nthreads: int = 1) -> np.ndarray:
        tail_estimates = kernels().tail_estimates
        n = len(self.uo) - 1
        est = np.zeros(n, np.int64)
        args = (self.uo, self.ui, self.vo, self.vi, self.rank)
        if threads is None or nthreads <= 1 or self.uo[-1] < 16384:
            tail_estimates(*args, 0, n, est)
            return est
        # The work of a vertex grows with its edges: blocks of equal edge
        # counts, a few per thread (the kernel releases the GIL).
        nb = 4 * nthreads
        cuts = np.searchsorted(self.uo, np.linspace(0, self.uo[-1], nb + 1), side="left")
        cuts[0], cuts[-1] = 0, n
        cuts = np.maximum.accumulate(np.minimum(cuts, n))
        jobs = [
            threads.submit(tail_estimates, *args, int(lo), int(hi), est)
            for lo, hi in zip(cuts[:-1], cuts[1:])
            if hi > lo
        ]
        for j in jobs:
            j.result()
        return est

    def tail_sizes(self, verts: np.ndarray) -> np.ndarray:
        cnt, _, touched, _ = self.scratch()
        verts = np.ascontiguousarray(verts, np.int32)
        return kernels().tail_sizes(self.uo, self.ui, self.vo, self.vi, self.rank, verts, cnt,
                                    touched)

    def run(self, verts, ks, nks):
        cnt, slot, touched, buf = self.scratch()
        c, fp = kernels().run_tasks(
            self.uo, self.ui, self.vo, self.vi, self.rank, verts, ks, nks,
            self.u_is_left, cnt, slot, touched, buf,
        )  # fmt: skip
        return int(c), int(fp)


def _warm_graph() -> CSRGraph:
    rng = np.random.default_rng(7)
    m = rng.random((12, 40)) < 0.35
    m[0, :] = True  # a hub: exercises splits and the large sort
    left, right = np.nonzero(m)
    return from_edges(left, right, 12, 40)


def warm_up(shard: bool = True) -> float:
    """Compile (or load from cache) every kernel specialisation, the shard planner's only
    with ``shard`` (workers never plan); seconds taken."""
    t0 = time.perf_counter()
    g = _warm_graph()
    for u_is_left in (True, False):
        p = _Prepared(g, u_is_left)
        plan = plan_tasks(p, 2, 2)
        for i in range(plan.n_tasks):
            p.run(*plan.task(i))
    if shard:
        plan_tasks(p, 2, 2, shard="0/2")  # the shard planner's kernels
    return time.perf_counter() - t0
