"""One cuMBE run on the current device: the steps of :func:`cumbe.engine.run` without
``devices``, and of every shard a device worker (:mod:`cumbe.device_worker`) runs.

    run(graph, options, prepared=None) -> EngineResult

1. prepare: the host preparation (:mod:`cumbe.prepare`, read back from its cache next to
   the CSR file when it is there), this run's shard of the tasks, their arena needs;
2. plan: the build, its largest cooperative grid, the grid and layout that fit the memory
   (:mod:`cumbe.grid`), hub rows in what they leave;
3. launch: the kernel's inputs, a checked cooperative launch (:mod:`cumbe.launch`);
4. collect: the count, the fingerprint and the row's statistics.

``options`` (:class:`cumbe.spec.RunOptions`) were checked once by the caller.  The host
seconds of every step are in ``stats["host_s"]``.  Raises EngineSkipped without a CUDA
device (unless NUMBA_ENABLE_CUDASIM=1) and a :mod:`cumbe.launch` error naming the graph
when the device fails or the run cannot fit its memory.
"""

from __future__ import annotations

import functools
import sys
import time
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from cumbe import buffers, consts, cubin, driver_start, hubs, launch, layout
from cumbe import grid as grids
from cumbe import progress as run_progress
from cumbe.prepare import Prepared, choose_side, prepare_cached, shard_of, task_butterflies
from cumbe.spec import RunOptions
from cumbe.variants import ABLATIONS
from mbebench import envvars
from mbebench import shard as sharding
from mbebench.csr import CSRGraph
from mbebench.engine import EngineResult, EngineSkipped

# the GIL switch interval while numba's CUDA simulator runs a kernel (seconds)
SIM_SWITCH_S = 0.0005

# numba's path: (the build, its largest cooperative grid) of every build this process loaded,
# by (build, device); the build is held so that its id stays its own
_LOADED: dict = {}


sim_enabled = envvars.simulating  # (tests replace it)


def prepare_for(graph: CSRGraph, variant: str = "cuMBE", side: str = "auto") -> Prepared:
    """The host preparation :func:`run` makes for ``variant`` and ``side``, to pass back
    as ``prepared`` (one preparation for several shards of one graph)."""
    if variant not in ABLATIONS:
        raise ValueError(f"unknown cuMBE variant {variant!r} (known: {', '.join(ABLATIONS)})")
    return prepare_cached(graph, side, ABLATIONS[variant][0])


def reused(prep: Prepared, graph: CSRGraph, side: str, rs: bool) -> Prepared:
    """``prep`` if it is ``graph``'s preparation for this side and variant, else ValueError."""
    if (prep.rs != rs or prep.cand_left != choose_side(graph, side)
            or (prep.n_u, prep.n_v) != ((graph.n_left, graph.n_right) if prep.cand_left
                                        else (graph.n_right, graph.n_left))):
        raise ValueError("prepared is not this graph's preparation for this side and variant "
                         "(cumbe.engine.prepare_for)")
    return prep


def task_needs(prep, rs: bool, compact: bool = False) -> np.ndarray:
    """Arena words of every first-level task of ``prep`` (what the grid is sized by), in
    the plain or the compact layout (the plain one read back from the preparation's cache
    when it holds it, :func:`cumbe.prepare.prepare_cached`)."""
    if not compact and prep.needs is not None:
        return prep.needs
    return layout.needs(prep.task_deg, prep.task_wedges, prep.n_higher, prep.task_dv, rs,
                        compact)


def check_task_words(needs: np.ndarray, prep: Prepared, label: str, variant: str) -> None:
    """A task past the kernel's 32-bit offsets would be laid out wrong, and a neighbour's
    list past them searched wrong (the maximality check's positions in a list are 32-bit):
    refuse the graph."""
    longest = int(prep.task_dv.max()) if prep.task_dv.size else 0
    if longest > layout.MAX_NEED:
        side = "right" if prep.cand_left else "left"
        raise launch.LaunchError(
            f"{label}: a {side} vertex has {longest} neighbours, more than cuMBE's 32-bit "
            f"positions in a list address ({layout.MAX_NEED}; variant {variant}); try: a CPU "
            f"engine (parmbe)")
    if needs.size and int(needs.max()) > layout.MAX_NEED:
        i = int(np.argmax(needs))
        side = "left" if prep.cand_left else "right"
        raise launch.LaunchError(
            f"{label}: the task of {side} vertex {int(prep.orig[prep.tasks[i]])} needs "
            f"{int(needs[i])} arena words ({int(prep.task_wedges[i])} wedges), more than cuMBE's "
            f"32-bit task offsets address ({layout.MAX_NEED}; variant {variant}); try: a CPU "
            f"engine (parmbe), or the other side as candidates (side)")


def gib(x: int) -> str:
    return f"{x / 2**30:.2f}"


@dataclass
class _Run:
    """What the steps of one run hand on: the options, the device, the prepared tasks, and
    the host seconds of each step (``host_s`` in the stats)."""

    graph: CSRGraph
    opts: RunOptions
    label: str
    sim: bool
    cuda: Any
    # cumbe.kernel, imported late: the CPU engines never pay for numba.cuda; or, launching
    # a cached cubin (cuda: a cumbe.cubin.Driver), cumbe.consts, the numbering alone
    kernels: Any
    host_s: dict = field(default_factory=dict)
    compile_s: float = 0.0
    dev_name: str = "simulator"
    launch_path: str = "numba"  # or "cubin" (cumbe.cubin), in the stats
    kept: Any = None  # cumbe.kept.Kept, or None: this run allocates its own

    def timed(self, name: str, t0: float) -> float:
        now = time.perf_counter()
        self.host_s[name] = self.host_s.get(name, 0.0) + now - t0
        return now


@launch.named_device_errors
def run(graph: CSRGraph, opts: RunOptions | None = None,
        prepared: Prepared | None = None, kept=None) -> EngineResult:
    """Count and fingerprint the maximal bicliques of ``graph`` (the tasks of
    ``opts.shard``) on the current device; ``prepared``: this graph's preparation
    (:func:`prepare_for`), e.g. one for several shards (``prepare_s`` is then only the
    shard's selection); ``kept`` (:class:`cumbe.kept.Kept`): the device buffers, pinned
    buffers, streams and events kept across the shards of one preparation."""
    opts = opts or RunOptions()
    sim = sim_enabled()
    state = _Run(graph, opts, launch.graph_label(graph), sim, None, consts, kept=kept)
    # the driver starting in a thread (python -m cumbe run): the host preparation meanwhile;
    # else the device first, so that a machine without one is told so before any work
    early = not sim and driver_start.pending()
    if early:
        prep, needs, stats = _prepare(state, prepared)
    t0 = time.perf_counter()
    # the driver API, if this run's kernel turns out to be cached (_compiled decides)
    driver = None if sim else cubin.driver_for_run()
    state.cuda, state.kernels = (driver, consts) if driver is not None else _numba_cuda(sim)
    state.timed("cuda_import", t0)
    if not early:
        prep, needs, stats = _prepare(state, prepared)
    if prep.tasks.size == 0:
        stats.update(blocks=0, blocks_requested=opts.blocks,
                     device="simulator" if sim else "", host_s=state.host_s)
        return EngineResult(0, 0, 0.0, 0.0, stats)
    kern, planned = _plan(state, prep, needs)
    host, context = _kernel_inputs(state, prep, planned)
    arrays, kernel_s, progress = _launch(state, kern, planned, host, context, prep)
    return _collect(state, arrays, kernel_s, progress, planned, stats, context)


def _numba_cuda(sim: bool) -> tuple:
    """numba's ``cuda`` module and the kernel's package (numba's CUDA target starting)."""
    from numba import cuda

    if not sim and not cuda.is_available():
        raise EngineSkipped("no CUDA device")
    from cumbe import kernel as kernels

    return cuda, kernels


def _prepare(state: _Run, prepared: Prepared | None) -> tuple[Prepared, np.ndarray, dict]:
    """The prepared tasks of the run's shard, their arena needs, the stats that follow."""
    opts, t0 = state.opts, time.perf_counter()
    rs = opts.switches[0]
    kept = state.kept
    if prepared is None:
        base = prepare_cached(state.graph, opts.side, rs)
    elif kept is not None and kept.prepared is prepared.offU:
        base = prepared  # a shard of the preparation this job's first shard checked
    else:
        base = reused(prepared, state.graph, opts.side, rs)
        if kept is not None:
            kept.prepared = prepared.offU
    prep, shard_stats = shard_of(base, opts.shard)
    t0 = state.timed("prepare", t0)
    needs = task_needs(prep, rs, bool(opts.compact_layout))
    check_task_words(needs, prep, state.label, opts.variant)
    state.timed("task_needs", t0)
    stats = {
        "variant": opts.variant, "k": opts.k, "threads": opts.threads,
        "blocks_per_sm": opts.blocks_per_sm,
        "warps_per_block": opts.threads // consts.WARP,
        "side": "left" if prep.cand_left else "right", "n_tasks": int(prep.tasks.size),
        "n_twins": prep.n_twins, "instrumented": opts.instrument,
        "eager_steal": opts.eager_steal, "idle_fraction": opts.idle_fraction,
        "task_pieces": int(np.count_nonzero(prep.task_nk > 1)),
        "max_task_words": int(needs.max()) if needs.size else 0,
        "max_task_wedges": int(prep.task_wedges.max()) if needs.size else 0,
        **shard_stats,
    }
    return prep, needs, stats


def build_switches(opts: RunOptions, prep: Prepared, compact: bool, hubs: bool = True) -> dict:
    """The kernel build a run launches (:func:`cumbe.kernel.build`'s arguments, and the cubin
    cache's key); ``hubs`` False: the run has no hub rows (:func:`_plan`)."""
    rs, es, ws = opts.switches
    build = dict(rs=rs, es=es, ws=ws, instr=opts.instrument, threads=opts.threads,
                 pieces=bool((prep.task_nk > 1).any()) and rs, compact=compact)
    if opts.blocks_per_sm:  # (absent from the default build's key: its cached cubins stay)
        build["blocks_per_sm"] = opts.blocks_per_sm
    if opts.rounds and rs:  # (the same: absent unless asked for)
        build["rounds"] = True
        if hubs and opts.hub_divisor:
            build["hubs"] = True
    return build


def _compiled(state: _Run, prep: Prepared, compact: bool, hubs: bool = True):
    """The build (timed apart from the kernel) and its largest cooperative grid: its cubin
    launched through the driver API when the cache holds it (:mod:`cumbe.cubin`), else
    compiled or loaded from numba's cache (and its cubin stored for the next run)."""
    opts = state.opts
    t0 = time.perf_counter()
    build = build_switches(opts, prep, compact, hubs)
    if isinstance(state.cuda, cubin.Driver):
        kern = state.cuda.kernel(build)
        if kern is not None:
            blocks = kern.max_cooperative_grid_blocks(opts.threads, state.cuda.device)
            state.compile_s += time.perf_counter() - t0
            state.launch_path = "cubin"
            return kern, blocks
        # nothing is allocated yet: the rest of the run is numba's (on the same context)
        cubin.note(f"no cached cubin for {build}: the numba path")
        state.cuda, state.kernels = _numba_cuda(False)
    kern = state.kernels.build(**build)
    if state.sim:
        return kern, 1
    dev = state.cuda.get_current_device()
    key = (id(kern), dev.id)  # (the build fixes its threads)
    if key not in _LOADED:
        # once a process: the signature's dummies are device allocations, and the cubin's
        # store reads the cache back (a device worker runs many shards)
        sig = tuple(kern.typeof_pyval(x) for x in buffers.typing_dummies(state.cuda))
        overload = kern.compile(sig)
        _LOADED[key] = (kern, int(overload.max_cooperative_grid_blocks(opts.threads)))
        if cubin.enabled():
            try:  # a cache for the next run: it must never fail this one
                cubin.store(build, dev.compute_capability, overload)
            except Exception as e:  # noqa: BLE001
                cubin.note(f"cubin cache: not stored ({launch.one_line(e)})")
    blocks = _LOADED[key][1]
    state.compile_s += time.perf_counter() - t0
    state.launch_path = "numba"
    return kern, blocks


@dataclass
class _Planned:
    """The grid and layout chosen for the run, and the build that runs them."""

    choice: Any  # cumbe.grid.GridChoice
    compact: bool
    max_blocks: int
    needs: np.ndarray  # arena words of every task in the chosen layout
    free: int = 0  # device memory free, total (bytes) when the plan was made
    total: int = 0
    hubs: np.ndarray = field(default_factory=lambda: hubs.NONE)  # rounds: cumbe.hubs


def _plan(state: _Run, prep: Prepared, needs: np.ndarray):
    """The build and the grid and layout that fit the device memory (and the cap)."""
    opts = state.opts
    compact = bool(opts.compact_layout)
    t0 = time.perf_counter()
    free, total = launch.device_memory(state.cuda)
    if not np.isfinite(float(free)):  # the simulator has no memory limit
        free = total = 2**40
    elif state.kept is not None:  # what this run's buffers may reuse is its own
        free += state.kept.held_bytes()
    state.timed("memory_query", t0)
    budget = grids.budget(free, opts.memory_cap)
    warps = opts.threads // consts.WARP
    one_block = buffers.Plan(prep.n_u, prep.n_v, int(prep.adjU.size), int(prep.tasks.size),
                             opts.k, 1, warps, 2)
    # a run that cannot have hub rows (a tight cap) never compiles the build that reads them
    rows = hubs.wanted(opts) and hubs.may_have_rows(
        prep, grids.smallest_bytes(needs, one_block), budget, opts.hub_divisor)
    kern, max_blocks = _compiled(state, prep, compact, hubs=rows)
    t0 = time.perf_counter()
    if not state.sim:
        dev = state.cuda.get_current_device()
        state.dev_name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        if max_blocks < 1:
            raise launch.LaunchError(f"{state.label}: cuMBE kernel cannot run {opts.threads} "
                                     f"threads per block on {state.dev_name}")
    nb_max = launch.grid_blocks(opts.blocks, max_blocks, opts.threads, state.dev_name)
    base = replace(one_block, blocks=nb_max)
    try:
        if opts.warp_arena_words:
            planned = _forced_arena(opts, base, budget, needs, warps, max_blocks)
        elif opts.compact_layout is None:
            planned, kern = _choose_layout(state, prep, needs, base, budget, kern, max_blocks,
                                           rows)
        else:
            planned = _Planned(grids.choose(needs, base, nb_max, budget), compact, max_blocks,
                               needs)
    except grids.DoesNotFit as e:
        raise _does_not_fit(state, e, free, total, budget) from None
    t0 = state.timed("grid", t0)
    if rows:  # in the memory the chosen grid leaves
        table, choice = hubs.for_grid(prep, planned.choice, opts.hub_divisor)
        planned = replace(planned, hubs=table, choice=choice)
    state.timed("hub_table", t0)
    if rows and planned.hubs.size == 1:  # none after all: the rounds build (consts.Build.hubs)
        kern, blocks = _compiled(state, prep, planned.compact, hubs=False)
        if blocks < planned.choice.plan.blocks:  # (the same registers: not seen)
            nb = launch.grid_blocks(opts.blocks, blocks, opts.threads, state.dev_name)
            planned = replace(planned, max_blocks=blocks, choice=grids.choose(
                planned.needs, replace(base, blocks=nb), nb, budget))
    return kern, replace(planned, free=free, total=total)


def _forced_arena(opts: RunOptions, base, budget: int, needs: np.ndarray, warps: int,
                  max_blocks: int):
    """Test switch: warp arenas this small, tasks above them run block-wide."""
    aw = opts.warp_arena_words + (opts.warp_arena_words & 1)
    if aw * warps < int(needs.max()):
        raise ValueError("warp_arena_words x warps must hold the largest task")
    plan = replace(base, arena_words=aw)
    choice = grids.GridChoice(plan, int(np.count_nonzero(needs > aw)), "warp_arena_words",
                              budget, buffers.nbytes(plan))
    # the build and the needs are already in the layout the switch asked for
    return _Planned(choice, bool(opts.compact_layout), max_blocks, needs)


def _choose_layout(state: _Run, prep: Prepared, needs, base, budget, kern, max_blocks, rows):
    """:func:`cumbe.grid.choose_layout`; the compact build (``rows``: with hub rows) when it
    chose that layout (the grid planned again when that build fits fewer blocks)."""
    rs = state.opts.switches[0]
    # computed only when memory is short, and once
    compact_needs = functools.cache(lambda: task_needs(prep, rs, True))
    work = functools.cache(
        lambda: grids.Work(prep.task_wedges + prep.task_deg, task_butterflies(prep)))
    choice, compact = grids.choose_layout(needs, compact_needs, base, base.blocks, budget, work)
    if not compact:
        return _Planned(choice, False, max_blocks, needs), kern
    choice = replace(choice, reason=f"{choice.reason} (compact task layout)")
    needs = compact_needs()
    kern, blocks = _compiled(state, prep, True, hubs=rows)
    if blocks < max_blocks:  # the other build fits fewer blocks: plan again
        max_blocks = blocks
        nb_max = launch.grid_blocks(state.opts.blocks, max_blocks, state.opts.threads,
                                    state.dev_name)
        choice = grids.choose(needs, replace(base, blocks=nb_max), nb_max, budget)
    return _Planned(choice, True, max_blocks, needs), kern


def _does_not_fit(state: _Run, e, free, total, budget: int) -> launch.DeviceMemoryError:
    cap = state.opts.memory_cap
    avail = free if cap is None else min(free, cap)
    return launch.DeviceMemoryError(
        f"{state.label}: cuMBE needs {e.need} bytes ({e.need / 2**30:.2f} GiB) of device "
        f"memory for {e} (variant {state.opts.variant}), plus {avail - budget} bytes kept free "
        f"for the CUDA context; only {launch._num(avail)} usable ({launch._num(free)} free of "
        f"{launch._num(total)}{'' if cap is None else f', cap {gib(cap)} GiB'}); try: a "
        f"device (or --device-memory-gib) with at least {grids.cap_for(e.need) / 2**30:.2f} "
        f"GiB free, or a CPU engine (parmbe)")


def _kernel_inputs(state: _Run, prep: Prepared, planned: _Planned):
    """The kernel's host arrays: block-wide tasks first (largest need first), then the warp
    tasks in cost order; and the run's one-line context for error messages."""
    opts, kernels, plan = state.opts, state.kernels, planned.choice.plan
    t0 = time.perf_counter()
    needs = planned.needs
    big = needs > plan.arena_words
    order = np.concatenate([np.flatnonzero(big)[np.argsort(-needs[big], kind="stable")],
                            np.flatnonzero(~big)])
    tasks = prep.tasks[order].astype(np.int32)
    task_piece = np.stack([prep.task_k[order], prep.task_nk[order]], axis=1).astype(np.int32)
    nt0 = int(big.sum())
    prm = np.zeros(kernels.NPARAMS, np.int64)
    prm[kernels.P_NU] = prep.n_u
    prm[kernels.P_K] = opts.k
    prm[kernels.P_AW] = plan.arena_words
    prm[kernels.P_HALF] = plan.half_words
    prm[kernels.P_NT0] = nt0
    prm[kernels.P_NT1] = tasks.size - nt0
    prm[kernels.P_CANDLEFT] = 1 if prep.cand_left else 0
    prm[kernels.P_EAGER] = opts.eager_steal
    prm[kernels.P_NWK] = plan.workers
    prm[kernels.P_IDLE] = int(round(opts.idle_fraction * 1000))
    # task_cost (in launch order) is no kernel buffer: the progress lines read it
    host = dict(offU=prep.offU, adjU=prep.adjU, offV=prep.offV, adjV=prep.adjV, orig=prep.orig,
                tasks=tasks, task_piece=task_piece, prm=prm, hubs=planned.hubs,
                task_cost=(prep.task_wedges + prep.task_deg)[order])
    cap = opts.memory_cap
    context = (f"variant {opts.variant}{', compact layout' if planned.compact else ''}, "
               f"{plan.blocks} blocks x {plan.warps} warps, {plan.arena_words} arena words a "
               f"warp, {nt0} block-wide tasks, memory cap "
               f"{'none' if cap is None else f'{gib(cap)} GiB'}")
    state.timed("kernel_inputs", t0)
    return host, context


def _launch(state: _Run, kern, planned: _Planned, host: dict, context: str, prep: Prepared):
    """Check the memory, copy the inputs, launch and wait (progress lines meanwhile)."""
    cuda, sim, plan = state.cuda, state.sim, planned.choice.plan
    t0 = time.perf_counter()
    free, cap = planned.free, state.opts.memory_cap
    launch.check_memory(planned.choice.bytes, free if cap is None else min(free, cap),
                        planned.total, state.label, context)
    arrays = buffers.allocate(plan, host, cuda, state.kept, planned.choice.budget_bytes)
    # the copies apart from the progress readers' pinned buffers and streams
    t0 = state.timed("copies", t0)
    n_tasks, task_cost = host["tasks"].size, host["task_cost"]
    nt0 = int(host["prm"][state.kernels.P_NT0])
    stealing = run_progress.Stealing(
        run_progress.stealing_reader(arrays["ctl"], arrays["pool_n"], arrays["pool_list"], cuda,
                                     sim, state.kept),
        state.opts.k, (plan.blocks, plan.workers), (nt0, n_tasks - nt0), task_cost)
    progress = run_progress.Progress(
        run_progress.device_reader(arrays["prog"], cuda, sim, state.kept), n_tasks,
        int(task_cost.sum()), state.label, stealing=stealing,
        shard=None if state.opts.shard == sharding.WHOLE else state.opts.shard)
    state.timed("progress_setup", t0)
    if sim:
        state.kernels.SIM_WARPS.reset()
    switch = sys.getswitchinterval()
    with warnings.catch_warnings():
        if sim:  # the simulator runs the uint64 hashes as numpy scalars, which wrap on purpose
            warnings.filterwarnings("ignore", r"overflow encountered in scalar", RuntimeWarning)
            # its threads (one per CUDA thread) busy-wait at barriers and for each other's
            # flags: a short GIL switch interval hands the GIL on sooner (crown S_6 on one
            # block of 32: 79 s at the default 5 ms, 15 s at 0.5 ms)
            sys.setswitchinterval(min(switch, SIM_SWITCH_S))
        try:
            kernel_s = launch.checked_launch(
                kern, plan.blocks, state.opts.threads, buffers.args(arrays), cuda=cuda,
                what=state.label, device=state.dev_name, events=not sim, context=context,
                progress=progress, kept=state.kept)
        finally:
            sys.setswitchinterval(switch)
    return arrays, kernel_s, progress


def _collect(state: _Run, arrays, kernel_s: float, progress, planned: _Planned, stats: dict,
             context: str) -> EngineResult:
    """The count, fingerprint and statistics, after the kernel's own error word."""
    opts, kernels, choice = state.opts, state.kernels, planned.choice
    plan = choice.plan
    t0 = time.perf_counter()
    res = arrays["res"].copy_to_host()
    fp = arrays["res_fp"].copy_to_host()
    err = arrays["err"].copy_to_host()
    if err[0] != 0:
        raise launch.LaunchError(
            f"{state.label}: cuMBE kernel reported an error: "
            f"{kernels.ERRORS.get(int(err[0]), f'kernel error {int(err[0])}')}; run: "
            f"{context}; try: {launch.FAULT_HINT}")
    launch.check_ran(int(res[2]), int(stats["n_tasks"]), state.label)
    cap = opts.memory_cap
    stats.update(
        device=state.dev_name, blocks=int(plan.blocks), blocks_requested=opts.blocks,
        max_cooperative_blocks=int(planned.max_blocks),
        blocks_clamped=bool(plan.blocks < planned.max_blocks), grid_reason=choice.reason,
        layout="compact" if planned.compact else "plain",
        hub_rows=hubs.rows(planned.hubs, plan.n_v),
        max_task_words_run=int(planned.needs.max()), memory_bytes=int(choice.bytes),
        memory_budget_bytes=int(choice.budget_bytes),
        memory_cap_bytes=None if cap is None else int(cap), device_free_bytes=int(planned.free),
        arena_words_per_warp=int(plan.arena_words),
        block_tasks=int(np.count_nonzero(planned.needs > plan.arena_words)),
        kernel_s=kernel_s, compile_s=state.compile_s, launch=state.launch_path,
        prepare_s=state.host_s.get("prepare", 0.0),
        nodes=int(res[1]), tasks_run=int(res[2]), block_tasks_run=int(res[3]),
        progress_lines=progress.lines,
        progress_end=progress.end(arrays["prog"].copy_to_host().sum(axis=0)),
    )
    if opts.instrument:
        stats.update(_phase_stats(state, arrays, kernel_s, plan.workers))
    state.timed("collect", t0)
    # host seconds of the run beside its kernel (the build's load is compile_s)
    stats["setup_s"] = float(sum(state.host_s.values()))
    stats["host_s"] = dict(state.host_s)
    return EngineResult(int(res[0]), int(fp[0]), kernel_s, state.compile_s, stats)


def _phase_stats(state: _Run, arrays, kernel_s: float, workers: int) -> dict:
    """The instrumented build's per-warp busy time and per-phase seconds."""
    kernels = state.kernels
    ph = arrays["ph_out"].copy_to_host()
    tasks_w = arrays["tasks_out"].copy_to_host()
    # simulator: perf_counter_ns stands in for cycles
    hz = 1e9 if state.sim else clock_hz(state.cuda)
    totals = ph[:, kernels.NPH].astype(np.float64)
    idle = ph[:, kernels.PH_IDLE].astype(np.float64)
    phases = {name: float(ph[:, i].sum() / hz) for i, name in enumerate(kernels.PHASES)}
    phases["other"] += float(idle.sum() / hz)
    # A warp that runs out of work leaves the kernel and stops counting, but its slot
    # stays idle until the last one ends; the paper counts that as "others".
    tail = max(0.0, workers * kernel_s - sum(phases.values()))
    phases["other"] += tail
    return {"clock_hz": hz, "worker": "warp",
            "worker_busy_s": [float(v) for v in (totals - idle) / hz],
            "worker_tasks": [int(v) for v in tasks_w], "tail_idle_s": tail, "phases_s": phases}


def clock_hz(cuda) -> float:
    return float(cuda.get_current_device().CLOCK_RATE) * 1e3  # kHz -> Hz
