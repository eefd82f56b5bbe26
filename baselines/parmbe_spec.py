"""ParMBE's engine spec (see :mod:`baselines.parmbe`); imports no numba."""

from __future__ import annotations

from mbebench.side import side_param
from mbebench.spec import SHARD, EngineSpec, Param

# the side U the problem is split on, ParMBE's name for the candidate side
DEFAULT_SIDE = "smaller"

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
        side_param(DEFAULT_SIDE),
        SHARD,
    ),
)
