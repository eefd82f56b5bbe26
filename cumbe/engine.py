"""cuMBE engine: ``run(graph, variant="cuMBE", k=24, threads=128, ...)``.

Host side of :mod:`cumbe.kernel`: preparation (:mod:`cumbe.prepare`), arena and
grid sized to the device memory (:mod:`cumbe.grid`), buffers from one spec
(:mod:`cumbe.buffers`), compile (timed apart), a checked cooperative launch and
the result.  See docs/gpu.md.
"""

from __future__ import annotations

import functools
import os
import sys
import time
import warnings
from dataclasses import replace

import numpy as np

from cumbe import buffers as B
from cumbe import grid as GR
from cumbe import launch as L
from cumbe import layout
from cumbe import progress as PG
from cumbe.prepare import Prepared, choose_side, prepare, shard_of, task_butterflies
from cumbe.spec import SHARDS_PER_DEVICE
from cumbe.variants import ABLATIONS, DENSE
from mbebench import shard as SH
from mbebench.csr import CSRGraph
from mbebench.engine import EngineResult, EngineSkipped

# name -> (reverse scanning, early stop, work stealing), declared once in the spec
VARIANTS = ABLATIONS
# A cap on the device memory a run may use (GiB), e.g. 24 to stand for an RTX 3090 on a
# larger card; the ``device_memory_gib`` parameter takes precedence.
MEMORY_CAP_ENV = "CUMBE_DEVICE_MEMORY_GIB"
# the GIL switch interval while numba's CUDA simulator runs a kernel (seconds)
SIM_SWITCH_S = 0.0005


def _sim_enabled() -> bool:
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def _memory_cap(device_memory_gib) -> int | None:
    if device_memory_gib is None:
        env = os.environ.get(MEMORY_CAP_ENV, "").strip()
        if not env:
            return None
        try:
            device_memory_gib = float(env)
        except ValueError:
            raise ValueError(f"{MEMORY_CAP_ENV} must be a number of GiB, not {env!r}") from None
    if not float(device_memory_gib) >= 0.01:
        raise ValueError(f"device_memory_gib must be at least 0.01, not {device_memory_gib!r}")
    return int(float(device_memory_gib) * 2**30)


@L.named_device_errors
def run(
    graph: CSRGraph,
    variant: str = "cuMBE",
    k: int = 24,
    blocks: int = 0,
    threads: int = 128,
    instrument: bool = False,
    side: str = "auto",
    device_memory_gib: float | None = None,
    eager_steal: int = 0,
    warp_arena_words: int = 0,
    idle_fraction: float = 0.0,
    shard: str = SH.WHOLE,
    devices: int | str | list | None = None,
    shards_per_device: int = SHARDS_PER_DEVICE,
    prepared: Prepared | None = None,
    compact_layout: bool | None = None,
) -> EngineResult:
    """Count and fingerprint the maximal bicliques of ``graph`` on the GPU (or in numba's
    simulator).  The config parameters are declared, with their defaults and limits, in
    :mod:`cumbe.spec`; the pipeline passes all of them.  Raises EngineSkipped without a CUDA
    device (unless NUMBA_ENABLE_CUDASIM=1) and a :mod:`cumbe.launch` error naming the graph
    when the device fails or the run cannot fit its memory.

    ``variant``: cuMBE or an ablation (noRS, noES, noWS); ``k``: work-stealing stages;
    ``threads``: CUDA threads per block (a multiple of 32, at most 512); ``blocks``: 0 =
    the largest cooperative grid that fits the memory; ``instrument``: per-phase clocks;
    ``side``: which side the candidates come from; ``device_memory_gib``: use at most this
    much device memory (default: the ``CUMBE_DEVICE_MEMORY_GIB`` environment variable, else
    all that is free); ``shard`` "i/n": only shard i of n of the first-level tasks
    (:func:`cumbe.prepare.shard_of`; the kernel gets the shorter task list).
    ``devices`` ("all", a count, or device ids; :func:`cumbe.spec.parse_devices`): run on
    those GPUs of the node, ``shards_per_device`` shards each taken from one queue
    (:mod:`cumbe.devices`; the result's time is the wall time of the whole computation);
    None: the current device, one kernel.  ``prepared``: the host preparation of this
    graph for this side and variant (:func:`prepare_for`), e.g. one preparation reused for
    several shards (then ``prepare_s`` is only the shard's selection).  Test
    switches: ``eager_steal`` (1: raise the stop signal after every fetch, so that
    publishing and stealing run on any grid; e >= 2: publish only from level e - 1 down)
    and ``warp_arena_words`` (cap the warp arena, so that tasks run block-wide); tuning:
    ``idle_fraction`` (the share of workers that must run out of work before the busy ones
    publish theirs; 0: the first one); ``compact_layout`` (test switch; None: the compact
    task layout only when memory is short, :func:`cumbe.grid.choose_layout`).
    """
    sim = _sim_enabled()
    label = L.graph_label(graph)  # names the graph in every error
    from numba import cuda  # imported late: the CPU engines never pay for it

    if not sim and not cuda.is_available():
        raise EngineSkipped("no CUDA device")
    from cumbe import kernel as K

    if variant not in VARIANTS:
        raise ValueError(f"unknown cuMBE variant {variant!r} (known: {', '.join(VARIANTS)})")
    rs, es, ws = VARIANTS[variant]
    k = int(k)
    if k < 1:
        raise ValueError("k must be >= 1")
    threads = int(threads)
    if threads % K.WARP or not K.WARP <= threads <= K.MAX_THREADS:
        raise ValueError(f"threads must be a multiple of {K.WARP} between {K.WARP} and "
                         f"{K.MAX_THREADS}, not {threads}")
    cap = _memory_cap(device_memory_gib)
    SH.parse(shard)  # a bad shard fails before the preparation
    PG.interval_s()  # and so does a bad CUMBE_PROGRESS_S
    if devices is not None:
        from cumbe import devices as D

        return D.run(graph, devices, shards_per_device=shards_per_device, shard=shard,
                     params=dict(variant=variant, k=k, blocks=blocks, threads=threads,
                                 instrument=instrument, side=side,
                                 device_memory_gib=device_memory_gib, eager_steal=eager_steal,
                                 warp_arena_words=warp_arena_words,
                                 idle_fraction=idle_fraction, compact_layout=compact_layout))

    t0 = time.perf_counter()
    prep, shard_stats = shard_of(prepare(graph, side, rs) if prepared is None
                                 else _reused(prepared, graph, side, rs), shard)
    compact = bool(compact_layout)
    needs = task_needs(prep, rs, compact)
    _check_task_words(needs, prep, label, variant)
    n_pieces = int(np.count_nonzero(prep.task_nk > 1))
    warps = threads // K.WARP
    stats = {
        "variant": variant, "k": k, "threads": threads, "warps_per_block": warps,
        "side": "left" if prep.cand_left else "right", "n_tasks": int(prep.tasks.size),
        "n_twins": prep.n_twins, "instrumented": bool(instrument), "eager_steal": int(eager_steal),
        "task_pieces": n_pieces,
        "max_task_words": int(needs.max()) if needs.size else 0,
        "max_task_wedges": int(prep.task_wedges.max()) if needs.size else 0,
        **shard_stats,
    }
    if prep.tasks.size == 0:
        stats.update(blocks=0, blocks_requested=int(blocks), device="simulator" if sim else "")
        return EngineResult(0, 0, 0.0, 0.0, stats)
    prep_s = time.perf_counter() - t0

    compile_s = 0.0

    def compiled(compact: bool):
        """The build, compiled (timed apart from the kernel), and its largest grid."""
        nonlocal compile_s
        kern = K.build(rs=rs, es=es, ws=ws, instr=instrument, threads=threads,
                       pieces=n_pieces > 0, compact=compact, dense=variant in DENSE)
        if sim:
            return kern, 1
        sig = tuple(kern.typeof_pyval(x) for x in B.typing_dummies(cuda))
        tc = time.perf_counter()
        ov = kern.compile(sig)
        compile_s += time.perf_counter() - tc
        return kern, int(ov.max_cooperative_grid_blocks(threads))

    kern, max_blocks = compiled(compact)
    dev_name = "simulator"
    if not sim:
        dev = cuda.get_current_device()
        dev_name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        if max_blocks < 1:
            raise L.LaunchError(f"{label}: cuMBE kernel cannot run {threads} threads per block "
                                f"on {dev_name}")
    free, total = L.device_memory(cuda)
    if not np.isfinite(float(free)):  # the simulator has no memory limit
        free = total = 2**40
    blocks_req = int(blocks)
    nb_max = L.grid_blocks(blocks_req, max_blocks, threads, dev_name)
    base = B.Plan(prep.n_u, prep.n_v, int(prep.adjU.size), int(prep.tasks.size), k, nb_max, warps,
                  2)
    budget = GR.budget(free, cap)
    if warp_arena_words:
        # test switch: warp arenas this small, tasks above them run block-wide
        aw = int(warp_arena_words) + (int(warp_arena_words) & 1)
        if aw * warps < int(needs.max()):
            raise ValueError("warp_arena_words x warps must hold the largest task")
        plan = replace(base, arena_words=aw)
        choice = GR.GridChoice(plan, int(np.count_nonzero(needs > aw)), "warp_arena_words",
                               budget, B.nbytes(plan))
    else:
        # computed only when memory is short, and once
        compact_needs = functools.cache(lambda: task_needs(prep, rs, True))
        work = functools.cache(
            lambda: GR.Work(prep.task_wedges + prep.task_deg, task_butterflies(prep)))
        try:
            if compact_layout is None:
                choice, compact = GR.choose_layout(needs, compact_needs, base, nb_max, budget,
                                                   work)
                if compact:
                    choice = replace(choice, reason=f"{choice.reason} (compact task layout)")
                    needs = compact_needs()
                    kern, mb = compiled(True)
                    if mb < max_blocks:  # the other build fits fewer blocks: plan again
                        max_blocks = mb
                        nb_max = L.grid_blocks(blocks_req, max_blocks, threads, dev_name)
                        base = replace(base, blocks=nb_max)
                        choice = GR.choose(needs, base, nb_max, budget)
            else:
                choice = GR.choose(needs, base, nb_max, budget)
        except GR.DoesNotFit as e:
            avail = free if cap is None else min(free, cap)
            raise L.DeviceMemoryError(
                f"{label}: cuMBE needs {e.need} bytes ({e.need / 2**30:.2f} GiB) of device "
                f"memory for {e} (variant {variant}), plus {avail - budget} bytes kept free for the CUDA "
                f"context; only {L._num(avail)} usable ({L._num(free)} free of {L._num(total)}"
                f"{'' if cap is None else f', cap {_gib(cap)} GiB'}); try: a device (or "
                f"--device-memory-gib) with at least {GR.cap_for(e.need) / 2**30:.2f} GiB free, "
                f"or a CPU engine (parmbe)") from None
    plan = choice.plan
    n_wide = int(np.count_nonzero(needs > plan.arena_words))
    context = (f"variant {variant}{', compact layout' if compact else ''}, {plan.blocks} blocks "
               f"x {warps} warps, {plan.arena_words} arena words a warp, {n_wide} block-wide "
               f"tasks, memory cap {'none' if cap is None else f'{_gib(cap)} GiB'}")
    L.check_memory(choice.bytes, free if cap is None else min(free, cap), total, label,
                   context)

    # block-wide tasks first (largest need first), then the warp tasks in cost order
    big = needs > plan.arena_words
    order = np.concatenate([np.flatnonzero(big)[np.argsort(-needs[big], kind="stable")],
                            np.flatnonzero(~big)])
    tasks = prep.tasks[order].astype(np.int32)
    task_piece = np.stack([prep.task_k[order], prep.task_nk[order]], axis=1).astype(np.int32)
    nt0 = int(big.sum())
    prm = np.zeros(K.NPARAMS, np.int64)
    prm[K.P_NU] = prep.n_u
    prm[K.P_K] = k
    prm[K.P_AW] = plan.arena_words
    prm[K.P_HALF] = plan.half_words
    prm[K.P_NT0] = nt0
    prm[K.P_NT1] = tasks.size - nt0
    prm[K.P_CANDLEFT] = 1 if prep.cand_left else 0
    prm[K.P_EAGER] = int(eager_steal)
    prm[K.P_NWK] = plan.workers
    if not 0.0 <= float(idle_fraction) < 1.0:
        raise ValueError("idle_fraction must be in [0, 1)")
    prm[K.P_IDLE] = int(round(float(idle_fraction) * 1000))
    host = dict(offU=prep.offU, adjU=prep.adjU, offV=prep.offV, adjV=prep.adjV, orig=prep.orig,
                tasks=tasks, task_piece=task_piece, prm=prm)
    arrays = B.allocate(plan, host, cuda)
    setup_s = time.perf_counter() - t0 - compile_s
    progress = PG.Progress(PG.device_reader(arrays["prog"], cuda, sim), tasks.size,
                           int((prep.task_wedges + prep.task_deg).sum()), label)
    if sim:
        K.SIM_WARPS.reset()
    switch = sys.getswitchinterval()
    with warnings.catch_warnings():
        if sim:  # the simulator runs the uint64 hashes as numpy scalars, which wrap on purpose
            warnings.filterwarnings("ignore", r"overflow encountered in scalar", RuntimeWarning)
            # its threads (one per CUDA thread) busy-wait at barriers and for each other's
            # flags: a short GIL switch interval hands the GIL on sooner (crown S_6 on one
            # block of 32: 79 s at the default 5 ms, 15 s at 0.5 ms)
            sys.setswitchinterval(min(switch, SIM_SWITCH_S))
        try:
            kernel_s = L.checked_launch(kern, plan.blocks, threads, B.args(arrays), cuda=cuda,
                                        what=label, device=dev_name, events=not sim,
                                        context=context, progress=progress)
        finally:
            sys.setswitchinterval(switch)
    res = arrays["res"].copy_to_host()
    fp = arrays["res_fp"].copy_to_host()
    err = arrays["err"].copy_to_host()
    if err[0] != 0:
        raise L.LaunchError(f"{label}: cuMBE kernel reported an error: "
                            f"{K.ERRORS.get(int(err[0]), f'kernel error {int(err[0])}')}; run: "
                            f"{context}; try: {L.FAULT_HINT}")
    L.check_ran(int(res[2]), int(tasks.size), label)
    stats.update(
        device=dev_name, blocks=int(plan.blocks), blocks_requested=blocks_req,
        max_cooperative_blocks=int(max_blocks), blocks_clamped=bool(plan.blocks < max_blocks),
        grid_reason=choice.reason, layout="compact" if compact else "plain",
        max_task_words_run=int(needs.max()), memory_bytes=int(choice.bytes),
        memory_budget_bytes=int(choice.budget_bytes),
        memory_cap_bytes=None if cap is None else int(cap), device_free_bytes=int(free),
        arena_words_per_warp=int(plan.arena_words), block_tasks=nt0,
        kernel_s=kernel_s, compile_s=compile_s, setup_s=setup_s, prepare_s=prep_s,
        nodes=int(res[1]), tasks_run=int(res[2]), block_tasks_run=int(res[3]),
        progress_lines=progress.lines,
        progress_end=progress.end(arrays["prog"].copy_to_host().sum(axis=0)),
    )
    if instrument:
        ph = arrays["ph_out"].copy_to_host()
        tasks_w = arrays["tasks_out"].copy_to_host()
        hz = 1e9 if sim else _clock_hz(cuda)  # simulator: perf_counter_ns stands in for cycles
        stats["clock_hz"] = hz
        totals = ph[:, K.NPH].astype(np.float64)
        idle = ph[:, K.PH_IDLE].astype(np.float64)
        stats["worker"] = "warp"
        stats["worker_busy_s"] = [float(v) for v in (totals - idle) / hz]
        stats["worker_tasks"] = [int(v) for v in tasks_w]
        phases = {name: float(ph[:, i].sum() / hz) for i, name in enumerate(K.PHASES)}
        phases["other"] += float(idle.sum() / hz)
        # A warp that runs out of work leaves the kernel and stops counting, but its slot
        # stays idle until the last one ends; the paper counts that as "others".
        tail = max(0.0, plan.workers * kernel_s - sum(phases.values()))
        phases["other"] += tail
        stats["tail_idle_s"] = tail
        stats["phases_s"] = phases
    return EngineResult(int(res[0]), int(fp[0]), kernel_s, compile_s, stats)


def _clock_hz(cuda) -> float:
    return float(cuda.get_current_device().CLOCK_RATE) * 1e3  # kHz -> Hz


def prepare_for(graph: CSRGraph, variant: str = "cuMBE", side: str = "auto") -> Prepared:
    """The host preparation :func:`run` makes for ``variant`` and ``side``, to pass back
    as ``prepared`` (one preparation for several shards of one graph)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown cuMBE variant {variant!r} (known: {', '.join(VARIANTS)})")
    return prepare(graph, side, VARIANTS[variant][0])


def _reused(prep: Prepared, graph: CSRGraph, side: str, rs: bool) -> Prepared:
    if (prep.rs != rs or prep.cand_left != choose_side(graph, side)
            or (prep.n_u, prep.n_v) != ((graph.n_left, graph.n_right) if prep.cand_left
                                        else (graph.n_right, graph.n_left))):
        raise ValueError("prepared is not this graph's preparation for this side and variant "
                         "(cumbe.engine.prepare_for)")
    return prep


def task_needs(prep, rs: bool, compact: bool = False) -> np.ndarray:
    """Arena words of every first-level task of ``prep`` (what the grid is sized by), in
    the plain or the compact layout."""
    return layout.needs(prep.task_deg, prep.task_wedges, prep.n_higher, prep.task_dv, rs,
                        compact)


def _check_task_words(needs: np.ndarray, prep: Prepared, label: str, variant: str) -> None:
    """A task past the kernel's 32-bit offsets would be laid out wrong: refuse the graph."""
    if needs.size and int(needs.max()) > layout.MAX_NEED:
        i = int(np.argmax(needs))
        side = "left" if prep.cand_left else "right"
        raise L.LaunchError(
            f"{label}: the task of {side} vertex {int(prep.orig[prep.tasks[i]])} needs "
            f"{int(needs[i])} arena words ({int(prep.task_wedges[i])} wedges), more than cuMBE's "
            f"32-bit task offsets address ({layout.MAX_NEED}; variant {variant}); try: a CPU "
            f"engine (parmbe), or the other side as candidates (side)")


def _gib(x: int) -> str:
    return f"{x / 2**30:.2f}"


def smallest_memory_gib(graph: CSRGraph, variant: str = "cuMBE", threads: int = 128,
                        k: int = 24, side: str = "auto", prepared: Prepared | None = None) -> float:
    """The smallest ``device_memory_gib`` with which ``graph`` runs (one block, the
    context's margin included): what a card needs free.  Host only, no device.
    ``prepared``: this graph's preparation (:func:`prepare_for`), as in :func:`run`."""
    from cumbe import kernel as K

    rs = VARIANTS[variant][0]
    prep = prepare(graph, side, rs) if prepared is None else _reused(prepared, graph, side, rs)
    if prep.tasks.size == 0:
        return 0.0
    needs = task_needs(prep, rs)
    _check_task_words(needs, prep, L.graph_label(graph), variant)
    base = B.Plan(prep.n_u, prep.n_v, int(prep.adjU.size), int(prep.tasks.size), int(k), 1,
                  int(threads) // K.WARP, 2)
    # the compact layout (cumbe.grid.choose_layout) fits where the plain one does not
    return GR.cap_for(min(GR.smallest_bytes(needs, base),
                          GR.smallest_bytes(task_needs(prep, rs, True), base))) / 2**30
