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
  run on that file; no graph is pickled;
* the parent plans every task before the first one runs (:func:`plan_tasks`):
  vertices most expensive first (estimate: wedges v - y - u with rank(u) >
  rank(v), computed by ``processes`` threads), in tasks of about
  total/(processes * TASKS_PER_PROCESS) estimated work;
* nested-parallelism equivalent: a subproblem whose first-level tail is longer
  than ``split_threshold``, or whose estimate alone exceeds one task's share,
  is planned as K tasks that each run the first-level branches i ≡ k (mod K),
  at the subproblem's place in the order;
* the plan goes to the workers once (a file in shared memory); the workers
  take tasks from it in order through one shared counter, so the parent does
  nothing per task (with one pool round trip per task, 16-process runs spent
  about 1 ms per task and worker outside tasks: 0.05-0.12 s of 0.7 s);
* each worker returns its count and fingerprint (uint64 wrapping sum); the
  parent sums them mod 2**64.

Ctrl-C, SIGTERM to the parent or an exception terminates the pool (workers
ignore SIGINT and die on the pool's SIGTERM; as a last resort each worker asks
the kernel for SIGKILL when its parent dies), so no orphan keeps computing.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing as mp
import os
import queue
import shutil
import signal
import tempfile
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from baselines.parmbe_spec import SIDES
from mbebench.csr import CSRGraph, from_edges, read_csr, write_csr
from mbebench.engine import EngineResult

# Seconds terminate() waits for the pool to stop before it sends SIGKILL to the workers.
TERMINATE_GRACE_S = 5.0
DEFAULT_SPLIT_THRESHOLD = 2048
DEFAULT_MAX_SPLIT = 64
# Tasks per process.  The order (most expensive first) already keeps the end
# of the schedule to small tasks; more tasks only add per-task costs, fewer
# let a misestimated heavy task end late (replaying measured per-vertex times
# of YouTube, movielens-u-i, Marvel and movielens-t-i: 16-64 are within 1-3 %
# of the ideal at 16 processes, 8 is up to 1.5x).
TASKS_PER_PROCESS = 32
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


def choose_side(graph: CSRGraph, side: str = SIDES[0]) -> bool:
    """True if we split on the CSR's left side."""
    if side == "left":
        return True
    if side == "right":
        return False
    if side == "larger":
        return graph.n_left >= graph.n_right
    if side == "smaller":
        return graph.n_left <= graph.n_right
    raise ValueError(f"side must be one of {', '.join(SIDES)}, not {side!r}")


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
    i ≡ ks[j] (mod nks[j])."""

    def __init__(self, verts, ks, nks, bounds, n_split=0, n_presplit=0):
        self.verts, self.ks, self.nks, self.bounds = verts, ks, nks, bounds
        self.n_split = int(n_split)  # subproblems split for their tail length
        self.n_presplit = int(n_presplit)  # ... for their estimated cost alone
        self.n_tasks = len(bounds) - 1

    def task(self, i: int):
        a, b = self.bounds[i], self.bounds[i + 1]
        return self.verts[a:b], self.ks[a:b], self.nks[a:b]

    def to_bytes(self) -> bytes:
        head = np.array([self.n_tasks, len(self.verts)], np.int32)
        parts = (head, self.bounds, self.verts, self.ks, self.nks)
        return b"".join(np.ascontiguousarray(x, np.int32).tobytes() for x in parts)

    @classmethod
    def from_file(cls, path: str) -> Plan:
        a = np.fromfile(path, dtype=np.int32)
        nt, ni = int(a[0]), int(a[1])
        o = 2 + nt + 1
        return cls(a[o : o + ni], a[o + ni : o + 2 * ni], a[o + 2 * ni : o + 3 * ni], a[2:o])


def plan_tasks(
    prep: _Prepared,
    processes: int,
    split_threshold: int = DEFAULT_SPLIT_THRESHOLD,
    max_split: int = DEFAULT_MAX_SPLIT,
    threads: ThreadPoolExecutor | None = None,
    tasks_per_process: int = TASKS_PER_PROCESS,
) -> Plan:
    """Vertices with at least one neighbour, most expensive first, in tasks of
    about tau = total/(processes * tasks_per_process) estimated work.

    A subproblem becomes K > 1 tasks (first-level branches i ≡ k mod K, one
    task each, at its place in the order) if its first-level tail is longer
    than ``split_threshold`` (K = 2 * ceil(tail / split_threshold), 2 to
    ``max_split``), or if its estimate alone exceeds tau (K = estimate / tau, at
    most ``max_split``): as one task, a subproblem bigger than a process's
    share bounds the run's time from below however early it starts.
    """
    from baselines import _parmbe_kernel as K

    est = prep.estimates(threads, processes)
    deg = np.diff(prep.uo)
    active = np.flatnonzero(deg > 0)
    cost = est[active].astype(np.float64) + deg[active]  # + setup cost
    order = np.argsort(-cost, kind="stable")  # ties keep id order
    verts = active[order].astype(np.int32)
    cost = cost[order]
    est = est[verts]
    tau = max(cost.sum() / (max(processes, 1) * max(tasks_per_process, 1)), 1.0)
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
    tv, tk, tn, bounds = K.build_tasks(verts, cost, kk, tau, MAX_CHUNK_VERTICES)
    return Plan(tv, tk, tn, bounds, n_split, n_presplit)


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
            from baselines import _parmbe_kernel as K

            self._scratch = K.new_scratch(self.uo, self.vo)
        return self._scratch

    def estimates(self, threads: ThreadPoolExecutor | None = None, nthreads: int = 1) -> np.ndarray:
        from baselines import _parmbe_kernel as K

        n = len(self.uo) - 1
        est = np.zeros(n, np.int64)
        args = (self.uo, self.ui, self.vo, self.vi, self.rank)
        if threads is None or nthreads <= 1 or self.uo[-1] < 16384:
            K.tail_estimates(*args, 0, n, est)
            return est
        # The work of a vertex grows with its edges: blocks of equal edge
        # counts, a few per thread (the kernel releases the GIL).
        nb = 4 * nthreads
        cuts = np.searchsorted(self.uo, np.linspace(0, self.uo[-1], nb + 1), side="left")
        cuts[0], cuts[-1] = 0, n
        cuts = np.maximum.accumulate(np.minimum(cuts, n))
        jobs = [
            threads.submit(K.tail_estimates, *args, int(lo), int(hi), est)
            for lo, hi in zip(cuts[:-1], cuts[1:])
            if hi > lo
        ]
        for j in jobs:
            j.result()
        return est

    def tail_sizes(self, verts: np.ndarray) -> np.ndarray:
        from baselines import _parmbe_kernel as K

        cnt, _, touched, _ = self.scratch()
        verts = np.ascontiguousarray(verts, np.int32)
        return K.tail_sizes(self.uo, self.ui, self.vo, self.vi, self.rank, verts, cnt, touched)

    def run(self, verts, ks, nks):
        from baselines import _parmbe_kernel as K

        cnt, slot, touched, buf = self.scratch()
        c, fp = K.run_tasks(
            self.uo, self.ui, self.vo, self.vi, self.rank, verts, ks, nks,
            self.u_is_left, cnt, slot, touched, buf,
        )  # fmt: skip
        return int(c), int(fp)


# --------------------------------------------------------------------------
# worker side
# --------------------------------------------------------------------------

_W_GRAPHS: dict[tuple, _Prepared] = {}
_W_NEXT = None  # the pool's shared task counter (set by _init_worker)


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
        plan = plan_tasks(p, 2, 2)
        for i in range(plan.n_tasks):
            p.run(*plan.task(i))
    return time.perf_counter() - t0


def _set_pdeathsig() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _init_worker(ready_q, next_task) -> None:
    global _W_NEXT
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _set_pdeathsig()
    _W_NEXT = next_task
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


def _work(key, plan_path):
    """Take tasks in plan order from the shared counter until none is left."""
    p = _worker_graph(key)
    plan = Plan.from_file(plan_path)
    counter = _W_NEXT
    lock = counter.get_lock()
    count = fp = ntasks = 0
    busy = cpu = max_task = 0.0
    first = last = None
    while True:
        with lock:
            i = counter.value
            counter.value = i + 1
        if i >= plan.n_tasks:
            break
        t0, c0 = time.perf_counter(), time.thread_time()
        c, f = p.run(*plan.task(i))
        t1, c1 = time.perf_counter(), time.thread_time()
        count += c
        fp = (fp + f) & MASK64
        ntasks += 1
        busy += t1 - t0
        cpu += c1 - c0
        max_task = max(max_task, t1 - t0)
        if first is None:
            first = t0
        last = t1
    return os.getpid(), count, fp, ntasks, busy, cpu, max_task, first, last


# --------------------------------------------------------------------------
# parent side
# --------------------------------------------------------------------------

# The plan file lives in memory where possible: it is written and read once.
_PLAN_DIR = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


class ParMBEPool:
    """A warmed pool of ParMBE workers; reusable across graphs (each run
    names its CSR file).  Use as a context manager or call :meth:`close`."""

    def __init__(self, processes: int | None = None, start_method: str = START_METHOD):
        self.processes = int(processes or os.cpu_count() or 1)
        if self.processes < 1:
            raise ValueError("processes must be >= 1")
        ctx = mp.get_context(start_method)
        t0 = time.perf_counter()
        self._ready = ctx.Queue()
        self._next = ctx.Value("q", 0)
        self._pool = ctx.Pool(
            self.processes, initializer=_init_worker, initargs=(self._ready, self._next)
        )
        self.threads = ThreadPoolExecutor(self.processes, thread_name_prefix="parmbe-plan")
        self._broken = False
        self._terminated = False
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
    def terminate(self, grace_s: float | None = None) -> None:
        """Stop the workers now (SIGTERM); any still there after ``grace_s`` get SIGKILL.

        multiprocessing's ``Pool.terminate`` takes its queues' locks, and a worker
        that dies holding one can leave it waiting for ever: a Ctrl-C that does not
        end the run is worse than a worker killed without its goodbye.
        """
        if self._terminated:
            return
        self._terminated = self._broken = True
        grace = TERMINATE_GRACE_S if grace_s is None else float(grace_s)
        self.threads.shutdown(wait=False, cancel_futures=True)
        workers = [w for w in list(self._pool._pool) if w.pid is not None]

        def stop() -> None:
            self._pool.terminate()
            self._pool.join()

        stopper = threading.Thread(target=stop, name="parmbe-terminate", daemon=True)
        stopper.start()
        stopper.join(grace)
        if stopper.is_alive():
            for w in workers + [w for w in list(self._pool._pool) if w.pid is not None]:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(w.pid, signal.SIGKILL)
            stopper.join(grace)  # a daemon: if the pool's threads still hang, exit without them

    def close(self) -> None:
        if self._broken:
            return
        self._broken = True
        self.threads.shutdown(wait=False)
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

    def execute(self, path: str, u_is_left: bool, plan: Plan):
        """Run ``plan`` on the workers: one job per worker, each taking tasks
        in plan order from the shared counter.

        Returns (count, fingerprint, stats) with per-pid busy seconds, task
        counts and CPU seconds and the start/end times of the workers."""
        if self._broken:
            raise RuntimeError("ParMBE pool is closed")
        busy: dict[int, float] = {pid: 0.0 for pid in self.pids}
        ntasks: dict[int, int] = {pid: 0 for pid in self.pids}
        cpu: dict[int, float] = {pid: 0.0 for pid in self.pids}
        stats = {"busy": busy, "tasks": ntasks, "cpu": cpu, "ramp_s": 0.0, "end_spread_s": 0.0}
        self.max_task_s = 0.0
        if plan.n_tasks == 0:
            return 0, 0, stats
        key = _graph_key(path, u_is_left)
        count = fp = 0
        firsts, lasts = [], []
        fd, plan_path = tempfile.mkstemp(prefix="parmbe-plan-", dir=_PLAN_DIR)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(plan.to_bytes())
            with self._next.get_lock():
                self._next.value = 0
            results: queue.SimpleQueue = queue.SimpleQueue()
            t_go = time.perf_counter()
            for _ in range(self.processes):
                self._pool.apply_async(
                    _work, (key, plan_path), callback=results.put, error_callback=results.put
                )
            for _ in range(self.processes):
                while True:
                    try:
                        r = results.get(timeout=0.5)
                        break
                    except queue.Empty:
                        self._check_workers()
                if isinstance(r, BaseException):
                    raise r
                pid, c, f, n, b, cp, mx, first, last = r
                count += c
                fp = (fp + f) & MASK64
                busy[pid] = busy.get(pid, 0.0) + b
                ntasks[pid] = ntasks.get(pid, 0) + n
                cpu[pid] = cpu.get(pid, 0.0) + cp
                self.max_task_s = max(self.max_task_s, mx)
                if first is not None:
                    firsts.append(first)
                    lasts.append(last)
        except BaseException:
            self.terminate()
            raise
        finally:
            with contextlib.suppress(OSError):
                os.unlink(plan_path)
        if firsts:
            # perf_counter is CLOCK_MONOTONIC: comparable across processes.
            stats["ramp_s"] = max(firsts) - t_go
            stats["end_spread_s"] = max(lasts) - min(lasts)
        return count, fp, stats


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
    """Compile/load the planning kernels in this process (once); seconds taken."""
    if not _PARENT_WARM:
        t0 = time.perf_counter()
        plan_tasks(_Prepared(_warm_graph(), True), 2, 2)
        _PARENT_WARM.append(time.perf_counter() - t0)
    return _PARENT_WARM[0]


def run(
    graph: CSRGraph,
    processes: int | None = None,
    split_threshold: int = DEFAULT_SPLIT_THRESHOLD,
    max_split: int = DEFAULT_MAX_SPLIT,
    side: str = SIDES[0],
    pool: ParMBEPool | None = None,
    tasks_per_process: int = TASKS_PER_PROCESS,
) -> EngineResult:
    """Count the maximal bicliques of ``graph`` with a pool of processes.

    ``processes`` and ``side`` are the config parameters (``baselines.parmbe_spec``);
    ``processes=None`` takes the pool's size, else every core.  ``split_threshold``,
    ``max_split`` and ``tasks_per_process`` tune the plan (:func:`plan_tasks`);
    ``pool`` reuses a running :class:`ParMBEPool` (tests)."""
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
                plan = plan_tasks(
                    prep, nproc, split_threshold, max_split, pool.threads, tasks_per_process
                )
                plan_s = time.perf_counter() - t0
                count, fp, ex = pool.execute(path, u_is_left, plan)
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
    pids = list(ex["busy"])
    return EngineResult(
        count=count,
        fingerprint=fp,
        algo_seconds=algo,
        compile_seconds=max(pool.compile_s, parent_compile),
        stats={
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
        },
    )


def run_serial(
    graph: CSRGraph,
    processes: int = 2,
    split_threshold: int = DEFAULT_SPLIT_THRESHOLD,
    max_split: int = DEFAULT_MAX_SPLIT,
    side: str = SIDES[0],
    tasks_per_process: int = TASKS_PER_PROCESS,
) -> EngineResult:
    """The same plan as :func:`run` (tasks planned for ``processes``),
    executed in this process in task order."""
    u_is_left = choose_side(graph, side)
    tc = time.perf_counter()
    warm_up()
    compile_s = time.perf_counter() - tc
    t0 = time.perf_counter()
    prep = _Prepared(graph, u_is_left)
    plan = plan_tasks(prep, processes, split_threshold, max_split, None, tasks_per_process)
    count = fp = 0
    for i in range(plan.n_tasks):
        c, f = prep.run(*plan.task(i))
        count += c
        fp = (fp + f) & MASK64
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
        },
    )
