"""One device's worker process of the multi-GPU queue (:mod:`cumbe.devices`): it prepares a
job's graph once, loads the kernel, reports ready, then runs the shards the parent hands it,
one :func:`cumbe.single_device.run` each, and reports each one's count, fingerprint and times (or
its failure, in one line).  Messages over one pipe: ("up", name, pid) | ("dead", type,
text) at start; ("ready", stats) | ("error", shard, type, text, graph) | ("done", ...) |
("idle",) per job."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from dataclasses import replace

import numpy as np

from cumbe import launch
from mbebench import envvars
from mbebench import shard as sharding
from mbebench.engine import EngineSkipped

# Test hook: "<device id>:raise" (the worker's first shard raises a LaunchError) or
# "<device id>:exit" (the worker process exits at once when it takes its first shard).
FAULT_ENV = "MBEBENCH_TEST_DEVICE_FAULT"


def _tiny():
    """The graph of a GPU worker's warm-up launch: one edge."""
    from mbebench.csr import from_edges

    return from_edges(np.array([0]), np.array([0]), 1, 1)


def _set_pdeathsig() -> None:
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _fault(dev: int) -> str | None:
    spec = envvars.get(FAULT_ENV, "")
    if ":" in spec:
        d, mode = spec.split(":", 1)
        if d.strip() == str(dev):
            return mode.strip()
    return None


def _load_kernel(cuda, opts, sim: bool, pieces: bool = False) -> float:
    """Compile (or load from numba's cache) the kernel the shards will launch (both builds
    when some task runs in pieces: a shard without one runs the plain build)."""
    from cumbe import buffers
    from cumbe import kernel as kernels

    rs, es, ws = opts.switches
    t = time.perf_counter()
    for p in (False, True) if pieces else (False,):
        kern = kernels.build(rs=rs, es=es, ws=ws, instr=opts.instrument, threads=opts.threads,
                             pieces=p, blocks_per_sm=opts.blocks_per_sm,
                             rounds=opts.rounds)
        if not sim:
            sig = tuple(kern.typeof_pyval(x) for x in buffers.typing_dummies(cuda))
            kern.compile(sig).max_cooperative_grid_blocks(opts.threads)
    return 0.0 if sim else time.perf_counter() - t


def worker(dev: int, visible: str, sim: bool, conn) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _set_pdeathsig()
    if not sim:
        os.environ["CUDA_VISIBLE_DEVICES"] = visible  # before numba initialises CUDA
    try:
        from numba import cuda

        if sim:
            name = "simulator"
        else:
            if not cuda.is_available():
                raise EngineSkipped("no CUDA device")
            d = cuda.get_current_device()
            name = d.name.decode() if isinstance(d.name, bytes) else str(d.name)
            launch.device_memory(cuda)  # the context, before any job
    except BaseException as e:  # noqa: BLE001 - reported, then the worker ends
        conn.send(("dead", type(e).__name__, launch.one_line(e)))
        return
    conn.send(("up", name, os.getpid()))
    fault = _fault(dev)
    while True:
        try:
            job = conn.recv()
        except EOFError:  # the parent is gone
            return
        if job is None:
            return
        try:
            graph, base, assign, ready = _prepare_job(job, cuda, sim)
        except BaseException as e:  # noqa: BLE001
            conn.send(("error", None, type(e).__name__, launch.one_line(e), ""))
            continue
        conn.send(("ready", ready))
        _run_shards(conn, graph, job["options"], base, assign, fault)
        with contextlib.suppress(Exception):
            launch.device_memory(cuda)  # frees what the last shard left, before the next job
        conn.send(("idle",))


def _prepare_job(job: dict, cuda, sim: bool):
    """The job's graph, its preparation (the run's shard of it, heavy tasks in pieces), each
    task's shard, and the "ready" report; the kernel loaded and launched once."""
    from cumbe import single_device
    from cumbe.prepare import shard_of, split, task_costs, with_estimates
    from mbebench.csr import read_csr

    t0 = time.perf_counter()
    opts, n = job["options"], job["n"]  # checked by the parent (cumbe.spec.run_options)
    kind, what = job["graph"]
    graph = read_csr(what, verify=False) if kind == "path" else what
    base = single_device.prepare_for(graph, opts.variant, opts.side)
    outer = None
    if job["shard"] != sharding.WHOLE:
        base, outer = shard_of(base, job["shard"])
    # a task larger than a device's share goes into pieces: one no larger runs whole in the
    # queue's first shards (largest first), while the other devices take the rest.  A piece
    # costs more than its share of the whole task (the pieces build is slower, each piece
    # runs the task's first level again): 2 H100s lost 5 % on a crown union whose largest
    # task (1/3 of the work) was in pieces for shards of 1/4
    tg = np.asarray(job["targets"], dtype=np.float64)
    if tg.size > 1:
        base = with_estimates(base)
    base = split(base, float(task_costs(base).sum()) / max(int(job["devices"]), 1), tg.size)
    costs = task_costs(base)
    assign = sharding.assign_weighted(costs, tg)
    loads = np.bincount(assign, weights=costs.astype(np.float64), minlength=n)
    single_device.task_needs(base, base.rs)  # numba's first call, if any
    prepare_s = time.perf_counter() - t0
    pieces = bool((base.task_nk > 1).any())
    compile_s = _load_kernel(cuda, opts, sim, pieces)
    if not sim:  # each build's first launch's one-time costs (module load, its cubin stored)
        tiny = _tiny()
        single_device.run(tiny, opts)
        if pieces and opts.switches[0]:
            one = single_device.prepare_for(tiny, opts.variant, opts.side)
            single_device.run(tiny, opts, prepared=replace(
                one, task_k=np.zeros(1, np.int32), task_nk=np.full(1, 2, np.int32)))
    return graph, base, assign, {
        "prepare_s": prepare_s, "compile_s": compile_s, "loads": loads.tolist(),
        "n_tasks": int(base.tasks.size), "n_twins": int(base.n_twins),
        "task_pieces": int(np.count_nonzero(base.task_nk > 1)),
        "side": "left" if base.cand_left else "right",
        "max_task_cost": float(costs.max()) if costs.size else 0.0, "outer": outer}


def _run_shards(conn, graph, opts, base, assign, fault: str | None) -> None:
    """Run the shards the parent hands over, one launch each, until it sends None."""
    from cumbe import single_device
    from cumbe.kept import Kept
    from cumbe.prepare import take

    kept = Kept()  # made by the first shard, reused by the next ones
    while True:
        s = conn.recv()
        if s is None:  # the job is over
            return
        t1 = time.perf_counter()
        try:
            if fault == "exit":
                os._exit(3)
            if fault == "raise":
                raise launch.LaunchError(f"{launch.graph_label(graph)}: test fault ({FAULT_ENV})")
            r = single_device.run(graph, opts, prepared=take(base, np.flatnonzero(assign == s)),
                                  kept=kept)
        except BaseException as e:  # noqa: BLE001 - the parent stops the job
            ours = isinstance(e, (launch.LaunchError, launch.DeviceMemoryError,
                                  launch.DeviceError))
            text = " ".join(str(e).split()) if ours and str(e) else launch.one_line(e)
            conn.send(("error", s, type(e).__name__, text, launch.graph_label(graph)))
            continue  # the parent ends the job (None) or the process
        t2 = time.perf_counter()
        st = r.stats
        conn.send(("done", s, int(r.count), int(r.fingerprint), t1, t2, {
            "kernel_s": float(r.algo_seconds), "tasks": int(st.get("n_tasks", 0)),
            "blocks": st.get("blocks"), "nodes": st.get("nodes"),
            "memory_bytes": st.get("memory_bytes"), "setup_s": st.get("setup_s"),
            "host_s": st.get("host_s")}))
