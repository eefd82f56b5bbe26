"""Imported by the forkserver of ParMBE's pool (:mod:`baselines.parmbe_pool`), once: it
imports numba and ParMBE and compiles (or loads from numba's cache) every kernel there, so
that each worker, a fork of the server, starts with them loaded instead of importing and
loading them again, once per worker."""

from baselines.parmbe_plan import warm_up

try:
    WARM_S = warm_up(shard=False)
except Exception:  # noqa: BLE001 - each worker warms up again and reports what failed
    WARM_S = None
