"""ParMBE (Das et al., HiPC 2019) on Python multiprocessing + Numba.

The problem is split per vertex v of one side ``U`` (the smaller side by
default): the subproblem of v enumerates the maximal bicliques whose U-side's
lowest-rank vertex is v (rank = (degree, id)), with MineLMBC inside; see
:mod:`baselines._parmbe_kernel` for the algorithm and why every maximal
biclique is found exactly once.

Parallel layout:

* a pool of worker processes ("forkserver" start method, never "fork": numba
  and fork do not mix), one per core by default; each worker warms the JIT once
  on a tiny graph when it starts (reported as ``compile_seconds``) and maps the
  binary CSR file read-only (``read_csr(path, verify=False)``) on its first
  task for that file; no graph is pickled per task;
* tasks are chunks of vertices, most expensive first (estimate: wedges
  v - y - u with rank(u) > rank(v)), scheduled dynamically: the parent keeps a
  few tasks in flight per worker and hands out the next one when a result
  comes back;
* nested-parallelism equivalent: a subproblem whose first-level tail is longer
  than ``split_threshold`` is sent back by the worker and re-scheduled, at the
  front of the queue, as K tasks that each run the first-level branches
  i ≡ k (mod K);
* each task returns its count and fingerprint (uint64 wrapping sum); the
  parent sums them mod 2**64.

Ctrl-C, SIGTERM to the parent or an exception terminates the pool (workers
ignore SIGINT and die on the pool's SIGTERM; as a last resort each worker asks
the kernel for SIGKILL when its parent dies), so no orphan keeps computing.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import multiprocessing as mp
import os
import queue
import shutil
import signal
import tempfile
import threading
import time
import traceback
from collections import deque
from typing import Any

import numpy as np

from mbebench.csr import CSRGraph, from_edges, read_csr, write_csr
from mbebench.engine import EngineResult

DEFAULT_SPLIT_THRESHOLD = 2048
DEFAULT_MAX_SPLIT = 64
CHUNKS_PER_PROCESS = 64
MAX_CHUNK_VERTICES = 1024
START_METHOD = "forkserver"
READY_TIMEOUT_S = 600.0
MASK64 = (1 << 64) - 1


# --------------------------------------------------------------------------
# graph preparation and task decomposition (shared by parent, workers, serial)
# --------------------------------------------------------------------------


def _ro(a: np.ndarray, dtype) -> np.ndarray:
    """Read-only, C-contiguous, base-class view (one numba signature for
    memory-mapped and in-memory graphs)."""
    b = np.ascontiguousarray(np.asarray(a), dtype=dtype)
    if b.flags.writeable:
        b = b.view()
        b.flags.writeable = False
    return b


def choose_side(graph: CSRGraph, side: str = "smaller") -> bool:
    """True if we split on the CSR's left side."""
    if side == "left":
        return True
    if side == "right":
        return False
    if side == "larger":
        return graph.n_left >= graph.n_right
    if side == "smaller":
        return graph.n_left <= graph.n_right
    raise ValueError(f"side must be smaller, larger, left or right, not {side!r}")


def oriented(graph: CSRGraph, u_is_left: bool):
    lo, li = _ro(graph.left_offsets, np.int64), _ro(graph.left_indices, np.int32)
    ro, ri = _ro(graph.right_offsets, np.int64), _ro(graph.right_indices, np.int32)
    return (lo, li, ro, ri) if u_is_left else (ro, ri, lo, li)


def degree_rank(uo: np.ndarray) -> np.ndarray:
    """rank[u] = position of u in the order by (degree, id)."""
    deg = np.diff(uo)
    order = np.lexsort((np.arange(deg.size), deg))
    rank = np.empty(deg.size, dtype=np.int32)
    rank[order] = np.arange(deg.size, dtype=np.int32)
    return rank


def plan_chunks(est: np.ndarray, uo: np.ndarray, processes: int) -> list[np.ndarray]:
    """Vertices with at least one neighbour, most expensive first, in chunks of
    about total/(processes * CHUNKS_PER_PROCESS) estimated work."""
    deg = np.diff(uo)
    active = np.flatnonzero(deg > 0)
    if active.size == 0:
        return []
    cost = est[active].astype(np.float64) + deg[active]  # + setup cost
    order = np.lexsort((active, -cost))
    verts = active[order].astype(np.int32)
    cost = cost[order]
    target = max(cost.sum() / (max(processes, 1) * CHUNKS_PER_PROCESS), 1.0)
    chunks = []
    start = 0
    acc = 0.0
    for i in range(verts.size):
        acc += cost[i]
        if acc >= target or i + 1 - start >= MAX_CHUNK_VERTICES:
            chunks.append(verts[start : i + 1])
            start, acc = i + 1, 0.0
    if start < verts.size:
        chunks.append(verts[start:])
    return chunks


def split_count(tail: int, split_threshold: int, max_split: int) -> int:
    return int(min(max_split, max(2, 2 * math.ceil(tail / max(split_threshold, 1)))))


def _chunk_task(verts: np.ndarray):
    return (verts, None, None)


def _split_tasks(v: int, kk: int):
    return [
        (np.array([v], np.int32), np.array([k], np.int32), np.array([kk], np.int32))
        for k in range(kk)
    ]


class _Prepared:
    """One oriented graph with its ranks, as used by the kernel."""

    def __init__(self, graph: CSRGraph, u_is_left: bool):
        self.uo, self.ui, self.vo, self.vi = oriented(graph, u_is_left)
        self.u_is_left = bool(u_is_left)
        self.rank = degree_rank(self.uo)

    def estimates(self) -> np.ndarray:
        from baselines import _parmbe_kernel as K

        return K.tail_estimates(self.uo, self.ui, self.vo, self.vi, self.rank)

    def run(self, verts, ks, nks, split_threshold: int):
        from baselines import _parmbe_kernel as K

        n = len(verts)
        if ks is None:
            ks = np.zeros(n, np.int32)
            nks = np.ones(n, np.int32)
        splits = np.empty((n, 2), np.int64)
        c, fp, ns = K.run_tasks(
            self.uo, self.ui, self.vo, self.vi, self.rank,
            np.asarray(verts, np.int32), np.asarray(ks, np.int32), np.asarray(nks, np.int32),
            int(split_threshold), self.u_is_left, splits,
        )  # fmt: skip
        return int(c), int(fp), [(int(a), int(b)) for a, b in splits[:ns]]


# --------------------------------------------------------------------------
# worker side
# --------------------------------------------------------------------------

_W_GRAPHS: dict[tuple, _Prepared] = {}


def _warm_graph() -> CSRGraph:
    rng = np.random.default_rng(7)
    m = rng.random((12, 40)) < 0.35
    m[0, :] = True  # a hub: exercises splits and the large sort
    left, right = np.nonzero(m)
    return from_edges(left, right, 12, 40)


def warm_up() -> float:
    """Compile (or load from cache) every kernel specialisation; seconds taken."""
    t0 = time.perf_counter()
    g = _warm_graph()
    for u_is_left in (True, False):
        p = _Prepared(g, u_is_left)
        p.estimates()
        p.run(np.arange(len(p.uo) - 1, dtype=np.int32), None, None, 2)
        p.run([0, 0], [0, 1], [2, 2], 2)
    return time.perf_counter() - t0


def _set_pdeathsig() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _init_worker(ready_q) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _set_pdeathsig()
    try:
        compile_s = warm_up()
    except BaseException:
        ready_q.put(("error", os.getpid(), traceback.format_exc()))
        raise
    ready_q.put(("ready", os.getpid(), compile_s))


def _graph_key(path: str, u_is_left: bool) -> tuple:
    st = os.stat(path)
    return (os.path.realpath(path), st.st_ino, st.st_size, st.st_mtime_ns, bool(u_is_left))


def _worker_graph(key: tuple) -> _Prepared:
    p = _W_GRAPHS.get(key)
    if p is None:
        _W_GRAPHS.clear()  # one graph at a time
        p = _W_GRAPHS[key] = _Prepared(read_csr(key[0], verify=False), key[4])
    return p


def _task(key, verts, ks, nks, split_threshold):
    t0 = time.perf_counter()
    p = _worker_graph(key)
    c, fp, splits = p.run(verts, ks, nks, split_threshold)
    return os.getpid(), c, fp, time.perf_counter() - t0, splits


# --------------------------------------------------------------------------
# parent side
# --------------------------------------------------------------------------


class ParMBEPool:
    """A warmed pool of ParMBE workers; reusable across graphs (each task
    names its CSR file).  Use as a context manager or call :meth:`close`."""

    def __init__(self, processes: int | None = None, start_method: str = START_METHOD):
        self.processes = int(processes or os.cpu_count() or 1)
        if self.processes < 1:
            raise ValueError("processes must be >= 1")
        ctx = mp.get_context(start_method)
        t0 = time.perf_counter()
        self._ready = ctx.Queue()
        self._pool = ctx.Pool(self.processes, initializer=_init_worker, initargs=(self._ready,))
        self._broken = False
        self.max_task_s = 0.0
        self.pids: list[int] = []
        self.compile_times: list[float] = []
        try:
            deadline = time.monotonic() + READY_TIMEOUT_S
            seen = set()
            while len(self.pids) < self.processes:
                try:
                    msg = self._ready.get(timeout=0.2)
                except queue.Empty:
                    # Pool silently replaces workers that die while starting
                    # (e.g. a __main__ without the ``if __name__ ==
                    # "__main__"`` guard): more distinct workers than asked
                    # for means one died.
                    seen.update(w.pid for w in list(self._pool._pool))
                    if len(seen) > self.processes:
                        raise RuntimeError(
                            "ParMBE workers die while starting (is the main module"
                            " guarded by `if __name__ == '__main__'`?)"
                        ) from None
                    if time.monotonic() > deadline:
                        raise RuntimeError("ParMBE workers did not start in time") from None
                    continue
                if msg[0] == "error":
                    raise RuntimeError(f"ParMBE worker failed to start:\n{msg[2]}")
                self.pids.append(msg[1])
                self.compile_times.append(msg[2])
        except BaseException:
            self.terminate()
            raise
        self.start_s = time.perf_counter() - t0
        self.compile_s = max(self.compile_times)

    # -- lifetime --
    def terminate(self) -> None:
        self._broken = True
        self._pool.terminate()
        self._pool.join()

    def close(self) -> None:
        if self._broken:
            return
        self._broken = True
        self._pool.close()
        self._pool.join()

    def __enter__(self) -> ParMBEPool:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.terminate()

    # -- work --
    def _check_workers(self) -> None:
        try:
            msg = self._ready.get_nowait()
        except queue.Empty:
            return
        raise RuntimeError(f"a ParMBE worker died and was replaced ({msg[0]} from pid {msg[1]})")

    def execute(self, path: str, u_is_left: bool, tasks, split_threshold: int, max_split: int):
        """Run ``tasks`` (dynamic scheduling, splits re-queued at the front).

        Returns (count, fingerprint, per-pid busy seconds, per-pid task
        counts, number of tasks, number of split subproblems)."""
        if self._broken:
            raise RuntimeError("ParMBE pool is closed")
        key = _graph_key(path, u_is_left)
        results: queue.SimpleQueue = queue.SimpleQueue()
        pending = deque(tasks)
        in_flight = 0
        limit = 2 * self.processes + 2
        count = fp = 0
        busy: dict[int, float] = {pid: 0.0 for pid in self.pids}
        ntasks: dict[int, int] = {pid: 0 for pid in self.pids}
        total = n_split = 0
        self.max_task_s = 0.0
        try:
            while pending or in_flight:
                while pending and in_flight < limit:
                    verts, ks, nks = pending.popleft()
                    self._pool.apply_async(
                        _task,
                        (key, verts, ks, nks, split_threshold),
                        callback=results.put,
                        error_callback=results.put,
                    )
                    in_flight += 1
                while True:
                    try:
                        r = results.get(timeout=0.5)
                        break
                    except queue.Empty:
                        self._check_workers()
                in_flight -= 1
                if isinstance(r, BaseException):
                    raise r
                pid, c, f, b, splits = r
                count += c
                fp = (fp + f) & MASK64
                busy[pid] = busy.get(pid, 0.0) + b
                self.max_task_s = max(self.max_task_s, b)
                ntasks[pid] = ntasks.get(pid, 0) + 1
                total += 1
                for v, tail in reversed(splits):
                    n_split += 1
                    kk = split_count(tail, split_threshold, max_split)
                    pending.extendleft(reversed(_split_tasks(v, kk)))
        except BaseException:
            self.terminate()
            raise
        return count, fp, busy, ntasks, total, n_split


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


_PARENT_WARM: list[float] = []


def _parent_warm() -> float:
    """Compile/load the planning kernel in this process (once); seconds taken."""
    if not _PARENT_WARM:
        t0 = time.perf_counter()
        _Prepared(_warm_graph(), True).estimates()
        _PARENT_WARM.append(time.perf_counter() - t0)
    return _PARENT_WARM[0]


def _plan(prep: _Prepared, processes: int) -> list:
    est = prep.estimates()
    return [_chunk_task(c) for c in plan_chunks(est, prep.uo, processes)]


def run(
    graph: CSRGraph,
    processes: int | None = None,
    split_threshold: int = DEFAULT_SPLIT_THRESHOLD,
    max_split: int = DEFAULT_MAX_SPLIT,
    side: str = "smaller",
    pool: ParMBEPool | None = None,
    **_: Any,
) -> EngineResult:
    """Count the maximal bicliques of ``graph`` with a pool of processes."""
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
            if own:
                pool = ParMBEPool(nproc)
            try:
                parent_compile = _parent_warm()
                t0 = time.perf_counter()
                prep = _Prepared(graph, u_is_left)
                tasks = _plan(prep, nproc)
                count, fp, busy, ntasks, total, n_split = pool.execute(
                    path, u_is_left, tasks, split_threshold, max_split
                )
                algo = time.perf_counter() - t0
            except BaseException:
                if own:
                    pool.terminate()
                raise
            if own:
                pool.close()
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)
    pids = list(busy)
    return EngineResult(
        count=count,
        fingerprint=fp,
        algo_seconds=algo,
        compile_seconds=max(pool.compile_s, parent_compile),
        stats={
            "processes": nproc,
            "worker_busy_s": [round(busy[p], 6) for p in pids],
            "worker_tasks": [ntasks[p] for p in pids],
            "tasks": total,
            "split_tasks": n_split,
            "pool_start_s": round(pool.start_s, 4),
            "max_task_s": round(pool.max_task_s, 6),
            "side": "left" if u_is_left else "right",
            "split_threshold": split_threshold,
        },
    )


def run_serial(
    graph: CSRGraph,
    processes: int = 2,
    split_threshold: int = DEFAULT_SPLIT_THRESHOLD,
    max_split: int = DEFAULT_MAX_SPLIT,
    side: str = "smaller",
    **_: Any,
) -> EngineResult:
    """The same decomposition as :func:`run` (chunks planned for ``processes``,
    splits re-queued at the front), executed in this process in task order."""
    u_is_left = choose_side(graph, side)
    tc = time.perf_counter()
    warm_up()
    compile_s = time.perf_counter() - tc
    t0 = time.perf_counter()
    prep = _Prepared(graph, u_is_left)
    pending = deque(_plan(prep, processes))
    count = fp = total = n_split = 0
    while pending:
        verts, ks, nks = pending.popleft()
        c, f, splits = prep.run(verts, ks, nks, split_threshold)
        count += c
        fp = (fp + f) & MASK64
        total += 1
        for v, tail in reversed(splits):
            n_split += 1
            kk = split_count(tail, split_threshold, max_split)
            pending.extendleft(reversed(_split_tasks(v, kk)))
    algo = time.perf_counter() - t0
    return EngineResult(
        count=count,
        fingerprint=fp,
        algo_seconds=algo,
        compile_seconds=compile_s,
        stats={
            "processes": 1,
            "tasks": total,
            "split_tasks": n_split,
            "side": "left" if u_is_left else "right",
        },
    )
