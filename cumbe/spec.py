"""cuMBE's engine spec: its parameters, their defaults and limits, and its variants.

The only place they are written; the config schema, the run plan, the CLI
(``python -m cumbe``) and the self-check take them from here.  Imports nothing
heavy (no numba): the Snakefile reads it on every start.
"""

from __future__ import annotations

from mbebench.spec import SHARD, EngineSpec, Param

from cumbe.variants import ABLATIONS, VARIANTS
# candidate side: auto (larger sum of squared degrees), smaller (the paper's rule), left, right
SIDES: tuple[str, ...] = ("auto", "smaller", "left", "right")
WARP = 32

SPEC = EngineSpec(
    name="cumbe",
    title="cuMBE",
    entry="cumbe.engine:run",
    doc="cuMBE on the GPU (Numba CUDA, one cooperative kernel). Snakemake gives a cuMBE run "
        "1 CPU and 1 GPU; 'threads' here are CUDA threads per block.",
    variant="variant",
    gpu=True,
    cpus=1,
    simulator_env={"NUMBA_ENABLE_CUDASIM": "1"},
    params=(
        Param("variant", str, VARIANTS, choices=VARIANTS, bare=True, key=True,
              aliases=("variants",),
              doc="cuMBE, or an ablation: noRS (no reverse scanning), noES (no early stop), "
                  "noWS (no work stealing)."),
        Param("k", int, 24, minimum=1,
              doc="Work-stealing stages (the paper's k-level stealing; the paper uses 2)."),
        Param("threads", int, 128, minimum=WARP, maximum=512, multiple_of=WARP,
              doc="CUDA threads per thread block (not CPU threads: a cuMBE run takes 1 CPU)."),
        Param("blocks", int, 0, minimum=0,
              doc="Thread blocks; 0 = the largest cooperative grid (1 in the simulator)."),
        Param("instrument", bool, (False, True), short="instr", key=True, untimed=True,
              doc="Instrumented build (per-block busy time and per-phase clocks for the "
                  "plots): it runs once, counts for agreement, and its times are not "
                  "cuMBE's times."),
        Param("side", str, "auto", choices=SIDES,
              doc="Candidate side: auto (larger sum of squared degrees), smaller (the "
                  "paper's rule), left or right."),
        Param("device_memory_gib", float, None, minimum=0.01, nullable=True,
              doc="Cap on the device memory the run may use, in GiB (e.g. 24 for an RTX "
                  "3090's share on a larger card); null = no cap (the CUMBE_DEVICE_MEMORY_GIB "
                  "environment variable may set one); the grid shrinks to fit it."),
        SHARD,
    ),
)
