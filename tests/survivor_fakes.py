"""Stand-ins for tests/test_mutation_survivors*.py: an engine that holds a known amount of
memory (the runner's peak RSS), and a cuMBE device worker that speaks
:mod:`cumbe.device_worker`'s pipe protocol without a GPU or the simulator (the device
pool's timing and dispatch order).  Both run in child processes, imported by name (this
folder is on their path)."""

from __future__ import annotations

import json
import os
import time

import numpy as np

from mbebench.engine import EngineResult


def memory_hog(graph, mib=64, **_):
    """Touches ``mib`` MiB (every page), so the process's peak RSS is at least that."""
    block = np.ones(int(mib) << 20, dtype=np.uint8)
    return EngineResult(int(block[::4096].sum() > 0), 0, algo_seconds=0.0)


def device_worker(dev: int, visible: str, sim: bool, conn) -> None:
    """A device pool worker that takes from $FAKE_JOB (JSON; the pool checks a job's real
    parameters, so the stand-in's own travel beside them): ``fake_loads`` (each shard's
    estimated cost), ``fake_prepare_s`` (seconds spent before reporting ready: the graph preparation and
    kernel load that are not kernel time) and ``fake_shard_s`` (seconds per shard).  Every
    shard it is handed is appended, as "<device> <shard>", to the file $FAKE_DISPATCH_LOG."""
    conn.send(("up", f"fake-{dev}", os.getpid()))
    while True:
        job = conn.recv()
        if job is None:
            return
        params = json.loads(os.environ["FAKE_JOB"])
        loads = [float(x) for x in params["fake_loads"]]
        time.sleep(float(params.get("fake_prepare_s", 0.0)))
        conn.send(("ready", {"prepare_s": 0.0, "compile_s": 0.0, "loads": loads,
                             "n_tasks": len(loads), "n_twins": 0, "side": "left",
                             "max_task_cost": max(loads), "outer": None}))
        while True:
            s = conn.recv()
            if s is None:
                break
            with open(os.environ["FAKE_DISPATCH_LOG"], "a") as f:
                f.write(f"{dev} {s}\n")
            t1 = time.perf_counter()
            time.sleep(float(params.get("fake_shard_s", 0.0)))
            t2 = time.perf_counter()
            conn.send(("done", s, 1, s, t1, t2, {"kernel_s": t2 - t1, "tasks": 1,
                                                 "blocks": 1, "nodes": 1,
                                                 "memory_bytes": 0}))
        conn.send(("idle",))
