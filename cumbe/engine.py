"""cuMBE engine: ``run(graph, variant="cuMBE", k=48, threads=128, ...)``.

The parameters are checked once, against the spec (:func:`cumbe.spec.run_options`); then
one run on the current device (:mod:`cumbe.single_device`: prepare, plan the grid and
layout, launch, collect) or, with ``devices``, shards of it on several GPUs of the node
(:mod:`cumbe.devices`).  See docs/gpu.md.
"""

from __future__ import annotations

from cumbe import launch, single_device
from cumbe import progress as run_progress
from cumbe.prepare import Prepared, prepare_cached
from cumbe.single_device import SIM_SWITCH_S, check_task_words, prepare_for, reused, task_needs
from cumbe.spec import HUB_DIVISOR, K_STAGES, MEMORY_CAP_ENV, SHARDS_PER_DEVICE
from cumbe.spec import parse_devices, run_options
from cumbe.variants import ABLATIONS
from mbebench import shard as sharding
from mbebench.csr import CSRGraph
from mbebench.engine import EngineResult

# name -> (reverse scanning, early stop, work stealing), declared once in the spec
VARIANTS = ABLATIONS
__all__ = ["MEMORY_CAP_ENV", "SIM_SWITCH_S", "VARIANTS", "prepare_for", "run",
           "smallest_memory_gib", "task_needs"]


def run(
    graph: CSRGraph,
    variant: str = "cuMBE",
    k: int = K_STAGES,
    blocks: int = 0,
    threads: int = 128,
    blocks_per_sm: int = 0,
    instrument: bool = False,
    side: str = "auto",
    device_memory_gib: float | None = None,
    eager_steal: int = 0,
    warp_arena_words: int = 0,
    idle_fraction: float | None = None,
    shard: str = sharding.WHOLE,
    devices: int | str | list | None = None,
    shards_per_device: int = SHARDS_PER_DEVICE,
    prepared: Prepared | None = None,
    compact_layout: bool | None = None,
    rounds: bool = False,
    hub_divisor: int = HUB_DIVISOR,
) -> EngineResult:
    """Count and fingerprint the maximal bicliques of ``graph`` on the GPU (or in numba's
    simulator).  The config parameters are declared, with their defaults and limits, in
    :mod:`cumbe.spec`; the pipeline passes all of them.  Raises EngineSkipped without a CUDA
    device (unless NUMBA_ENABLE_CUDASIM=1) and a :mod:`cumbe.launch` error naming the graph
    when the device fails or the run cannot fit its memory.

    ``variant``: cuMBE or an ablation (noRS, noES, noWS); ``k``: work-stealing stages;
    ``threads``: CUDA threads per block (a multiple of 32, at most 512); ``blocks``: 0 =
    the largest cooperative grid that fits the memory; ``blocks_per_sm``: the blocks an SM
    the kernel is compiled for (0: 768 threads an SM); ``instrument``: per-phase clocks;
    ``side``: which side the candidates come from; ``device_memory_gib``: use at most this
    much device memory (default: the ``MBEBENCH_DEVICE_MEMORY_GIB`` environment variable, else
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
    publish theirs; 0: the first one; None: :data:`cumbe.spec.IDLE_FRACTION_ROUNDS` with
    rounds, else 0); ``compact_layout`` (test switch; None: the compact
    task layout only when memory is short, :func:`cumbe.grid.choose_layout`).  ``rounds``:
    the maximality check in rounds (R' out of the running intersection, several lists a
    round; :mod:`cumbe.kernel.maximality`) instead of the paper's; reverse-scanning variants
    only (noRS scans its Q); ``hub_divisor``: with rounds, the hub rows' size bound
    (:mod:`cumbe.hubs`; 0: none).
    """
    opts = run_options(variant=variant, k=k, blocks=blocks, threads=threads,
                       blocks_per_sm=blocks_per_sm, instrument=instrument, side=side, device_memory_gib=device_memory_gib,
                       eager_steal=eager_steal, warp_arena_words=warp_arena_words,
                       idle_fraction=idle_fraction, compact_layout=compact_layout, shard=shard,
                       rounds=rounds, hub_divisor=hub_divisor)
    run_progress.interval_s()  # a bad MBEBENCH_CUMBE_PROGRESS_S fails before the preparation
    if parse_devices(devices) is not None:
        from cumbe import devices as several

        return several.run(graph, devices, shards_per_device=shards_per_device, shard=shard,
                           params=opts)
    return single_device.run(graph, opts, prepared)


def smallest_memory_gib(graph: CSRGraph, variant: str = "cuMBE", threads: int = 128,
                        k: int = K_STAGES, side: str = "auto",
                        prepared: Prepared | None = None) -> float:
    """The smallest ``device_memory_gib`` with which ``graph`` runs (one block, the
    context's margin included): what a card needs free.  Host only, no device.
    ``prepared``: this graph's preparation (:func:`prepare_for`), as in :func:`run`."""
    from cumbe import buffers
    from cumbe import grid as grids
    from cumbe.spec import WARP

    rs = VARIANTS[variant][0]
    prep = (prepare_cached(graph, side, rs) if prepared is None
            else reused(prepared, graph, side, rs))
    if prep.tasks.size == 0:
        return 0.0
    needs = task_needs(prep, rs)
    check_task_words(needs, prep, launch.graph_label(graph), variant)
    base = buffers.Plan(prep.n_u, prep.n_v, int(prep.adjU.size), int(prep.tasks.size), int(k),
                        1, int(threads) // WARP, 2)
    # the compact layout (cumbe.grid.choose_layout) fits where the plain one does not
    return grids.cap_for(min(grids.smallest_bytes(needs, base),
                             grids.smallest_bytes(task_needs(prep, rs, True), base))) / 2**30
