"""ParMBE (Das et al., HiPC 2019) on Python multiprocessing + Numba.

The problem is split per vertex v of one side ``U`` (the smaller side by
default): the subproblem of v enumerates the maximal bicliques whose U-side's
lowest-rank vertex is v (rank = (degree, id)), with MineLMBC inside; see
:mod:`baselines._parmbe_kernel` for the algorithm and why every maximal
biclique is found exactly once.

A run is two jobs, one module each:

* the parent plans every task before the first one runs
  (:mod:`baselines.parmbe_plan`: most expensive first, heavy subproblems split);
* a pool of warmed worker processes takes the tasks in plan order and returns
  counts and fingerprints (:mod:`baselines.parmbe_pool`).

This module runs the two (:func:`run`, or :func:`run_serial` in this process)
and keeps their public names importable from here.

Ctrl-C, SIGTERM to the parent or an exception terminates the pool (workers
ignore SIGINT and die on the pool's SIGTERM; as a last resort each worker asks
the kernel for SIGKILL when its parent dies), so no orphan keeps computing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
import time

from baselines.parmbe_aot import kernels
from baselines.parmbe_plan import (  # noqa: F401 (public names of the engine)
    DEFAULT_MAX_SPLIT,
    DEFAULT_SPLIT_THRESHOLD,
    MAX_CHUNK_VERTICES,
    TASKS_PER_PROCESS,
    Plan,
    _Prepared,
    _warm_graph,
    choose_side,
    degree_rank,
    oriented,
    plan_tasks,
    warm_up,
)
from baselines.parmbe_pool import (  # noqa: F401
    START_METHOD,
    TERMINATE_GRACE_S,
    ParMBEPool,
    start_server,
)
from baselines.parmbe_spec import DEFAULT_SIDE
from mbebench.csr import CSRGraph, write_csr
from mbebench.engine import EngineResult
from mbebench.fingerprint_sum import add as add_fingerprint
from mbebench import progress
from mbebench.shard import WHOLE as SHARD_WHOLE
from mbebench.shard import parse as parse_shard


@contextlib.contextmanager
def _sigterm_raises():
    """While active (main thread only), SIGTERM raises SystemExit(143) in the
    main thread so that ``finally`` blocks terminate the pool."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


_PARENT_WARM: dict[bool, float] = {}


def _parent_warm(sharded: bool) -> float:
    """Load the planning kernels in this process (once), the shard planner's only for a
    sharded run (an unsharded one never calls them); seconds taken.  The kernels are the
    ahead-of-time compiled ones where they are built (:mod:`baselines.parmbe_aot`: no numba
    import), built here first when this checkout's key has none (a process of its own,
    seconds, as a first JIT compile), else numba's from its cache."""
    if False not in _PARENT_WARM:
        t0 = time.perf_counter()
        plan_tasks(_Prepared(_warm_graph(), True), 2, 2)
        _PARENT_WARM[False] = time.perf_counter() - t0
    if sharded and True not in _PARENT_WARM:
        t0 = time.perf_counter()
        plan_tasks(_Prepared(_warm_graph(), True), 2, 2, shard="0/2")
        _PARENT_WARM[True] = time.perf_counter() - t0
    return sum(_PARENT_WARM.values())


def run(
    graph: CSRGraph,
    processes: int | None = None,
    split_threshold: int = DEFAULT_SPLIT_THRESHOLD,
    max_split: int = DEFAULT_MAX_SPLIT,
    side: str = DEFAULT_SIDE,
    pool: ParMBEPool | None = None,
    tasks_per_process: int = TASKS_PER_PROCESS,
    shard: str = SHARD_WHOLE,
) -> EngineResult:
    """Count the maximal bicliques of ``graph`` with a pool of processes.

    ``processes`` and ``side`` are the config parameters (``baselines.parmbe_spec``);
    ``processes=None`` takes the pool's size, else every core.  ``split_threshold``,
    ``max_split`` and ``tasks_per_process`` tune the plan (:func:`plan_tasks`);
    ``pool`` reuses a running :class:`ParMBEPool` (tests); ``shard`` "i/n": only shard i of
    n of the plan's items (:mod:`mbebench.shard`; every shard of a run must be given the same
    ``side``, ``split_threshold``, ``max_split`` and ``tasks_per_process``)."""
    parse_shard(shard)  # a bad shard fails before the pool starts
    nproc = int(pool.processes if pool is not None else (processes or os.cpu_count() or 1))
    u_is_left = choose_side(graph, side)
    tmpdir = None
    own = pool is None
    try:
        with _sigterm_raises():
            path = graph.path
            if path is None:
                tmpdir = tempfile.mkdtemp(prefix="parmbe-")
                path = os.path.join(tmpdir, "graph.csr")
                write_csr(graph, path)
            # the runner's line thread stops while the pool starts, so that the workers can
            # be forks of this process, which has the kernels loaded (parmbe_pool.fork_safe)
            with progress.paused() if own else contextlib.nullcontext():
                if own:
                    start_server()  # a forkserver (if forks are unsound) warms up meanwhile
                parent_compile = _parent_warm(shard != SHARD_WHOLE)
                if own:
                    with progress.phase("starting workers"):
                        pool = ParMBEPool(nproc)
            try:
                plan, plan_s, count, fp, ex, algo = _plan_and_execute(
                    pool, graph, path, u_is_left, nproc, split_threshold, max_split,
                    tasks_per_process, shard)
            except BaseException:
                if own:
                    pool.terminate()
                raise
            if own:
                pool.close()
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)
    return EngineResult(
        count=count,
        fingerprint=fp,
        algo_seconds=algo,
        compile_seconds=max(pool.compile_s, parent_compile),
        stats=_pool_stats(pool, plan, ex, nproc, plan_s, u_is_left, split_threshold,
                          tasks_per_process),
    )


def _plan_and_execute(pool: ParMBEPool, graph: CSRGraph, path: str, u_is_left: bool,
                      nproc: int, split_threshold: int, max_split: int,
                      tasks_per_process: int, shard: str):
    """(plan, plan_s, count, fingerprint, execution record, algo_s): the clock starts
    before planning, since the plan is part of the algorithm's time."""
    t0 = time.perf_counter()
    with progress.phase("planning"):
        prep = _Prepared(graph, u_is_left)
        plan = plan_tasks(
            prep, nproc, split_threshold, max_split, pool.threads,
            tasks_per_process, shard,
        )
    plan_s = time.perf_counter() - t0
    with progress.work("parmbe", plan.n_tasks, float(plan.task_costs.sum()),
                       shard=shard, costs=plan.task_costs) as work_progress:
        count, fp, ex = pool.execute(path, u_is_left, plan, work_progress)
    algo = time.perf_counter() - t0
    return plan, plan_s, count, fp, ex, algo


def _pool_stats(pool: ParMBEPool, plan: Plan, ex: dict, nproc: int, plan_s: float,
                u_is_left: bool, split_threshold: int, tasks_per_process: int) -> dict:
    pids = list(ex["busy"])
    return {
        "processes": nproc,
        "worker_busy_s": [round(ex["busy"][p], 6) for p in pids],
        "worker_tasks": [ex["tasks"][p] for p in pids],
        # CPU seconds inside tasks: busy minus this is time a worker was
        # preempted in the middle of a task.
        "worker_cpu_s": [round(ex["cpu"][p], 6) for p in pids],
        "tasks": plan.n_tasks,
        "split_tasks": plan.n_split,
        "presplit_tasks": plan.n_presplit,
        "pool_start_s": round(pool.start_s, 4),
        "start_method": pool.start_method,
        # which kernels ran (baselines.parmbe_aot): "aot" or "jit", in the parent and every
        # worker, or both names joined when they differ
        "kernels": "+".join(sorted({kernels().kind, *pool.kernels})),
        "max_task_s": round(pool.max_task_s, 6),
        # where algo_seconds goes besides the work: planning in the
        # parent, dispatch until the last worker started its first task,
        # and the spread of the workers' finishing times
        "plan_s": round(plan_s, 6),
        "ramp_s": round(ex["ramp_s"], 6),
        "end_spread_s": round(ex["end_spread_s"], 6),
        "side": "left" if u_is_left else "right",
        "split_threshold": split_threshold,
        "tasks_per_process": tasks_per_process,
        **plan.shard_stats,
    }


def run_serial(
    graph: CSRGraph,
    processes: int = 2,
    split_threshold: int = DEFAULT_SPLIT_THRESHOLD,
    max_split: int = DEFAULT_MAX_SPLIT,
    side: str = DEFAULT_SIDE,
    tasks_per_process: int = TASKS_PER_PROCESS,
    shard: str = SHARD_WHOLE,
) -> EngineResult:
    """The same plan as :func:`run` (tasks planned for ``processes``),
    executed in this process in task order."""
    parse_shard(shard)
    u_is_left = choose_side(graph, side)
    tc = time.perf_counter()
    warm_up()
    compile_s = time.perf_counter() - tc
    t0 = time.perf_counter()
    prep = _Prepared(graph, u_is_left)
    plan = plan_tasks(prep, processes, split_threshold, max_split, None, tasks_per_process,
                      shard)
    count = fp = 0
    for i in range(plan.n_tasks):
        c, f = prep.run(*plan.task(i))
        count += c
        fp = add_fingerprint(fp, f)
    algo = time.perf_counter() - t0
    return EngineResult(
        count=count,
        fingerprint=fp,
        algo_seconds=algo,
        compile_seconds=compile_s,
        stats={
            "processes": 1,
            "tasks": plan.n_tasks,
            "split_tasks": plan.n_split,
            "presplit_tasks": plan.n_presplit,
            "side": "left" if u_is_left else "right",
            "kernels": kernels().kind,
            **plan.shard_stats,
        },
    )
