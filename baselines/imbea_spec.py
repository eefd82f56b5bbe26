"""Serial iMBEA's engine spec (see :mod:`baselines.imbea`); imports no numba."""

from __future__ import annotations

from mbebench.spec import SHARD, EngineSpec, Param

# candidate side: auto (the cheaper first level, see imbea.choose_side), left or right
SIDES: tuple[str, ...] = ("auto", "left", "right")

SPEC = EngineSpec(
    name="imbea",
    title="iMBEA",
    entry="baselines.imbea:run",
    doc="Serial iMBEA (Zhang et al. 2014) in Numba; one CPU.",
    cpus=1,
    params=(
        Param("side", str, SIDES[0], choices=SIDES,
              doc="CSR side the candidates come from: auto, left or right."),
        SHARD,
    ),
)
