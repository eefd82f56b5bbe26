"""cuMBE's engine spec: its parameters, their defaults and limits, and its variants.

The only place they are written; the config schema, the run plan, the CLI
(``python -m cumbe``) and the self-check take them from here.  Imports nothing
heavy (no numba): the Snakefile reads it on every start.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from mbebench import envvars
from mbebench.side import SIDES, side_param
from mbebench.spec import SHARD, EngineSpec, Param

from cumbe.variants import ABLATIONS, VARIANTS

WARP = 32
MAX_BLOCKS_PER_SM = 32  # and 2,048 threads an SM (sm_80 to sm_90)
MAX_THREADS_PER_SM = 2048
# ``devices``: shards per device of a run on several GPUs, halving in size (cumbe.devices):
# 8 launches a device, the last two 1/128 of its work each. 4 H100s, crown union with one
# dominant task: 3.71x with 8, 3.61x with 4; tiled movielens-10m_ui: 3.88x and 3.89x
SHARDS_PER_DEVICE = 8
# with rounds: a bit row for a vertex whose row is at most this many times its list
# (cumbe.hubs: 256 is a list of at least 1/8192 of the candidates); on an H200 64 took
# 0.73-1.01x the time of 16 on every graph measured (movielens-10m_ui x20: 0.73x), and 256
# 0.93-1.00x the time of 64 (youtube-groupmemberships x10: 0.93x; planted-xl-e2.28: 0.97x)
HUB_DIVISOR = 256
# work-stealing stages: the last runs to the end with no stealing, so too few leave the dense
# grades' tails on a few warps (k=12: 3.3x planted-xl-e2.3's time).  On one H100 (2026-12-06)
# 48 took 0.96-0.97x the time of 24 on planted-xl-e2.28 (two calls), 0.98x on e2.3, and
# 0.99-1.01x on the tiles and mirror graphs, the paper's build included; 96 no better than 48
K_STAGES = 48
# with rounds (ours), a work-stealing stage ends once this share of the warps is out of work,
# not the first (the paper's thief, 0, which the paper's build keeps).  One H100, 2026-12-06,
# against 0: 0.91-0.97x on the mirror graphs, 0.97-1.00x on three tiles, crown-22 and
# planted-xl, 1.000x e2.29, 1.004x e2.3, 1.005x e2.28; 0.5: 1.06-1.09x on the dense grades
IDLE_FRACTION_ROUNDS = 0.25
_DEVICES = re.compile(r"^\s*(all|\d+|\d+\s*(,\s*\d+\s*)*,?)\s*$")
# the config schema's form of a devices string (a YAML number is an int; a list is a sweep)
DEVICES_PATTERN = r"^(all|[0-9]+|[0-9]+(,[0-9]+)*,?)$"


def parse_devices(value: Any) -> None | str | int | tuple[int, ...]:
    """The ``devices`` parameter in one form: None (the current device, one kernel, as
    without the parameter), ``"all"``, a count (int >= 1) or a tuple of device ids.

    Accepted: None; ``"all"``; an int count; a string of digits (a count, as
    ``--devices 2``); a comma list ``"0,1"`` or ``"1,"`` (device ids); a list of ids.  A
    ValueError naming the value otherwise."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool):
        pass
    elif isinstance(value, int):
        if value >= 1:
            return value
    elif isinstance(value, str):
        m = _DEVICES.match(value)
        if m:
            text = value.strip()
            if text == "all":
                return "all"
            if "," not in text:
                if int(text) >= 1:
                    return int(text)
            else:
                ids = tuple(int(x) for x in text.split(",") if x.strip())
                if len(set(ids)) == len(ids):
                    return ids
    elif isinstance(value, Sequence) and value and all(
            isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in value):
        ids = tuple(int(x) for x in value)
        if len(set(ids)) == len(ids):
            return ids
    raise ValueError(f"devices must be 'all', a count >= 1, or distinct device ids ('0,1' or "
                     f"a list), not {value!r}")


def visible_gpus() -> int:
    """GPUs this machine shows, without CUDA: CUDA_VISIBLE_DEVICES when set, else the
    NVIDIA driver's /proc entries; 0 when neither says."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return len([x for x in env.split(",") if x.strip() and not x.strip().startswith("-")])
    try:
        return len(os.listdir("/proc/driver/nvidia/gpus"))
    except OSError:
        return 0


def gpus_of(params: Mapping[str, Any]) -> int:
    """GPUs a run with these parameters takes (the pipeline's ``gpu`` resource): 1 for
    the default, the count, the ids listed, or for ``"all"`` the GPUs of the machine
    that makes the plan (at least 1; on a cluster give a count instead)."""
    d = parse_devices(params.get("devices"))
    if d is None:
        return 1
    if d == "all":
        return max(1, visible_gpus())
    return d if isinstance(d, int) else len(d)


SPEC = EngineSpec(
    name="cumbe",
    title="cuMBE",
    entry="cumbe.engine:run",
    doc="cuMBE on the GPU (Numba CUDA, one cooperative kernel). Snakemake gives a cuMBE run "
        "1 CPU and 1 GPU; 'threads' here are CUDA threads per block.",
    variant="variant",
    gpu=True,
    gpus=gpus_of,
    cpus=1,
    simulator_env={"NUMBA_ENABLE_CUDASIM": "1"},
    # the check in rounds is cuMBE's: the ablations stay the paper's algorithm
    skip=lambda p: bool(p.get("rounds")) and p.get("variant") != VARIANTS[0],
    params=(
        Param("variant", str, VARIANTS, choices=VARIANTS, bare=True, key=True,
              aliases=("variants",),
              doc="cuMBE, or an ablation: noRS (no reverse scanning), noES (no early stop), "
                  "noWS (no work stealing)."),
        Param("k", int, K_STAGES, minimum=1,
              doc="Work-stealing stages (the paper's k-level stealing; the paper uses 2)."),
        Param("threads", int, 128, minimum=WARP, maximum=512, multiple_of=WARP,
              doc="CUDA threads per thread block (not CPU threads: a cuMBE run takes 1 CPU)."),
        Param("blocks", int, 0, minimum=0,
              doc="Thread blocks; 0 = the largest cooperative grid (1 in the simulator)."),
        Param("blocks_per_sm", int, 0, minimum=0, maximum=MAX_BLOCKS_PER_SM,
              doc="Thread blocks an SM the kernel is compiled for (its launch bound: more "
                  "blocks, fewer registers a thread); 0 = 768 threads an SM (6 blocks of "
                  "128). On an H200, 8 blocks of 128 were 5-10 % faster on graphs over 0.1 s "
                  "and 4-20 % slower on most under 10 ms (docs/gpu-performance.md). At most "
                  "2048 threads an SM."),
        Param("instrument", bool, (False, True), short="instr", key=True, untimed=True,
              doc="Instrumented build (per-warp busy time and per-phase clocks for the "
                  "plots): it runs once, counts for agreement, and its times are not "
                  "cuMBE's times."),
        Param("rounds", bool, False, short="rounds",
              doc="The maximality check in rounds instead of the paper's (one neighbour list "
                  "of L' a round until the intersection is down to R'): R' taken out of the "
                  "running intersection once at most 32 other vertices are left, then "
                  "several lists a round (a warp lane a vertex and list), and candidates "
                  "looked up in hub bit rows (hub_divisor). Same counts; on an H200 "
                  "0.39x the paper's time on edit-nawiki tiled 8x, 0.59-0.92x on the other "
                  "large graphs, crowns and small graphs measured, 1.00-1.02x on "
                  "dbpedia-occupation (3.4 ms; docs/gpu.md). The default of python -m cumbe "
                  "run; the pipeline runs it beside the paper's check with the cuMBE variant "
                  "only (the ablations keep the paper's check); noRS has no reverse scan to "
                  "run in rounds and refuses it."),
        Param("hub_divisor", int, HUB_DIVISOR, short="hubs", minimum=0,
              doc="With rounds: an other-side vertex whose bit row (a bit per candidate) is at "
                  "most this many times its neighbour list gets one, so that the check "
                  "looks a candidate up with one load instead of a binary search (longest "
                  "lists first, within the larger of the graph's list bytes and 64 MiB and "
                  "the memory the grid leaves); 0 = none. A run with rows for at least 10 % "
                  "of the lookups launches a build of its own (cuMBE-rounds-hubs), any other "
                  "the rounds build. On an H200 64 took 0.73-1.01x the time of 16, and 256 "
                  "0.93-1.00x the time of 64. No effect without rounds."),
        side_param("auto"),
        Param("device_memory_gib", float, None, minimum=0.01, nullable=True,
              doc="Cap on the device memory the run may use, in GiB (e.g. 24 for an RTX "
                  "3090's share on a larger card); null = no cap (the MBEBENCH_DEVICE_MEMORY_GIB "
                  "environment variable may set one); the grid shrinks to fit it."),
        SHARD,
        Param("devices", (int, str), None, nullable=True, minimum=1, pattern=DEVICES_PATTERN,
              doc="GPUs of the node to run on: null = the current device (one kernel); 'all'; "
                  "a count n (the first n); or device ids '0,1'. With devices, the run's "
                  "first-level tasks are split into shards (cost-balanced, largest first) that "
                  "the devices take from one queue; its time is the wall time of the whole "
                  "multi-GPU computation. The run asks Snakemake for that many GPUs."),
        Param("shards_per_device", int, SHARDS_PER_DEVICE, minimum=1,
              doc="With devices (more than one): shards per device in the queue, halving in "
                  "size (8: a half, a quarter, ..., and two 1/128 of a device's share; fewer: "
                  "fewer kernel launches, larger last shards). One device runs one shard."),
    ),
)


# A cap on the device memory a run may use (GiB), e.g. 24 to stand for an RTX 3090 on a
# larger card; the ``device_memory_gib`` parameter takes precedence.
MEMORY_CAP_ENV = "MBEBENCH_DEVICE_MEMORY_GIB"


@dataclass(frozen=True)
class RunOptions:
    """One cuMBE run's parameters, checked (:func:`run_options`): what the single-device
    steps (:mod:`cumbe.single_device`) and the device workers take."""

    variant: str = "cuMBE"
    k: int = K_STAGES
    blocks: int = 0
    threads: int = 128
    blocks_per_sm: int = 0
    instrument: bool = False
    side: str = "auto"
    device_memory_gib: float | None = None
    eager_steal: int = 0
    warp_arena_words: int = 0
    idle_fraction: float = 0.0
    compact_layout: bool | None = None
    shard: str = SHARD.default
    rounds: bool = False
    hub_divisor: int = HUB_DIVISOR
    memory_cap: int | None = None  # bytes: device_memory_gib, else $MBEBENCH_DEVICE_MEMORY_GIB

    @property
    def switches(self) -> tuple[bool, bool, bool]:
        """(reverse scanning, early stop, work stealing) of the variant."""
        return ABLATIONS[self.variant]

    def params(self) -> dict[str, Any]:
        """The keyword arguments of :func:`cumbe.engine.run` that give these options back
        (a device worker's per-shard parameters: no shard, no devices)."""
        out = asdict(self)
        del out["shard"], out["memory_cap"]
        return out


def _limits(name: str, value: Any) -> Any:
    """``value`` checked against the spec's declared limits of ``name`` (choices, minimum,
    maximum, multiple) without jsonschema, which a GPU image may lack."""
    p = SPEC.param(name)
    if value is None and p.nullable:
        return None
    if p.choices and value not in p.choices:
        raise ValueError(f"{name} must be one of {', '.join(map(str, p.choices))}, not {value!r}")
    if p.type in (int, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name} must be a number, not {value!r}")
        if p.type is int and value != int(value):
            raise ValueError(f"{name} must be an integer, not {value!r}")
        value = p.type(value)
        low = "" if p.minimum is None else f" >= {p.minimum:g}"
        high = "" if p.maximum is None else f" <= {p.maximum:g}"
        if (not math.isfinite(value) or (p.minimum is not None and value < p.minimum)
                or (p.maximum is not None and value > p.maximum)
                or (p.multiple_of and value % p.multiple_of)):
            multiple = f" a multiple of {p.multiple_of}" if p.multiple_of else ""
            raise ValueError(f"{name} must be{multiple}{low}{' and' if low and high else ''}"
                             f"{high}, not {value!r}")
    return value


def memory_cap_bytes(device_memory_gib: float | None) -> int | None:
    """The run's device memory cap in bytes: the parameter, else $MBEBENCH_DEVICE_MEMORY_GIB,
    else None (all that is free)."""
    if device_memory_gib is None:
        env = (envvars.get(MEMORY_CAP_ENV) or "").strip()
        if not env:
            return None
        try:
            device_memory_gib = float(env)
        except ValueError:
            raise ValueError(f"{MEMORY_CAP_ENV} must be a number of GiB, not {env!r}") from None
    if not float(device_memory_gib) >= 0.01:
        raise ValueError(f"device_memory_gib must be at least 0.01, not {device_memory_gib!r}")
    return int(float(device_memory_gib) * 2**30)


def run_options(variant: str = "cuMBE", k: int = K_STAGES, blocks: int = 0, threads: int = 128,
                blocks_per_sm: int = 0, instrument: bool = False, side: str = "auto",
                device_memory_gib: float | None = None, eager_steal: int = 0,
                warp_arena_words: int = 0, idle_fraction: float | None = None,
                compact_layout: bool | None = None, shard: str = SHARD.default,
                rounds: bool = False, hub_divisor: int = HUB_DIVISOR) -> RunOptions:
    """A run's parameters checked once, against this spec (a ValueError naming the value):
    before anything is read, prepared or started, on one device or several."""
    from mbebench import shard as sharding

    if variant not in ABLATIONS:
        raise ValueError(f"unknown cuMBE variant {variant!r} (known: {', '.join(VARIANTS)})")
    if idle_fraction is None:  # (rounds is a reverse scan's, checked below)
        idle_fraction = IDLE_FRACTION_ROUNDS if rounds else 0.0
    if not 0.0 <= float(idle_fraction) < 1.0:
        raise ValueError("idle_fraction must be in [0, 1)")
    sharding.parse(shard)  # a bad shard fails before the preparation
    if rounds and not ABLATIONS[variant][0]:
        raise ValueError(f"rounds is a way to run the reverse scan: variant {variant} has none "
                         "(it scans its explicit Q); leave rounds off")
    threads = _limits("threads", threads)
    blocks_per_sm = _limits("blocks_per_sm", blocks_per_sm)
    if blocks_per_sm * threads > MAX_THREADS_PER_SM:
        raise ValueError(f"blocks_per_sm x threads must be at most {MAX_THREADS_PER_SM}, not "
                         f"{blocks_per_sm} x {threads}")
    return RunOptions(
        variant=variant, k=_limits("k", k), blocks=_limits("blocks", blocks),
        threads=threads, blocks_per_sm=blocks_per_sm, instrument=bool(instrument),
        side=_limits("side", side), device_memory_gib=device_memory_gib,
        eager_steal=int(eager_steal), warp_arena_words=int(warp_arena_words),
        idle_fraction=float(idle_fraction),
        compact_layout=None if compact_layout is None else bool(compact_layout), shard=shard,
        rounds=bool(rounds), hub_divisor=_limits("hub_divisor", hub_divisor),
        memory_cap=memory_cap_bytes(device_memory_gib))
