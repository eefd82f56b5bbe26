"""ParMBE's engine spec (see :mod:`baselines.parmbe`); imports no numba."""

from __future__ import annotations

from mbebench.spec import SHARD, EngineSpec, Param

# side U the problem is split on: the smaller or larger side, or the CSR's left or right
SIDES: tuple[str, ...] = ("smaller", "larger", "left", "right")

SPEC = EngineSpec(
    name="parmbe",
    title="ParMBE",
    entry="baselines.parmbe:run",
    doc="ParMBE (Das et al. 2019) on Python multiprocessing + Numba; a run takes as many "
        "CPUs as processes.",
    cpus="processes",
    params=(
        Param("processes", int, (1, 2, 4, 8, 16), minimum=1, short="p", key=True,
              fit_cores=True,
              doc="Worker processes; counts above the machine's cores are dropped (the core "
                  "count if none fits)."),
        Param("side", str, SIDES[0], choices=SIDES,
              doc="Side the problem is split on: smaller, larger, left or right."),
        SHARD,
    ),
)
