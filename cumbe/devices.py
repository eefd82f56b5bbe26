"""cuMBE on several GPUs of one node (the ``devices`` parameter): shards from one queue.

    run(graph, devices="all", shards_per_device=8, params={...}) -> EngineResult
    with DevicePool("all") as pool:          # warm workers, reusable across graphs
        pool.run(graph, params, devices=[0]) # a subset of the pool's devices

* One worker process per device (``spawn``: numba and fork do not mix).  A GPU worker
  sets ``CUDA_VISIBLE_DEVICES`` to its device before numba touches CUDA, so it sees
  that one device as device 0 (ids are positions in the parent's own visible list).
* A run sends every participating worker the job; each one reads the graph (the CSR
  file by path, mapped; an in-memory graph is pickled), makes the host preparation
  ONCE (:func:`cumbe.single_device.prepare_for`), computes the same partition of the
  first-level tasks into ``n`` shards (:func:`mbebench.shard.assign_weighted`, LPT by
  estimated cost towards the shards' shares: wedges + degree, or a small local graph's
  subtree estimate, :mod:`cumbe.estimate`), loads the kernel (launching each build once),
  and reports ready.  A task larger than a device's share goes into pieces.  It keeps its
  device buffers, pinned buffers, streams and events across its shards (:mod:`cumbe.kept`).
* ``n`` = ``shards_per_device`` x devices, of decreasing size
  (:func:`mbebench.shard.guided_targets`: each device's first shard is half its share,
  then a quarter, ..., the last two equal), the largest tasks in the largest shards.  Every
  shard is a kernel launch, and a launch costs beyond its work (its stealing tail).  Few,
  large shards first pay that few times; the small last ones even out the devices' ends.
* Once every worker is ready the parent keeps the shard indices in one queue, largest
  estimated cost first, and hands each device the next one when it reports the last one
  done (a dynamic queue over one pipe per worker, not a static split); each shard is one
  :func:`cumbe.single_device.run` on the reused preparation.  One device runs one shard (one
  kernel: nothing to balance); ``shards=`` gives that many equal shards instead.
* The parent sums the counts (Python int) and the fingerprints (mod 2**64).  A failure
  on any device, or a worker that dies (its pipe closes), stops the run's workers and
  raises one line naming the graph, the device and the shard: there is no partial
  count.  A later run of the pool starts stopped workers again; runs on disjoint device
  subsets may go on at once from different threads (the benchmark's 1-GPU runs).

Time: the result's ``algo_seconds`` is ``stats["wall_s"]``, the wall time of the whole
multi-GPU computation, from the moment every device had prepared the graph and loaded
the kernel to the last shard's result (every shard's host setup, copies and kernel, and
the devices' idle time at the end).  ``stats["kernel_s_sum"]`` sums the shards' kernel
seconds over all devices: device time, not comparable with one run's kernel seconds.
``stats["total_wall_s"]`` adds the workers' start, graph preparation and kernel load.

Balance: a shard is a set of whole first-level tasks, so one task that holds more than
1/devices of the work bounds the speed-up (the kernel's entry point is the first-level
task; splitting a heavy task's second-level children would need a kernel entry for
them).  ``stats["max_task_cost_share"]`` (estimated) and the per-device busy times show
it; the queue takes the largest shards first so that such a task starts at once.

In numba's CUDA simulator there is one fake device; ``MBEBENCH_SIM_DEVICES=N`` gives N,
whose workers run the simulator and only record their id (tests).
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing as mp
import os
import threading
import time
from collections.abc import Sequence
from multiprocessing import connection as mp_connection
from typing import Any

import numpy as np

from cumbe import launch
from cumbe.device_worker import worker
from cumbe.spec import SHARDS_PER_DEVICE, RunOptions, parse_devices, run_options
from mbebench import envvars
from mbebench import shard as sharding
from mbebench.engine import EngineResult, EngineSkipped, WorkerPool
from mbebench.fingerprint_sum import add as add_fingerprint

SIM_DEVICES_ENV = "MBEBENCH_SIM_DEVICES"
START_METHOD = "spawn"
POLL_S = 0.2
STOP_GRACE_S = 10.0
TIME_NOTE = (
    "algo_seconds = wall_s: wall time of the whole multi-GPU computation, from the moment "
    "every device had prepared the graph and loaded the kernel to the last shard's result "
    "(every shard's host setup, copies and kernel, and the devices' idle time at the end); "
    "kernel_s_sum: the shards' kernel seconds summed over all devices (device time, not "
    "comparable with one run's kernel seconds); total_wall_s: wall_s plus the workers' "
    "start, graph preparation and kernel load")
_ERRORS = {c.__name__: c for c in (launch.LaunchError, launch.DeviceMemoryError, launch.DeviceError,
                                    EngineSkipped, ValueError, TypeError)}


def available(sim: bool | None = None) -> int:
    """Devices a pool can use: the CUDA devices this process sees (no context is made),
    or in the simulator ``$MBEBENCH_SIM_DEVICES`` (default 1)."""
    if envvars.simulating() if sim is None else sim:
        return max(1, int(envvars.get(SIM_DEVICES_ENV, "1") or 1))
    from numba import cuda

    if not cuda.is_available():
        return 0
    return len(cuda.gpus)


def resolve(devices: Any, n_available: int) -> list[int]:
    """Device ids (positions among the visible devices) of a ``devices`` value."""
    d = parse_devices(devices)
    if n_available < 1:
        raise EngineSkipped("no CUDA device")
    if d is None:
        return [0]
    if d == "all":
        return list(range(n_available))
    if isinstance(d, int):
        if d > n_available:
            raise ValueError(f"devices={d}: only {n_available} CUDA device(s) visible")
        return list(range(d))
    bad = [i for i in d if i >= n_available]
    if bad:
        raise ValueError(f"devices={','.join(map(str, d))}: no device {bad[0]} (only "
                         f"{n_available} visible, ids 0..{n_available - 1})")
    return list(d)


def _visible(ids: Sequence[int]) -> list[str]:
    """What each worker's CUDA_VISIBLE_DEVICES is set to: the parent's own entry."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is None:
        return [str(i) for i in ids]
    entries = [x.strip() for x in env.split(",") if x.strip()]
    return [entries[i] for i in ids]


def shard_count(n_devices: int, shards_per_device: int = SHARDS_PER_DEVICE) -> int:
    """Shards of a run on ``n_devices``: one for one device, else ``shards_per_device``
    per device."""
    if int(shards_per_device) < 1:
        raise ValueError(f"shards_per_device must be >= 1, not {shards_per_device!r}")
    return 1 if n_devices == 1 else int(shards_per_device) * n_devices


# ----------------------------------------------------------------------------- pool


class DevicePool(WorkerPool):
    """One warm worker process per device, reusable across graphs; runs on disjoint device
    subsets may go on at once from different threads.  A worker that failed or was stopped
    is started again by the next run that needs it.  Use as a context manager or call
    :meth:`close`."""

    def __init__(self, devices: Any = "all"):
        self.sim = envvars.simulating()
        self.ids = resolve(devices, available(self.sim))
        self.visible = dict(zip(self.ids, [str(i) for i in self.ids] if self.sim
                                else _visible(self.ids)))
        self._ctx = mp.get_context(START_METHOD)
        self._procs: dict[int, Any] = {}
        self._conns: dict[int, Any] = {}
        self.names: dict[int, str] = {}
        self.pids: dict[int, int] = {}
        self._busy: set[int] = set()
        self._lock = threading.Lock()
        self._closed = False
        t0 = time.perf_counter()
        try:
            self._start(self.ids)
        except BaseException:
            self.terminate()
            raise
        self.start_s = time.perf_counter() - t0

    # -- lifetime --
    def _start(self, ids) -> None:
        for d in ids:
            parent, child = self._ctx.Pipe()
            p = self._ctx.Process(target=worker, name=f"cumbe-device-{d}", daemon=True,
                                  args=(d, self.visible[d], self.sim, child))
            p.start()
            child.close()
            self._procs[d], self._conns[d] = p, parent
        for d in ids:
            try:
                msg = self._conns[d].recv()
            except EOFError:
                msg = ("dead", "DeviceError", f"exit code {self._procs[d].exitcode}")
            if msg[0] == "dead":
                raise _ERRORS.get(msg[1], launch.DeviceError)(
                    f"cuMBE device pool: device {self._desc(d)} could not start: {msg[2]}")
            self.names[d], self.pids[d] = msg[1], msg[2]

    def _desc(self, d: int) -> str:
        name = self.names.get(d)
        vis = "" if self.sim else f"CUDA_VISIBLE_DEVICES={self.visible[d]}"
        return f"{d} ({', '.join(x for x in (name, vis) if x) or 'starting'})"

    def _stop(self, ids) -> None:
        """Stop these workers now (SIGTERM, then SIGKILL)."""
        for d in ids:
            p = self._procs.get(d)
            if p is not None and p.is_alive():
                p.terminate()
        deadline = time.monotonic() + STOP_GRACE_S
        for d in ids:
            p = self._procs.pop(d, None)
            conn = self._conns.pop(d, None)
            if p is not None:
                p.join(max(0.0, deadline - time.monotonic()))
                if p.is_alive():
                    p.kill()
                    p.join(1.0)
            if conn is not None:
                conn.close()

    def terminate(self) -> None:
        self._closed = True
        self._stop(list(self._procs))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for d, conn in list(self._conns.items()):
            with contextlib.suppress(Exception):
                conn.send(None)
        deadline = time.monotonic() + STOP_GRACE_S
        for p in self._procs.values():
            p.join(max(0.0, deadline - time.monotonic()))
        self._stop(list(self._procs))

    # -- work --
    def subset(self, devices: Any) -> list[int]:
        """The pool's devices a run uses: None or "all" = every one, a count = the first
        n, ids = those (each must be in the pool)."""
        if devices is None:
            return list(self.ids)
        d = parse_devices(devices)
        if d == "all":
            return list(self.ids)
        if isinstance(d, int):
            if d > len(self.ids):
                raise ValueError(f"devices={d}: the pool has {len(self.ids)}")
            return list(self.ids[:d])
        missing = [i for i in d if i not in self.ids]
        if missing:
            raise ValueError(f"device {missing[0]} is not in the pool ({self.ids})")
        return list(d)

    def run(self, graph, params: dict | RunOptions | None = None, *, devices: Any = None,
            shards: int | None = None, shards_per_device: int = SHARDS_PER_DEVICE,
            shard: str = sharding.WHOLE, timeout_s: float | None = None) -> EngineResult:
        """Count and fingerprint ``graph`` (shard ``shard`` of it) on ``devices`` of the
        pool; ``params``: :func:`cumbe.engine.run`'s (no ``devices``, ``shard`` or
        ``prepared``); ``shards``: how many (default :func:`shard_count`); past
        ``timeout_s`` its workers are stopped and a TimeoutError names the graph."""
        if self._closed:
            raise RuntimeError("the cuMBE device pool is closed")
        if isinstance(params, RunOptions):  # checked by cumbe.engine.run
            # the run's shard is ``shard``; a device runs its own pieces of it whole
            opts = dataclasses.replace(params, shard=sharding.WHOLE)
        else:
            params = dict(params or {})
            for key in ("devices", "shards_per_device", "shard", "prepared"):
                if key in params:
                    raise ValueError(f"DevicePool.run: {key!r} is not a per-shard parameter")
            opts = run_options(**params)  # checked once: the workers take them as they are
        sharding.parse(shard)
        ids = self.subset(devices)
        n = int(shards) if shards is not None else shard_count(len(ids), shards_per_device)
        if n < 1:
            raise ValueError(f"shards must be >= 1, not {shards!r}")
        with self._lock:
            if self._busy & set(ids):
                raise RuntimeError(f"devices {sorted(self._busy & set(ids))} are running "
                                   "another job of this pool")
            self._busy |= set(ids)
        try:
            dead = [d for d in ids if d not in self._procs or not self._procs[d].is_alive()]
            if dead:
                self._stop(dead)
                self._start(dead)
            targets = (sharding.guided_targets(len(ids), shards_per_device)
                       if shards is None and len(ids) > 1 else np.ones(n))
            return self._run(graph, opts, ids, targets, shards_per_device, shard, timeout_s)
        finally:
            with self._lock:
                self._busy -= set(ids)

    def _run(self, graph, opts, ids, targets, spd, shard, timeout_s) -> EngineResult:
        label = launch.graph_label(graph)
        src = ("path", os.path.abspath(graph.path)) if graph.path else ("graph", graph)
        n = len(targets)
        job = {"graph": src, "options": opts, "shard": shard, "n": n, "devices": len(ids),
               "targets": [float(t) for t in targets]}
        t_start = time.perf_counter()
        deadline = None if timeout_s is None else t_start + float(timeout_s)
        conns = {self._conns[d]: d for d in ids}
        for d in ids:
            self._conns[d].send(job)
        ready: dict[int, dict] = {}
        ready_at: dict[int, float] = {}
        running: dict[int, int] = {}
        done: dict[int, dict] = {}
        idle: set[int] = set()
        order: list[int] = []
        count = fp = 0
        t_go = t_end = None

        def fail(err: BaseException):
            self._stop(ids)  # their state is unknown: the next run starts them again
            raise err

        def dispatch(d: int) -> None:
            if order:
                s = order.pop(0)
                running[d] = s
                self._conns[d].send(s)
            else:
                running.pop(d, None)
                self._conns[d].send(None)

        while len(idle) < len(ids):
            wait_s = POLL_S if deadline is None else max(0.0, min(POLL_S,
                                                                 deadline - time.perf_counter()))
            for conn in mp_connection.wait(list(conns), timeout=wait_s):
                d = conns[conn]
                try:
                    msg = conn.recv()
                except (EOFError, OSError):
                    fail(self._death(d, running.get(d), d in ready, n, label))
                kind = msg[0]
                if kind == "error":
                    fail(self._failure(d, msg, n, label))
                elif kind == "ready":
                    ready[d] = msg[1]
                    ready_at[d] = time.perf_counter() - t_start
                    if len(ready) == len(ids):
                        loads = ready[ids[0]]["loads"]
                        if any(r["loads"] != loads for r in ready.values()):
                            fail(launch.DeviceError(f"{label}: the devices disagree on the "
                                                    "shard layout (a bug): no count"))
                        order = sorted(range(n), key=lambda s: (-loads[s], s))
                        layout_order = list(order)
                        t_go = time.perf_counter()
                        for dd in ids:
                            dispatch(dd)
                elif kind == "done":
                    _, s, c, f, t1, t2, info = msg
                    count += c
                    fp = add_fingerprint(fp, f)
                    done[s] = {"device": d, "count": c, "start": t1, "end": t2, **info}
                    t_end = time.perf_counter()
                    dispatch(d)
                elif kind == "idle":
                    idle.add(d)
            if deadline is not None and time.perf_counter() > deadline and len(idle) < len(ids):
                fail(TimeoutError(
                    f"{label}: cuMBE on devices {', '.join(self._desc(d) for d in ids)} did not "
                    f"finish within {float(timeout_s):g} s ({len(done)} of {n} shards done); "
                    "no count"))
        total = time.perf_counter() - t_start
        return self._result(opts, ids, n, spd, shard, ready, ready_at, done, count, fp,
                            t_start, t_go, t_end, total, layout_order)

    def _death(self, d: int, shard, was_ready: bool, n: int, label: str) -> BaseException:
        """The error of a worker whose pipe closed: it died (one line, no count)."""
        p = self._procs[d]
        p.join(1.0)
        where = (f"while running shard {shard}/{n}" if shard is not None else
                 "between shards" if was_ready else
                 "before its first shard (preparing the graph or loading the kernel)")
        return launch.DeviceError(f"{label}: cuMBE worker of device {self._desc(d)} died (exit "
                                  f"code {p.exitcode}) {where}; no count")

    def _failure(self, d: int, msg: tuple, n: int, label: str) -> BaseException:
        """The error a worker reported, as one line naming the graph, device and shard."""
        _, s, cls, text, glabel = msg
        prefix = f"{glabel}: "
        text = text[len(prefix):] if glabel and text.startswith(prefix) else text
        where = f"shard {s}/{n}" if s is not None else "preparing the graph"
        return _ERRORS.get(cls, launch.DeviceError)(
            f"{label}: cuMBE failed on device {self._desc(d)}, {where}: {text}; no count")

    def _result(self, opts, ids, n, spd, shard, ready, ready_at, done, count, fp, t_start,
                t_go, t_end, total, order) -> EngineResult:
        r0 = ready[ids[0]]
        loads = np.asarray(r0["loads"], dtype=np.float64)
        total_cost = float(loads.sum())
        wall = float(t_end - t_go) if done else 0.0
        layout = []
        per = {d: {"id": d, "name": self.names.get(d), "visible": self.visible[d],
                   "shards": 0, "busy_s": 0.0, "kernel_s": 0.0, "count": 0,
                   "prepare_s": ready[d]["prepare_s"], "compile_s": ready[d]["compile_s"],
                   "ready_s": ready_at[d]} for d in ids}
        for s in order:
            x = done[s]
            secs = x["end"] - x["start"]
            layout.append({"shard": f"{s}/{n}", "device": x["device"],
                           "start_s": x["start"] - t_go, "seconds": secs,
                           "kernel_s": x["kernel_s"], "count": x["count"], "tasks": x["tasks"],
                           "est_cost": float(loads[s]), "blocks": x["blocks"],
                           "nodes": x["nodes"], "setup_s": x.get("setup_s"),
                           "host_s": x.get("host_s")})
            p = per[x["device"]]
            p["shards"] += 1
            p["busy_s"] += secs
            p["kernel_s"] += x["kernel_s"]
            p["count"] += x["count"]
        busy = [per[d]["busy_s"] for d in ids]
        names = [per[d]["name"] for d in ids]
        stats = {
            "variant": opts.variant, "k": opts.k, "threads": opts.threads, "side": r0["side"],
            "instrumented": opts.instrument,
            "n_tasks": r0["n_tasks"], "n_twins": r0["n_twins"],
            "task_pieces": r0.get("task_pieces", 0),
            "device": (f"{len(ids)} x {names[0]}" if len(set(names)) == 1
                       else " + ".join(names)),
            "device_count": len(ids), "devices": [per[d] for d in ids],
            "shards": n, "shards_per_device": int(spd) if len(ids) > 1 else None,
            "shard_layout": layout,
            "wall_s": wall, "kernel_s_sum": float(sum(x["kernel_s"] for x in done.values())),
            "total_wall_s": float(total), "startup_s": float(t_go - t_start),
            "busy_max_over_mean": (max(busy) / (sum(busy) / len(busy))
                                   if sum(busy) > 0 else None),
            "max_task_cost_share": r0["max_task_cost"] / total_cost if total_cost else 0.0,
            "max_shard_cost_share": float(loads.max()) / total_cost if total_cost else 0.0,
            "time_note": TIME_NOTE,
        }
        # the run's own shard ("i/n" of the whole graph; the device shards split it)
        stats.update(r0["outer"] or {"shard": shard, "shard_tasks": r0["n_tasks"],
                                     "shard_cost": total_cost, "total_tasks": r0["n_tasks"],
                                     "total_cost": total_cost})
        compile_s = max(r["compile_s"] for r in ready.values())
        return EngineResult(int(count), int(fp), wall, float(compile_s), stats)


def run(graph, devices: Any, *, shards_per_device: int = SHARDS_PER_DEVICE,
        shard: str = sharding.WHOLE, params: dict | RunOptions | None = None,
        shards: int | None = None) -> EngineResult:
    """One run of :func:`cumbe.engine.run` on ``devices`` with a pool of its own."""
    shard_count(2, shards_per_device)  # a bad value fails before any process starts
    with DevicePool(devices) as pool:
        return pool.run(graph, params, shards=shards, shards_per_device=shards_per_device,
                        shard=shard)
