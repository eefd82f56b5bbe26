"""ParMBE's worker pool (:mod:`baselines.parmbe`): warmed worker processes that
take the tasks of a plan (:mod:`baselines.parmbe_plan`) in order.

* a pool of worker processes, one per core by default, each starting with ParMBE's
  kernels loaded.  Where a fork of the parent is sound (:func:`fork_safe`: one thread,
  numba's threading layer not started), the parent loads the kernels and forks the
  workers itself (0.2 s for 16 workers on 2 cores, against 0.6-0.7 s through a
  forkserver, whose new interpreter imports numba and loads the kernels again);
  (under the runner, :func:`baselines.parmbe.run` pauses the line thread while the
  pool starts: :func:`mbebench.progress.paused`); otherwise (another thread runs) the
  "forkserver" start method: the server imports ParMBE and warms its kernels once
  (:mod:`baselines.parmbe_preload`), so each worker, a fork of the single-threaded
  server, starts with them loaded; :func:`start_server` starts it early, so that
  its start overlaps the caller's own work.  A worker started without them (or whose
  server failed to load them) loads them on a tiny graph when it starts (reported as
  ``compile_seconds``, which is the parent's load in the fork case).  Each maps the
  binary CSR file read-only (``read_csr(path, verify=False)``) on its first
  run on that file; no graph is pickled;
* the plan goes to the workers once (a file in shared memory); the workers
  take tasks from it in order through one shared counter, so the parent does
  nothing per task (a pool round trip per task cost 16-process runs a
  measurable share of their time outside the tasks);
* each worker returns its count and fingerprint (uint64 wrapping sum); the
  parent sums them mod 2**64.

Workers ignore SIGINT and die on the pool's SIGTERM; as a last resort each
worker asks the kernel for SIGKILL when its parent dies, so no orphan keeps
computing (:meth:`ParMBEPool.terminate`).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing as mp
import os
import queue
import signal
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from baselines.parmbe_aot import kernels
from baselines.parmbe_plan import Plan, _Prepared, warm_up
from mbebench.csr import read_csr
from mbebench.engine import WorkerPool
from mbebench.fingerprint_sum import add as add_fingerprint

# Seconds terminate() waits for the pool to stop before it sends SIGKILL to the workers.
TERMINATE_GRACE_S = 5.0
# "auto": "fork" where :func:`fork_safe`, else "forkserver" (:func:`resolve_start_method`)
START_METHOD = "auto"
# what the forkserver imports before it forks any worker (__main__: multiprocessing's default)
PRELOAD = ("__main__", "baselines.parmbe_preload")
READY_TIMEOUT_S = 600.0


_W_GRAPHS: dict[tuple, _Prepared] = {}
# set where the kernels were loaded before the fork: in the parent (fork), or in the
# forkserver (PRELOAD); a worker reports it
_LOADED_BEFORE_FORK = False
_W_NEXT = None  # the pool's shared task counter (set by _init_worker)
# What the workers have done so far, for the progress lines: tasks, bicliques, estimated
# cost.  Guarded by the counter's lock and updated in the same hold that takes the next
# task, so reporting costs no lock of its own (the parent reads them without it).
_W_DONE = None
DONE_TASKS, DONE_COUNT, DONE_COST = 0, 1, 2


def _set_pdeathsig() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _init_worker(ready_q, next_task, done) -> None:
    global _W_NEXT, _W_DONE
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _set_pdeathsig()
    _W_NEXT, _W_DONE = next_task, done
    # inherited from the parent or the forkserver: the kernels were loaded before the fork
    preload = sys.modules.get(PRELOAD[-1])
    loaded = _LOADED_BEFORE_FORK or getattr(preload, "WARM_S", None) is not None
    try:
        # a worker with the kernels loaded has nothing to warm (16 warm-ups of an already
        # loaded search took half the pool's start on 2 cores)
        compile_s = 0.0 if loaded else warm_up(shard=False)
    except BaseException:
        ready_q.put(("error", os.getpid(), traceback.format_exc()))
        raise
    ready_q.put(("ready", os.getpid(), compile_s, loaded, kernels().kind))


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
    counter, done = _W_NEXT, _W_DONE
    lock = counter.get_lock()
    count = fp = ntasks = 0
    busy = cpu = max_task = 0.0
    first = last = None
    c, i = 0, -1  # the task just done: none yet
    while True:
        with lock:
            if i >= 0:
                done[DONE_TASKS] += 1
                done[DONE_COUNT] += c
                done[DONE_COST] += plan.task_costs[i]
            i = counter.value
            counter.value = i + 1
        if i >= plan.n_tasks:
            break
        t0, c0 = time.perf_counter(), time.thread_time()
        c, f = p.run(*plan.task(i))
        t1, c1 = time.perf_counter(), time.thread_time()
        count += c
        fp = add_fingerprint(fp, f)
        ntasks += 1
        busy += t1 - t0
        cpu += c1 - c0
        max_task = max(max_task, t1 - t0)
        if first is None:
            first = t0
        last = t1
    return os.getpid(), count, fp, ntasks, busy, cpu, max_task, first, last


def fork_safe() -> bool:
    """Whether a fork of this process makes a sound worker: a fork copies only the calling
    thread, so a lock another thread holds (a progress thread writing to stderr) stays held
    in the child for ever; and numba's threading layer (parallel=True) does not survive a
    fork (numba's docs: "fork and threading layers")."""
    if threading.active_count() != 1:
        return False
    par = sys.modules.get("numba.np.ufunc.parallel")
    return not getattr(par, "_is_initialized", False)


def resolve_start_method(method: str = START_METHOD) -> str:
    """The start method for ``method``: "auto" is "fork" when :func:`fork_safe` now, else
    "forkserver"; any other name as given."""
    if method != "auto":
        return method
    return "fork" if fork_safe() else "forkserver"


def start_server(method: str = START_METHOD) -> None:
    """Start the forkserver with ParMBE preloaded, without waiting for it (the first worker
    it forks waits); nothing for another start method, or when it runs already."""
    if resolve_start_method(method) == "forkserver":
        from multiprocessing import forkserver

        mp.get_context("forkserver").set_forkserver_preload(list(PRELOAD))
        forkserver.ensure_running()


# The plan file lives in memory where possible: it is written and read once.
_PLAN_DIR = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


class ParMBEPool(WorkerPool):
    """A warmed pool of ParMBE workers; reusable across graphs (each run
    names its CSR file).  Use as a context manager or call :meth:`close`."""

    def __init__(self, processes: int | None = None, start_method: str = START_METHOD):
        global _LOADED_BEFORE_FORK
        self.processes = int(processes or os.cpu_count() or 1)
        if self.processes < 1:
            raise ValueError("processes must be >= 1")
        t0 = time.perf_counter()
        method = resolve_start_method(start_method)
        if method == "fork" and not fork_safe():  # asked for, but unsound here now
            method = "forkserver"
        warm_s = 0.0
        if method == "fork":
            warm_s = warm_up(shard=False)  # the workers inherit the loaded kernels
            _LOADED_BEFORE_FORK = True
        self.start_method = method
        ctx = mp.get_context(method)
        start_server(method)
        self._ready = ctx.Queue()
        self._next = ctx.Value("q", 0)
        self._done = ctx.Array("d", 3, lock=False)  # guarded by self._next's lock
        self._pool = ctx.Pool(
            self.processes, initializer=_init_worker,
            initargs=(self._ready, self._next, self._done),
        )
        self.threads = ThreadPoolExecutor(self.processes, thread_name_prefix="parmbe-plan")
        self._broken = False
        self._terminated = False
        self.max_task_s = 0.0
        self.pids: list[int] = []
        self.compile_times: list[float] = []
        self.preloaded: list[bool] = []  # per worker: forked with the kernels loaded
        self.kernels: list[str] = []  # per worker: "aot" or "jit" (parmbe_aot.kernels)
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
                self.preloaded.append(msg[3])
                self.kernels.append(msg[4])
        except BaseException:
            self.terminate()
            raise
        self.start_s = time.perf_counter() - t0
        self.compile_s = max([warm_s, *self.compile_times])

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

    # -- work --
    def _check_workers(self) -> None:
        try:
            msg = self._ready.get_nowait()
        except queue.Empty:
            return
        raise RuntimeError(f"a ParMBE worker died and was replaced ({msg[0]} from pid {msg[1]})")

    def _sampler(self, plan: Plan):
        """A function giving (tasks, estimated cost, bicliques, cost of the tasks started)
        the workers have done in this execute, for the progress thread."""
        started_cost = np.concatenate(([0.0], np.cumsum(plan.task_costs, dtype=np.float64)))
        counter = self._next.get_obj()  # the raw value: reading it takes no lock

        def read() -> tuple[int, float, int, float]:
            # without the workers' lock: a worker descheduled while holding it (a busy
            # machine) would make the line late, one killed holding it would stop the lines;
            # each value is one aligned word, and the line needs no snapshot of all three
            d = self._done[:]
            started = float(started_cost[min(int(counter.value), plan.n_tasks)])
            return int(d[DONE_TASKS]), float(d[DONE_COST]), int(d[DONE_COUNT]), started

        return read

    def execute(self, path: str, u_is_left: bool, plan: Plan, run=None):
        """Run ``plan`` on the workers: one job per worker, each taking tasks
        in plan order from the shared counter.  ``run``: a
        :class:`mbebench.progress.Run`, whose thread reads the workers' progress while
        they run.

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
                self._done[:] = [0.0, 0.0, 0.0]
            if run is not None:
                run.sampler = self._sampler(plan)
            poll_s = 0.5
            results: queue.SimpleQueue = queue.SimpleQueue()
            t_go = time.perf_counter()
            for _ in range(self.processes):
                self._pool.apply_async(
                    _work, (key, plan_path), callback=results.put, error_callback=results.put
                )
            for _ in range(self.processes):
                while True:
                    try:
                        r = results.get(timeout=poll_s)
                        break
                    except queue.Empty:
                        self._check_workers()
                if isinstance(r, BaseException):
                    raise r
                pid, c, f, n, b, cp, mx, first, last = r
                count += c
                fp = add_fingerprint(fp, f)
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
