"""Serial iMBEA's engine spec (see :mod:`baselines.imbea`); imports no numba."""

from __future__ import annotations

from mbebench.side import side_param
from mbebench.spec import SHARD, EngineSpec

DEFAULT_SIDE = "auto"

SPEC = EngineSpec(
    name="imbea",
    title="iMBEA",
    entry="baselines.imbea:run",
    doc="Serial iMBEA (Zhang et al. 2014) in Numba; one CPU.",
    cpus=1,
    params=(
        side_param(DEFAULT_SIDE),
        SHARD,
    ),
)
